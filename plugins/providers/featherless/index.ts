import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Featherless AI: base URL, auth and documented differences from OpenAI (see docs/providers/featherless.md). */
export const featherlessManifest: CompatibleProviderManifest = {
  id: 'featherless',
  name: 'Featherless AI',
  description: 'Featherless AI serverless inference of open models (OpenAI-compatible chat).',
  baseUrl: 'https://api.featherless.ai/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** Featherless AI serverless inference of open models (OpenAI-compatible chat). */
export const featherless = defineCompatibleProvider(featherlessManifest);
