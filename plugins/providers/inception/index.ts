import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Inception Mercury: base URL, auth and documented differences from OpenAI (see docs/providers/inception.md). */
export const inceptionManifest: CompatibleProviderManifest = {
  id: 'inception',
  name: 'Inception',
  description: 'Inception Mercury diffusion LLMs (OpenAI-compatible chat; /v1/fim and /v1/edit pass through).',
  baseUrl: 'https://api.inceptionlabs.ai/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
  foreignNames: { litellm: ['inception'] },
};

/** Inception Mercury diffusion LLMs (OpenAI-compatible chat; /v1/fim and /v1/edit pass through). */
export const inception = defineCompatibleProvider(inceptionManifest);
