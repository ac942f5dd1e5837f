import test from 'ava';
import { chatGoesAndMaps, providerUnit } from '../../../test/provider-unit.js';
import { inception } from './index.js';

const unit = providerUnit(inception());

test('chat goes to https://api.inceptionlabs.ai/v1/chat/completions with the key as Bearer; the recorded answer maps', (t) => {
  chatGoesAndMaps(t, unit, {
    model: 'mercury-2',
    url: 'https://api.inceptionlabs.ai/v1/chat/completions',
    content: 'A diffusion language model refines every token of its answer in parallel.',
    totalTokens: 32,
  });
});
