import test from 'ava';
import type { EmbeddingResponse, RerankResponse } from '../../../core/spec/index.js';
import { providerUnit } from '../../../test/provider-unit.js';
import { mixedbread } from './index.js';

const { plugin, target, fixture } = providerUnit(mixedbread());

test('embeddings go to /v1/embeddings with the key as Bearer; the recorded answer maps', (t) => {
  const request = { model: 'mixedbread-ai/mxbai-embed-large-v1', input: ['a', 'b'] };
  const upstream = plugin.operations.embed!.toUpstream(request, target);
  t.is(upstream.url, 'https://api.mixedbread.com/v1/embeddings');
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer test-key' });
  const answer = plugin.operations.embed!.fromUpstream(fixture('embeddings-response.json'), request, target) as EmbeddingResponse;
  t.deepEqual(answer.data.map((item) => item.index), [0, 1]);
  t.is(answer.usage.total_tokens, 6);
});

test("rerank goes to /v1/reranking with Mixedbread's field names; scores come from data[].score", (t) => {
  const request = { model: 'mixedbread-ai/mxbai-rerank-large-v2', query: 'bread', documents: ['a', 'b', 'c', 'd'], top_n: 3, return_documents: true };
  const upstream = plugin.operations.rerank!.toUpstream(request, target);
  t.is(upstream.url, 'https://api.mixedbread.com/v1/reranking');
  t.deepEqual(JSON.parse(String(upstream.body)), { model: 'mixedbread-ai/mxbai-rerank-large-v2', query: 'bread', input: ['a', 'b', 'c', 'd'], top_k: 3 });
  const answer = plugin.operations.rerank!.fromUpstream(fixture('rerank-response.json'), request, target) as RerankResponse;
  t.deepEqual(answer.results, [
    { index: 0, relevance_score: 0.98291015625 },
    { index: 2, relevance_score: 0.61962890625 },
    { index: 3, relevance_score: 0.3642578125 },
  ]);
  t.deepEqual(answer.usage, { prompt_tokens: 162, total_tokens: 162 });
});
