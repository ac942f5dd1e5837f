import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** SiliconFlow: base URL, auth and documented differences from OpenAI (see docs/providers/siliconflow.md). */
export const siliconflowManifest: CompatibleProviderManifest = {
  id: 'siliconflow',
  name: 'SiliconFlow',
  description: 'SiliconFlow inference (OpenAI-compatible chat, embeddings and rerank).',
  baseUrl: 'https://api.siliconflow.com/v1',
  operations: ['chat', 'embed', 'rerank'],
  auth: { kind: 'bearer' },
};

/** SiliconFlow inference (OpenAI-compatible chat, embeddings and rerank). */
export const siliconflow = defineCompatibleProvider(siliconflowManifest);
