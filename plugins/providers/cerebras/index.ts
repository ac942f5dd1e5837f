import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Cerebras: base URL, auth and documented differences from OpenAI (see docs/providers/cerebras.md). */
export const cerebrasManifest: CompatibleProviderManifest = {
  id: 'cerebras',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['cerebras'] },
  name: 'Cerebras',
  description: 'Cerebras inference (OpenAI-compatible chat).',
  baseUrl: 'https://api.cerebras.ai/v1',
  pricing: { catalogProvider: 'cerebras' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
  chat: {
    // Documented as unsupported: requests carrying them are refused.
    n: false,
    unsupportedFields: ['frequency_penalty', 'presence_penalty', 'logit_bias'],
  },
};

/** Cerebras inference (OpenAI-compatible chat). */
export const cerebras = defineCompatibleProvider(cerebrasManifest);
