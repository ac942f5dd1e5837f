import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** LiteLLM proxy: base URL, auth and documented differences from OpenAI (see docs/providers/litellm.md). */
export const litellmManifest: CompatibleProviderManifest = {
  id: 'litellm',
  name: 'LiteLLM proxy',
  description: 'A LiteLLM proxy as an upstream (self-hosted; default loopback, or x-gateway-custom-host).',
  baseUrl: 'http://127.0.0.1:4000/v1',
  operations: ['chat', 'embed', 'rerank'],
  auth: { kind: 'bearer' },
};

/** A LiteLLM proxy as an upstream (self-hosted; default loopback, or x-gateway-custom-host). */
export const litellm = defineCompatibleProvider(litellmManifest);
