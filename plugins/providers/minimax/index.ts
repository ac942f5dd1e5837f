import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** MiniMax: base URL, auth and documented differences from OpenAI (see docs/providers/minimax.md). */
export const minimaxManifest: CompatibleProviderManifest = {
  id: 'minimax',
  name: 'MiniMax',
  description: 'MiniMax (OpenAI-compatible chat).',
  baseUrl: 'https://api.minimax.io/v1',
  pricing: { catalogProvider: 'minimax' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** MiniMax (OpenAI-compatible chat). */
export const minimax = defineCompatibleProvider(minimaxManifest);
