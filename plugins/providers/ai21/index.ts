import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** AI21 Labs Jamba: base URL, auth and documented differences from OpenAI (see docs/providers/ai21.md). */
export const ai21Manifest: CompatibleProviderManifest = {
  id: 'ai21',
  name: 'AI21 Labs',
  description: 'AI21 Labs Jamba chat (OpenAI-shaped chat completions: tools, JSON mode, documents).',
  baseUrl: 'https://api.ai21.com/studio/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
  // The request fields AI21 documents are model, messages, tools, documents, response_format,
  // max_tokens, temperature, top_p, stop, n and stream: no stream_options (usage rides on the
  // stream's chunks unasked) and no max_completion_tokens.
  chat: { streamUsage: 'always', maxTokensOnly: true },
  foreignNames: { litellm: ['ai21_chat', 'ai21'] },
};

/** AI21 Labs Jamba chat. */
export const ai21 = defineCompatibleProvider(ai21Manifest);
