import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Parasail: base URL, auth and documented differences from OpenAI (see docs/providers/parasail.md). */
export const parasailManifest: CompatibleProviderManifest = {
  id: 'parasail',
  name: 'Parasail',
  description: 'Parasail serverless inference (OpenAI-compatible chat).',
  baseUrl: 'https://api.parasail.io/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** Parasail serverless inference (OpenAI-compatible chat). */
export const parasail = defineCompatibleProvider(parasailManifest);
