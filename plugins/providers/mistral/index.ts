import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Mistral AI: base URL, auth and documented differences from OpenAI (see docs/providers/mistral.md). */
export const mistralManifest: CompatibleProviderManifest = {
  id: 'mistral',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['mistral'] },
  name: 'Mistral AI',
  description: 'Mistral AI La Plateforme (chat and embeddings; FIM and other endpoints via pass-through).',
  baseUrl: 'https://api.mistral.ai/v1',
  pricing: { catalogProvider: 'mistral' },
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  chat: {
    // Mistral names the seed random_seed, knows only max_tokens, has no logit_bias, and
    // sends usage in its last streamed chunk without stream_options.
    renamedFields: { seed: 'random_seed' },
    maxTokensOnly: true,
    unsupportedFields: ['logit_bias'],
    streamUsage: 'always',
  },
};

/** Mistral AI La Plateforme (chat and embeddings; FIM and other endpoints via pass-through). */
export const mistral = defineCompatibleProvider(mistralManifest);
