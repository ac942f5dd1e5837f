import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Nebius AI Studio: base URL, auth and documented differences from OpenAI (see docs/providers/nebius.md). */
export const nebiusManifest: CompatibleProviderManifest = {
  id: 'nebius',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['nebius'] },
  name: 'Nebius AI Studio',
  description: 'Nebius AI Studio inference (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://api.studio.nebius.com/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Nebius AI Studio inference (OpenAI-compatible chat and embeddings). */
export const nebius = defineCompatibleProvider(nebiusManifest);
