import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** Writer Palmyra: base URL, auth and documented differences from OpenAI (see docs/providers/writer.md). */
export const writerManifest: CompatibleProviderManifest = {
  id: 'writer',
  name: 'Writer',
  description: 'Writer Palmyra chat (OpenAI-shaped chat at /v1/chat).',
  baseUrl: 'https://api.writer.com/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
  // Writer's chat endpoint is /v1/chat, not /v1/chat/completions; its SDK documents max_tokens only.
  paths: { chat: '/chat' },
  chat: { maxTokensOnly: true },
};

/** Writer Palmyra chat (OpenAI-shaped chat at /v1/chat). */
export const writer = defineCompatibleProvider(writerManifest);
