import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Upstage Solar: base URL, auth and documented differences from OpenAI (see docs/providers/upstage.md). */
export const upstageManifest: CompatibleProviderManifest = {
  id: 'upstage',
  name: 'Upstage',
  description: 'Upstage Solar chat and embeddings (OpenAI-compatible).',
  baseUrl: 'https://api.upstage.ai/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Upstage Solar chat and embeddings (OpenAI-compatible). */
export const upstage = defineCompatibleProvider(upstageManifest);
