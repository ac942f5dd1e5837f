import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** xAI: base URL, auth and documented differences from OpenAI (see docs/providers/xai.md). */
export const xaiManifest: CompatibleProviderManifest = {
  id: 'xai',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['xai'] },
  name: 'xAI',
  description: 'xAI Grok API (OpenAI-compatible chat).',
  baseUrl: 'https://api.x.ai/v1',
  pricing: { catalogProvider: 'x-ai' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** xAI Grok API (OpenAI-compatible chat). */
export const xai = defineCompatibleProvider(xaiManifest);
