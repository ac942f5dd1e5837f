import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Fireworks AI: base URL, auth and documented differences from OpenAI (see docs/providers/fireworks.md). */
export const fireworksManifest: CompatibleProviderManifest = {
  id: 'fireworks',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['fireworks_ai'] },
  name: 'Fireworks AI',
  description: 'Fireworks AI inference (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://api.fireworks.ai/inference/v1',
  pricing: { catalogProvider: 'fireworks' },
  modelCatalogue: { catalogProvider: 'fireworks-ai' },
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  chat: {
    // Usage arrives in the last streamed chunk unasked.
    streamUsage: 'always',
  },
};

/** Fireworks AI inference (OpenAI-compatible chat and embeddings). */
export const fireworks = defineCompatibleProvider(fireworksManifest);
