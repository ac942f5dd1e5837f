import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Scaleway Generative APIs: base URL, auth and documented differences from OpenAI (see docs/providers/scaleway.md). */
export const scalewayManifest: CompatibleProviderManifest = {
  id: 'scaleway',
  name: 'Scaleway Generative APIs',
  description: 'Scaleway Generative APIs (OpenAI-compatible chat and embeddings, hosted in Europe).',
  baseUrl: 'https://api.scaleway.ai/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Scaleway Generative APIs (OpenAI-compatible chat and embeddings, hosted in Europe). */
export const scaleway = defineCompatibleProvider(scalewayManifest);
