import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Ollama: base URL, auth and documented differences from OpenAI (see docs/providers/ollama.md). */
export const ollamaManifest: CompatibleProviderManifest = {
  id: 'ollama',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['ollama', 'ollama_chat'] },
  name: 'Ollama',
  description: "An Ollama server's OpenAI-compatible API (default loopback); its native /api/* via pass-through.",
  baseUrl: 'http://127.0.0.1:11434/v1',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  chat: {
    // Not among the request fields Ollama's compatibility layer reads.
    n: false,
    unsupportedFields: ['logit_bias'],
  },
  // Ollama's native API sits beside /v1: the client's /v1/api/chat goes to <host>/api/chat.
  passthroughUrl: (pathAndQuery, baseUrl) => (pathAndQuery.startsWith('/api/') ? baseUrl.replace(/\/v1$/, '') + pathAndQuery : undefined),
};

/** An Ollama server's OpenAI-compatible API (default loopback); its native /api/* via pass-through. */
export const ollama = defineCompatibleProvider(ollamaManifest);
