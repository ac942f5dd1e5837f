import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Volcengine Ark: base URL, auth and documented differences from OpenAI (see docs/providers/volcengine-ark.md). */
export const volcengineArkManifest: CompatibleProviderManifest = {
  id: 'volcengine-ark',
  name: 'Volcengine Ark',
  description: 'Volcengine Ark (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://ark.cn-beijing.volces.com/api/v3',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Volcengine Ark (OpenAI-compatible chat and embeddings). */
export const volcengineArk = defineCompatibleProvider(volcengineArkManifest);
