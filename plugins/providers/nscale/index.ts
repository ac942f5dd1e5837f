import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Nscale: base URL, auth and documented differences from OpenAI (see docs/providers/nscale.md). */
export const nscaleManifest: CompatibleProviderManifest = {
  id: 'nscale',
  name: 'Nscale',
  description: 'Nscale serverless inference (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://inference.api.nscale.com/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Nscale serverless inference (OpenAI-compatible chat and embeddings). */
export const nscale = defineCompatibleProvider(nscaleManifest);
