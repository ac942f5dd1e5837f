import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** OpenRouter: base URL, auth and documented differences from OpenAI (see docs/providers/openrouter.md). */
export const openrouterManifest: CompatibleProviderManifest = {
  id: 'openrouter',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['openrouter'] },
  name: 'OpenRouter',
  description: 'OpenRouter model router (OpenAI-compatible chat); attribution headers via params.headers.',
  baseUrl: 'https://openrouter.ai/api/v1',
  pricing: { catalogProvider: 'openrouter' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
  chat: {
    n: false,
  },
};

/** OpenRouter model router (OpenAI-compatible chat); attribution headers via params.headers. */
export const openrouter = defineCompatibleProvider(openrouterManifest);
