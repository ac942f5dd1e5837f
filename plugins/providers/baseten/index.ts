import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Baseten Model APIs: base URL, auth and documented differences from OpenAI (see docs/providers/baseten.md). */
export const basetenManifest: CompatibleProviderManifest = {
  id: 'baseten',
  name: 'Baseten Model APIs',
  description: 'Baseten Model APIs (OpenAI-compatible chat).',
  baseUrl: 'https://inference.baseten.co/v1',
  pricing: { catalogProvider: 'baseten' },
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** Baseten Model APIs (OpenAI-compatible chat). */
export const baseten = defineCompatibleProvider(basetenManifest);
