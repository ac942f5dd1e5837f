import test from 'ava';
import type { ProviderTarget } from '../../../core/spec/index.js';
import { bedrockRerank } from './bedrock-rerank.js';

const adapter = bedrockRerank((headers) => headers['x-gateway-cloud-c-region'] ?? 'us-east-1');
const target = (overrides: Partial<ProviderTarget> = {}): ProviderTarget => ({
  baseUrl: 'https://bedrock-runtime.eu-central-1.amazonaws.com',
  customHost: false,
  headers: { 'x-gateway-cloud-c-region': 'eu-central-1' },
  credentials: { apiKey: 'AKIDEXAMPLE' },
  strict: true,
  ...overrides,
});

test('Rerank goes to the Agents runtime of the region with a foundation-model ARN, inline text sources and numberOfResults', (t) => {
  const upstream = adapter.toUpstream({ model: 'amazon.rerank-v1:0', query: 'capital?', documents: ['a', { text: 'b' }], top_n: 5 }, target());
  t.is(upstream.url, 'https://bedrock-agent-runtime.eu-central-1.amazonaws.com/rerank');
  t.deepEqual(JSON.parse(String(upstream.body)), {
    queries: [{ type: 'TEXT', textQuery: { text: 'capital?' } }],
    sources: [
      { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'a' } } },
      { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'b' } } },
    ],
    rerankingConfiguration: {
      type: 'BEDROCK_RERANKING_MODEL',
      bedrockRerankingConfiguration: { modelConfiguration: { modelArn: 'arn:aws:bedrock:eu-central-1::foundation-model/amazon.rerank-v1:0' }, numberOfResults: 2 },
    },
  });
});

test('a model ARN is sent as given; a custom host is used as it is; the answer maps relevanceScore', (t) => {
  const arn = 'arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0';
  const upstream = adapter.toUpstream({ model: arn, query: 'q', documents: ['a'] }, target({ baseUrl: 'http://127.0.0.1:9/v1', customHost: true }));
  t.is(upstream.url, 'http://127.0.0.1:9/v1/rerank');
  const body = JSON.parse(String(upstream.body));
  t.is(body.rerankingConfiguration.bedrockRerankingConfiguration.modelConfiguration.modelArn, arn);
  t.false('numberOfResults' in body.rerankingConfiguration.bedrockRerankingConfiguration);
  const mapped = adapter.fromUpstream({ results: [{ index: 0, relevanceScore: 0.25, document: { type: 'TEXT', textDocument: { text: 'a' } } }] }, { model: arn, query: 'q', documents: ['a'] }, target());
  t.deepEqual(mapped, { model: arn, results: [{ index: 0, relevance_score: 0.25 }] });
});
