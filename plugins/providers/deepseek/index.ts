import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** DeepSeek: base URL, auth and documented differences from OpenAI (see docs/providers/deepseek.md). */
export const deepseekManifest: CompatibleProviderManifest = {
  id: 'deepseek',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['deepseek'] },
  name: 'DeepSeek',
  description: 'DeepSeek API (OpenAI-compatible chat).',
  baseUrl: 'https://api.deepseek.com',
  pricing: { catalogProvider: 'deepseek' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
  chat: {
    // n and logit_bias are not in DeepSeek's request schema.
    n: false,
    unsupportedFields: ['logit_bias'],
  },
};

/** DeepSeek API (OpenAI-compatible chat). */
export const deepseek = defineCompatibleProvider(deepseekManifest);
