import test from 'ava';
import { chatGoesAndMaps, providerUnit } from '../../../test/provider-unit.js';
import { parasail } from './index.js';

const unit = providerUnit(parasail());

test('chat goes to https://api.parasail.io/v1/chat/completions with the key as Bearer; the recorded answer maps', (t) => {
  chatGoesAndMaps(t, unit, {
    model: 'parasail-llama-33-70b-fp8',
    url: 'https://api.parasail.io/v1/chat/completions',
    content: 'Parasail serves open-weight models on rented GPUs.',
    totalTokens: 27,
  });
});
