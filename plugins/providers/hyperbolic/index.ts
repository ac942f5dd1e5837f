import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Hyperbolic: base URL, auth and documented differences from OpenAI (see docs/providers/hyperbolic.md). */
export const hyperbolicManifest: CompatibleProviderManifest = {
  id: 'hyperbolic',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['hyperbolic'] },
  name: 'Hyperbolic',
  description: 'Hyperbolic inference (OpenAI-compatible chat).',
  baseUrl: 'https://api.hyperbolic.xyz/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** Hyperbolic inference (OpenAI-compatible chat). */
export const hyperbolic = defineCompatibleProvider(hyperbolicManifest);
