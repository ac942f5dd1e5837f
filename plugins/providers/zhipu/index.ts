import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Zhipu AI (BigModel): base URL, auth and documented differences from OpenAI (see docs/providers/zhipu.md). */
export const zhipuManifest: CompatibleProviderManifest = {
  id: 'zhipu',
  name: 'Zhipu AI (BigModel)',
  description: 'Zhipu AI BigModel open platform (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://open.bigmodel.cn/api/paas/v4',
  pricing: { catalogProvider: 'zhipuai' },
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Zhipu AI BigModel open platform (OpenAI-compatible chat and embeddings). */
export const zhipu = defineCompatibleProvider(zhipuManifest);
