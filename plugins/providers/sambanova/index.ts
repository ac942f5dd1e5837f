import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** SambaNova: base URL, auth and documented differences from OpenAI (see docs/providers/sambanova.md). */
export const sambanovaManifest: CompatibleProviderManifest = {
  id: 'sambanova',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['sambanova'] },
  name: 'SambaNova',
  description: 'SambaNova Cloud (OpenAI-compatible chat).',
  baseUrl: 'https://api.sambanova.ai/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
  chat: {
    n: false,
    unsupportedFields: ['logit_bias'],
  },
};

/** SambaNova Cloud (OpenAI-compatible chat). */
export const sambanova = defineCompatibleProvider(sambanovaManifest);
