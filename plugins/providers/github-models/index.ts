import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** GitHub Models: base URL, auth and documented differences from OpenAI (see docs/providers/github-models.md). */
export const githubModelsManifest: CompatibleProviderManifest = {
  id: 'github-models',
  name: 'GitHub Models',
  description: 'GitHub Models inference (OpenAI-compatible chat; a GitHub token with the models scope).',
  baseUrl: 'https://models.github.ai/inference',
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** GitHub Models inference (OpenAI-compatible chat; a GitHub token with the models scope). */
export const githubModels = defineCompatibleProvider(githubModelsManifest);
