import test from 'ava';
import type { EmbeddingResponse } from '../../../core/spec/index.js';
import { chatGoesAndMaps, providerUnit } from '../../../test/provider-unit.js';
import { upstage } from './index.js';

const unit = providerUnit(upstage());
const { plugin, target, fixture } = unit;

test('chat goes to https://api.upstage.ai/v1/chat/completions with the key as Bearer; the recorded answer maps', (t) => {
  chatGoesAndMaps(t, unit, {
    model: 'solar-pro2',
    url: 'https://api.upstage.ai/v1/chat/completions',
    content: 'Solar is a family of large language models built by Upstage.',
    totalTokens: 32,
  });
});

test('embeddings go to /v1/embeddings; the recorded answer maps', (t) => {
  const upstream = plugin.operations.embed!.toUpstream({ model: 'embedding-query', input: 'Hello' }, target);
  t.is(upstream.url, 'https://api.upstage.ai/v1/embeddings');
  const answer = plugin.operations.embed!.fromUpstream(fixture('embeddings-response.json'), { model: 'embedding-query', input: 'Hello' }, target) as EmbeddingResponse;
  t.deepEqual(answer.data[0].embedding, [0.0123, -0.0456, 0.0789]);
  t.is(answer.usage.prompt_tokens, 5);
});
