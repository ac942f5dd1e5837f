import type { ChatAdapter } from '../../../core/spec/index.js';
import { checkAnthropicRequest, type AnthropicRequestOptions, toAnthropicBody } from './anthropic-chat-request.js';
import { fromAnthropicResponse } from './anthropic-chat-response.js';
import { createAnthropicStreamMapper } from './anthropic-stream.js';

/** Anthropic Messages API chat (`POST /messages`), plain and streamed. */
export function anthropicChat(options: AnthropicRequestOptions): ChatAdapter {
  return {
    validate: checkAnthropicRequest,
    toUpstream(request, target) {
      return {
        method: 'POST',
        url: `${target.baseUrl}/messages`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(toAnthropicBody(request, options)),
      };
    },
    fromUpstream: fromAnthropicResponse,
    stream: { createMapper: createAnthropicStreamMapper },
  };
}
