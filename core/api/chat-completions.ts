import { readBody, parseJsonObject } from '../http/body.js';
import { chatAnswerText } from './answer-text.js';
import type { ChatRequest } from '../spec/unified.js';
import type { ProviderPlugin } from '../spec/provider.js';
import { validateChatRequest } from './chat-schema.js';
import { chatStreamShape, completionAsStream } from './chat-stream.js';
import { strictChatResponse } from './chat-strict.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { respondStreamable } from './streamed-response.js';

/**
 * The request with `developer` messages sent as `system` when the provider does not know that role
 * for the model (then the original bytes no longer apply); the request itself otherwise.
 */
export function withProviderRoles(request: ChatRequest, provider: ProviderPlugin): ChatRequest {
  if (provider.capabilities?.developerRole?.(request.model) !== false || !request.messages.some((message) => message.role === 'developer')) return request;
  return { ...request, messages: request.messages.map((message) => (message.role === 'developer' ? { ...message, role: 'system' as const } : message)) };
}

/** `POST /v1/chat/completions`: plain and streamed. */
export const chatCompletions: OperationHandler = {
  name: 'chat',
  mapsErrors: true,

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const body = validateChatRequest(parseJsonObject(raw), options.strict);
    return { body, raw, model: body.model, streaming: body.stream === true };
  },

  toUpstream(context, provider, target) {
    const adapter = provider.operations.chat;
    if (!adapter || (context.request.streaming && !adapter.stream)) throw unsupportedOperation(provider.id, 'chat', 'POST /v1/chat/completions');
    const request = context.request.body as ChatRequest;
    adapter.validate?.(request);
    const sent = withProviderRoles(request, provider);
    return sent === request ? adapter.toUpstream(request, target, context.request.raw) : adapter.toUpstream(sent, target);
  },

  respond: (context, provider, forward) =>
    respondStreamable(context, provider, forward, provider.operations.chat, {
      shape: chatStreamShape,
      strictResponse: strictChatResponse,
      asStream: completionAsStream,
      text: chatAnswerText,
    }),
};
