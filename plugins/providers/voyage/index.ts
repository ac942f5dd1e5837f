import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Voyage AI: base URL, auth and documented differences from OpenAI (see docs/providers/voyage.md). */
export const voyageManifest: CompatibleProviderManifest = {
  id: 'voyage',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['voyage'] },
  name: 'Voyage AI',
  description: 'Voyage AI embeddings and reranker APIs.',
  baseUrl: 'https://api.voyageai.com/v1',
  pricing: { catalogProvider: 'voyageai' },
  operations: ['embed', 'rerank'],
  auth: { kind: 'bearer' },
  embed: {
    // Voyage names dimensions output_dimension and takes encoding_format only as null or base64.
    renamedFields: { dimensions: 'output_dimension' },
    dropFloatEncoding: true,
  },
  rerank: {
    // Voyage names top_n top_k and answers its results in data.
    renamedFields: { top_n: 'top_k' },
    resultsField: 'data',
  },
};

/** Voyage AI embeddings and reranker APIs. */
export const voyage = defineCompatibleProvider(voyageManifest);
