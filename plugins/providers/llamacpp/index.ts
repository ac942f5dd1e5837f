import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** llama.cpp server: base URL, auth and documented differences from OpenAI (see docs/providers/llamacpp.md). */
export const llamacppManifest: CompatibleProviderManifest = {
  id: 'llamacpp',
  name: 'llama.cpp server',
  description: 'A llama.cpp llama-server (default loopback, or x-gateway-custom-host).',
  baseUrl: 'http://127.0.0.1:8080/v1',
  operations: ['chat', 'embed', 'rerank'],
  auth: { kind: 'bearer' },
  chat: {
    // llama-server refuses n > 1 ("Only one completion choice is allowed").
    n: false,
  },
};

/** A llama.cpp llama-server (default loopback, or x-gateway-custom-host). */
export const llamacpp = defineCompatibleProvider(llamacppManifest);
