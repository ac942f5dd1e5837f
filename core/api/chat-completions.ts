import { readBody, parseJsonObject } from '../http/body.js';
import { chatAnswerText } from './answer-text.js';
import { refusedContentPart } from '../spec/content-parts.js';
import type { ChatRequest } from '../spec/unified.js';
import { validateChatRequest } from './chat-schema.js';
import { chatStreamShape, completionAsStream } from './chat-stream.js';
import { strictChatResponse } from './chat-strict.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { respondStreamable } from './streamed-response.js';

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
    // Parts beyond text and images reach only a provider that declared them (issue 17).
    const refused = refusedContentPart(request.messages, provider.id, provider.capabilities?.contentParts?.(request.model) ?? {});
    if (refused) throw refused;
    adapter.validate?.(request);
    if (provider.capabilities?.developerRole?.(request.model) === false && request.messages.some((message) => message.role === 'developer')) {
      // The provider does not know the developer role: it becomes system, so the original bytes no longer apply.
      const messages = request.messages.map((message) => (message.role === 'developer' ? { ...message, role: 'system' as const } : message));
      return adapter.toUpstream({ ...request, messages }, target);
    }
    return adapter.toUpstream(request, target, context.request.raw);
  },

  respond: (context, provider, forward) =>
    respondStreamable(context, provider, forward, provider.operations.chat, {
      shape: chatStreamShape,
      strictResponse: strictChatResponse,
      asStream: completionAsStream,
      text: chatAnswerText,
    }),
};
