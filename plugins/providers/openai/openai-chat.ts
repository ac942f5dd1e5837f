import type { ChatAdapter, ChatResponse } from '../../../core/spec/index.js';
import { createOpenAIStreamMapper } from './openai-stream.js';

/**
 * OpenAI chat: the unified API is OpenAI's own, so the request goes up as sent, byte for byte
 * (unknown fields included), except that streams always ask for usage, which the gateway needs for its log; the
 * gateway drops the usage chunk again when the client did not ask for it.
 */
export const openAIChat: ChatAdapter = {
  toUpstream(request, target, original) {
    const unchanged = !request.stream || request.stream_options?.include_usage === true;
    const body =
      unchanged && original
        ? original
        : JSON.stringify(request.stream ? { ...request, stream_options: { ...request.stream_options, include_usage: true } } : request);
    return { method: 'POST', url: `${target.baseUrl}/chat/completions`, headers: { 'content-type': 'application/json' }, body };
  },

  fromUpstream(body) {
    const response = body as ChatResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.choices)) {
      throw new TypeError('OpenAI chat response without choices');
    }
    return response;
  },

  stream: {
    createMapper: () => createOpenAIStreamMapper(),
  },
};
