import { readBody, parseJsonObject } from '../http/body.js';
import { isRecord } from '../spec/is-record.js';
import { chatAnswerText } from './answer-text.js';
import { refusedContentPart } from '../spec/content-parts.js';
import type { ChatCompletionChunk, ChatRequest, ChatResponse } from '../spec/unified.js';
import type { ProviderPlugin } from '../spec/provider.js';
import { requestParameters, requestTexts, rewriteRequest } from '../guardrails/chat-texts.js';
import { validateChatRequest } from './chat-schema.js';
import { chatStreamShape, completionAsStream } from './chat-stream.js';
import { strictChatResponse } from './chat-strict.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { ChatAssembly } from './stream-assembly.js';
import { streamableCache } from './streamable-cache.js';
import { respondStreamable, type StreamableOperation } from './streamed-response.js';

const chatStreaming: StreamableOperation<ChatResponse, ChatCompletionChunk> = {
  shape: chatStreamShape,
  strictResponse: strictChatResponse,
  asStream: completionAsStream,
  text: chatAnswerText,
};

/** A message's text for a semantic lookup: string content or text parts; undefined when it carries more (images, tool calls). */
function messageText(message: unknown): string | undefined {
  if (!isRecord(message) || message.tool_calls !== undefined || message.function_call !== undefined) return undefined;
  const content = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (!isRecord(part) || part.type !== 'text' || typeof part.text !== 'string') return undefined;
    texts.push(part.text);
  }
  return texts.join('\n');
}

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
  judged(body) {
    const chat = body as ChatRequest;
    const { texts, slots } = requestTexts(chat);
    return { texts, parameters: requestParameters(chat), rewrite: (rewritten, parameters) => rewriteRequest(chat, slots, rewritten, parameters) };
  },

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateChatRequest(parseJsonObject(rawText), options.strict);
    return { body, raw, rawText, model: body.model, streaming: body.stream === true };
  },

  toUpstream(context, provider, target) {
    const adapter = provider.operations.chat;
    if (!adapter || (context.request.streaming && !adapter.stream)) throw unsupportedOperation(provider.id, 'chat', 'POST /v1/chat/completions');
    const request = context.request.body as ChatRequest;
    // Parts beyond text and images reach only a provider that declared them (issue 17).
    const refused = refusedContentPart(request.messages, provider.id, provider.capabilities?.contentParts?.(request.model) ?? {});
    if (refused) throw refused;
    adapter.validate?.(request);
    const sent = withProviderRoles(request, provider);
    return sent === request ? adapter.toUpstream(request, target, context.request.raw) : adapter.toUpstream(sent, target);
  },

  respond: (context, provider, forward) => respondStreamable(context, provider, forward, provider.operations.chat, chatStreaming),

  cache: streamableCache(chatStreaming, {
    defaults: { frequency_penalty: 0, presence_penalty: 0, logprobs: false, n: 1, temperature: 1, top_p: 1, parallel_tool_calls: true },
    textField: 'messages',
    text(messages) {
      if (!Array.isArray(messages)) return undefined;
      const lines: string[] = [];
      for (const message of messages) {
        const text = messageText(message);
        if (text === undefined) return undefined;
        lines.push(`${String((message as { role: unknown }).role)}: ${text}`);
      }
      return lines.join('\n');
    },
    // Roles and names must be the same; only the contents' wording may differ.
    shape: (messages) => (messages as Array<Record<string, unknown>>).map(({ content: _content, ...message }) => message),
    assemble: () => new ChatAssembly(),
  }),
};
