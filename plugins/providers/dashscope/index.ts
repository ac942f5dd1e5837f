import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Alibaba Cloud DashScope: base URL, auth and documented differences from OpenAI (see docs/providers/dashscope.md). */
export const dashscopeManifest: CompatibleProviderManifest = {
  id: 'dashscope',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['dashscope'] },
  name: 'Alibaba Cloud DashScope',
  description: 'Alibaba Cloud Model Studio (DashScope) compatible mode: Qwen chat and embeddings.',
  baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
  modelCatalogue: { catalogProvider: 'alibaba' },
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
};

/** Alibaba Cloud Model Studio (DashScope) compatible mode: Qwen chat and embeddings. */
export const dashscope = defineCompatibleProvider(dashscopeManifest);
