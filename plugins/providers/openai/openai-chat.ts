import type { ChatAdapter, ChatCompletionChunk, ChatResponse } from '../../../core/spec/index.js';
import { openAIStreamablePost } from './openai-body.js';
import { createOpenAIStreamMapper } from './openai-stream.js';

/**
 * OpenAI chat: the unified API is OpenAI's own, so the request goes up as sent, byte for byte
 * (unknown fields included), except that streams always ask for usage (see `openAIStreamablePost`).
 */
export const openAIChat: ChatAdapter = {
  toUpstream: (request, target, original) => openAIStreamablePost('/chat/completions', request, target, original),

  fromUpstream(body) {
    const response = body as ChatResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.choices)) {
      throw new TypeError('OpenAI chat response without choices');
    }
    return response;
  },

  stream: {
    createMapper: () => createOpenAIStreamMapper<ChatCompletionChunk>(),
  },
};
