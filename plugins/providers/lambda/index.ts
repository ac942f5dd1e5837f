import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Lambda: base URL, auth and documented differences from OpenAI (see docs/providers/lambda.md). */
export const lambdaManifest: CompatibleProviderManifest = {
  id: 'lambda',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['lambda_ai'] },
  name: 'Lambda',
  description: 'Lambda inference API (OpenAI-compatible chat).',
  baseUrl: 'https://api.lambda.ai/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

/** Lambda inference API (OpenAI-compatible chat). */
export const lambda = defineCompatibleProvider(lambdaManifest);
