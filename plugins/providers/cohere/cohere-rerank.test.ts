import test from 'ava';
import type { ProviderTarget } from '../../../core/spec/index.js';
import { rankedAnswer } from '../../../core/api/rerank.js';
import { cohereFixture } from './cohere-fake.js';
import { cohereRerank } from './cohere-rerank.js';

const target: ProviderTarget = { baseUrl: 'https://api.cohere.com/v2', customHost: false, headers: {}, credentials: { apiKey: 'co-key' }, strict: true };
const documents = ['Carson City', 'Saipan', 'Capitalization', { text: 'Washington, D.C.', url: 'https://example.org/dc' }, 'Capital punishment'];

test('Rerank v2: texts up, unknown fields and return_documents kept home; the recorded answer maps to results and search units', (t) => {
  const request = { model: 'rerank-v3.5', query: 'What is the capital of the United States?', documents, top_n: 3, return_documents: true, max_tokens_per_doc: 4096, user: 'u' };
  const upstream = cohereRerank.toUpstream(request, target);
  t.is(upstream.url, 'https://api.cohere.com/v2/rerank');
  t.deepEqual(JSON.parse(String(upstream.body)), { model: 'rerank-v3.5', query: request.query, documents: ['Carson City', 'Saipan', 'Capitalization', 'Washington, D.C.', 'Capital punishment'], top_n: 3, max_tokens_per_doc: 4096 });
  const mapped = cohereRerank.fromUpstream(JSON.parse(cohereFixture('rerank-response.json')), request, target);
  t.deepEqual(mapped, {
    id: '07734bd2-2473-4f07-94e1-0d9f0e6843cf',
    model: 'rerank-v3.5',
    results: [
      { index: 3, relevance_score: 0.999071 },
      { index: 4, relevance_score: 0.7867867 },
      { index: 0, relevance_score: 0.32713068 },
    ],
    usage: { search_units: 1 },
  });
  // The core's ordering and documents on top of the provider's answer.
  t.deepEqual(rankedAnswer(mapped, { ...request, top_n: 2 }).results, [
    { index: 3, relevance_score: 0.999071, document: documents[3] },
    { index: 4, relevance_score: 0.7867867, document: { text: 'Capital punishment' } },
  ]);
});

test('an answer whose result names no document of the request is refused as the provider fault', (t) => {
  const request = { model: 'rerank-v3.5', query: 'q', documents: ['only one'] };
  t.throws(() => rankedAnswer({ model: 'rerank-v3.5', results: [{ index: 3, relevance_score: 0.5 }] }, request), { instanceOf: TypeError });
  t.throws(() => cohereRerank.fromUpstream({ id: 'x' }, request, target), { instanceOf: TypeError });
});
