import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Mixedbread: base URL, auth and documented differences from OpenAI (see docs/providers/mixedbread.md). */
export const mixedbreadManifest: CompatibleProviderManifest = {
  id: 'mixedbread',
  name: 'Mixedbread',
  description: 'Mixedbread embeddings and reranking (OpenAI-shaped embeddings; /v1/reranking).',
  baseUrl: 'https://api.mixedbread.com/v1',
  operations: ['embed', 'rerank'],
  auth: { kind: 'bearer' },
  paths: { rerank: '/reranking' },
  rerank: {
    // Mixedbread's reranking takes the documents as input and top_n as top_k, and answers scores in data[].score.
    renamedFields: { documents: 'input', top_n: 'top_k' },
    resultsField: 'data',
    scoreField: 'score',
  },
};

/** Mixedbread embeddings and reranking (OpenAI-shaped embeddings; /v1/reranking). */
export const mixedbread = defineCompatibleProvider(mixedbreadManifest);
