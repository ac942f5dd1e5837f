import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** LM Studio: base URL, auth and documented differences from OpenAI (see docs/providers/lmstudio.md). */
export const lmstudioManifest: CompatibleProviderManifest = {
  id: 'lmstudio',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['lm_studio'] },
  name: 'LM Studio',
  description: 'An LM Studio local server (default loopback, or x-gateway-custom-host).',
  baseUrl: 'http://127.0.0.1:1234/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  chat: {
    n: false,
  },
};

/** An LM Studio local server (default loopback, or x-gateway-custom-host). */
export const lmstudio = defineCompatibleProvider(lmstudioManifest);
