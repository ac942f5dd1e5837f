import { assembledRecorder } from '../../../cache/cacheable.js';
import { streamRestorer } from '../../../guardrails/output/index.js';
import type { GatewayContext, GatewayResponse } from '../../../pipeline/context.js';
import type { MessagesAdapter, ProviderPlugin } from '../../../spec/provider.js';
import type { MessagesRequest, MessagesResponse, MessagesStreamEvent } from '../../../spec/messages.js';
import type { ChatRequest, ChatResponse, ChatCompletionChunk } from '../../../spec/unified.js';
import { chatAnswerText } from '../../answer-text.js';
import { type AnswerRendering, type ProtocolAnswer, renderAnswer } from '../../protocol-respond.js';
import { ChatAssembly } from '../../stream-assembly.js';
import { messageFromChat } from './from-chat.js';
import { messageAsEvents } from './message-events.js';
import { MessageAssembly } from './message-assembly.js';
import { judgedMessage, nativeAnswerOf, nativeAnswerText, type NativeChunk, NativeStreamEncoder, nativeChunkMapper, nativeMessagesRestorer } from './native-stream.js';
import { MessagesStreamEncoder } from './stream-encoder.js';
import { unifiedMessagesUsage } from '../../../spec/messages-usage.js';

const slices = (context: GatewayContext) => {
  const { auth, transform } = context;
  if (!auth || !transform) throw new Error('messages response without auth or transform slice');
  return { auth, transform, request: context.request.body as MessagesRequest };
};

/** A Message as the client gets it: JSON, or its events when a stream was asked for (and the upstream answered in one body). */
const messageRendering: AnswerRendering<MessagesResponse> = { events: messageAsEvents, json: (message) => message };

/** The client's answer from a stored Message (a response cache hit), judged again by the output guardrails. */
export async function replayMessage(context: GatewayContext, message: MessagesResponse): Promise<GatewayResponse> {
  const judge = context.guardrail?.output;
  const judged = judge ? judgedMessage(await judge.response(nativeAnswerOf(message), nativeAnswerText)) : message;
  return renderAnswer(context, judged, messageRendering);
}

/**
 * A native Messages answer: a stream's events are relayed as the provider sent them (judged by
 * the output guardrails text block by text block), a JSON Message is judged whole. Usage and model
 * go to the transform slice, in unified terms, for the log and the price.
 */
export function nativeMessageAnswer(
  context: GatewayContext,
  adapter: MessagesAdapter,
): ProtocolAnswer<MessagesRequest, MessagesResponse, MessagesStreamEvent, NativeChunk, MessagesResponse> {
  const { auth, transform, request } = slices(context);
  const judge = context.guardrail?.output;
  return {
    adapter,
    sent: request,
    target: auth.target,
    relay: (mapper) => ({
      mapper: nativeChunkMapper(mapper),
      encoder: new NativeStreamEncoder(),
      judge: judge?.stream(nativeAnswerText),
      restore: nativeMessagesRestorer(context.guardrail?.restorer),
      record: assembledRecorder(context.cache?.recorder, new MessageAssembly(), (message) => message),
    }),
    async whole(mapped) {
      context.cache?.recorder?.answer(mapped);
      const message = judge ? judgedMessage(await judge.response(nativeAnswerOf(mapped), nativeAnswerText)) : mapped;
      transform.usage = unifiedMessagesUsage(message.usage);
      if (message.model) transform.model = message.model;
      return message;
    },
    render: messageRendering,
  };
}

/**
 * A translated answer: the provider's chat answer (a stream's chunks, or one JSON body) mapped by its
 * chat adapter, judged as chat answers are, then encoded as the Messages API's objects and events.
 */
export function translatedMessageAnswer(
  context: GatewayContext,
  provider: ProviderPlugin,
  chat: ChatRequest,
): ProtocolAnswer<ChatRequest, ChatResponse, ChatCompletionChunk, ChatCompletionChunk, MessagesResponse> {
  const { auth, transform, request } = slices(context);
  const adapter = provider.operations.chat;
  if (!adapter) throw new Error('translated messages response without a chat adapter');
  const judge = context.guardrail?.output;
  return {
    adapter,
    sent: chat,
    // The answer is re-encoded by the gateway: the provider's extra fields (thinking blocks) are wanted.
    target: { ...auth.target, strict: false },
    relay: (mapper) => ({
      mapper,
      encoder: new MessagesStreamEncoder(request.model),
      judge: judge?.stream(chatAnswerText),
      restore: streamRestorer(context),
      record: assembledRecorder(context.cache?.recorder, new ChatAssembly(), (answer) => messageFromChat(answer, request.model)),
    }),
    async whole(mapped) {
      context.cache?.recorder?.answer(messageFromChat(mapped, request.model));
      const response = judge ? await judge.response(mapped, chatAnswerText) : mapped;
      if (response.usage) transform.usage = response.usage;
      if (response.model) transform.model = response.model;
      return messageFromChat(response, request.model);
    },
    render: messageRendering,
  };
}
