import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Moonshot AI: base URL, auth and documented differences from OpenAI (see docs/providers/moonshot.md). */
export const moonshotManifest: CompatibleProviderManifest = {
  id: 'moonshot',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['moonshot'] },
  name: 'Moonshot AI',
  description: 'Moonshot AI Kimi API (OpenAI-compatible chat).',
  baseUrl: 'https://api.moonshot.ai/v1',
  pricing: { catalogProvider: 'moonshotai' },
  modelCatalogue: { catalogProvider: 'moonshotai' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** Moonshot AI Kimi API (OpenAI-compatible chat). */
export const moonshot = defineCompatibleProvider(moonshotManifest);
