import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Together AI: base URL, auth and documented differences from OpenAI (see docs/providers/together.md). */
export const togetherManifest: CompatibleProviderManifest = {
  id: 'together',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['together_ai'] },
  name: 'Together AI',
  description: 'Together AI inference (OpenAI-compatible chat and embeddings, Cohere-compatible rerank).',
  baseUrl: 'https://api.together.xyz/v1',
  pricing: { catalogProvider: 'together' },
  modelCatalogue: { catalogProvider: 'togetherai' },
  operations: ['chat', 'embed', 'rerank'],
  auth: { kind: 'bearer' },
  chat: {
    // Usage arrives in the last streamed chunk unasked.
    streamUsage: 'always',
  },
};

/** Together AI inference (OpenAI-compatible chat and embeddings, Cohere-compatible rerank). */
export const together = defineCompatibleProvider(togetherManifest);
