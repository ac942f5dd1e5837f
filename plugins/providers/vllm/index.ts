import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** vLLM: base URL, auth and documented differences from OpenAI (see docs/providers/vllm.md). */
export const vllmManifest: CompatibleProviderManifest = {
  id: 'vllm',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['hosted_vllm'] },
  name: 'vLLM',
  description: 'A vLLM OpenAI-compatible server (self-hosted; default loopback, or x-gateway-custom-host).',
  baseUrl: 'http://127.0.0.1:8000/v1',
  operations: ['chat', 'embed', 'rerank'],
  auth: { kind: 'bearer' },
};

/** A vLLM OpenAI-compatible server (self-hosted; default loopback, or x-gateway-custom-host). */
export const vllm = defineCompatibleProvider(vllmManifest);
