import { assembledRecorder } from '../../../cache/cacheable.js';
import { SseDecoder } from '../../../http/sse.js';
import type { ForwardSlice, GatewayContext, GatewayResponse } from '../../../pipeline/context.js';
import type { MessagesAdapter, ProviderPlugin } from '../../../spec/provider.js';
import type { MessagesRequest, MessagesResponse } from '../../../spec/messages.js';
import type { ChatRequest } from '../../../spec/unified.js';
import { chatAnswerText } from '../../answer-text.js';
import { jsonBody } from '../../json-response.js';
import { mapAnswer, readUpstreamJson } from '../../operation.js';
import { ChatAssembly } from '../../stream-assembly.js';
import { relayStream } from '../../stream-relay.js';
import { relayObserver, SSE_HEADERS } from '../../streamed-response.js';
import { messageFromChat } from './from-chat.js';
import { messageAsEvents } from './message-events.js';
import { MessageAssembly } from './message-assembly.js';
import { judgedMessage, nativeAnswerOf, nativeAnswerText, NativeStreamEncoder, nativeChunkMapper } from './native-stream.js';
import { MessagesStreamEncoder } from './stream-encoder.js';
import { unifiedMessagesUsage } from '../../../spec/messages-usage.js';

const slices = (context: GatewayContext) => {
  const { auth, transform } = context;
  if (!auth || !transform) throw new Error('messages response without auth or transform slice');
  return { auth, transform, request: context.request.body as MessagesRequest };
};

const answeredWithJson = (forward: ForwardSlice): boolean => String(forward.headers['content-type'] ?? '').startsWith('application/json');

/** The client's answer from a Message: JSON, or its events when a stream was asked for (and the upstream answered in one body). */
export function messageAnswer(context: GatewayContext, message: MessagesResponse, upstream?: { value: unknown; bytes: Uint8Array; text?: string }): GatewayResponse {
  if (context.request.streaming) return { status: 200, headers: { ...SSE_HEADERS }, body: { bytes: Buffer.from(messageAsEvents(message)) } };
  return { status: 200, headers: {}, body: upstream ? jsonBody(message, upstream) : { json: message } };
}

/**
 * A native Messages answer: a stream's events are relayed as the provider sent them (judged by
 * the output guardrails text block by text block), a JSON Message is judged whole. Usage and model
 * go to the transform slice, in unified terms, for the log and the price.
 */
export async function respondNative(context: GatewayContext, provider: ProviderPlugin, forward: ForwardSlice, adapter: MessagesAdapter): Promise<GatewayResponse> {
  const { auth, transform, request } = slices(context);
  const judge = context.guardrail?.output;
  if (context.request.streaming && adapter.stream && !answeredWithJson(forward)) {
    const body = relayStream({
      upstream: forward.body,
      origin: new URL(transform.upstreamRequest.url).origin,
      decoder: adapter.stream.createDecoder?.() ?? new SseDecoder(),
      mapper: nativeChunkMapper(adapter.stream.createMapper(request, auth.target)),
      encoder: new NativeStreamEncoder(),
      signal: context.signal,
      provider: provider.id,
      judge: judge?.stream(nativeAnswerText),
      record: assembledRecorder(context.cache?.recorder, new MessageAssembly(), (message) => message),
      observe: relayObserver(transform, forward),
    });
    return { status: 200, headers: { ...SSE_HEADERS }, body: { stream: body } };
  }
  const parsed = await readUpstreamJson(forward, provider.id, context.signal);
  forward.endedAt = performance.now();
  const mapped = mapAnswer(provider.id, () => adapter.fromUpstream(parsed.value, request, auth.target, forward.headers));
  context.cache?.recorder?.answer(mapped);
  const message = judge ? judgedMessage(await judge.response(nativeAnswerOf(mapped), nativeAnswerText)) : mapped;
  transform.usage = unifiedMessagesUsage(message.usage);
  if (message.model) transform.model = message.model;
  return messageAnswer(context, message, parsed);
}

/**
 * A translated answer: the provider's chat answer (a stream's chunks, or one JSON body) mapped by its
 * chat adapter, judged as chat answers are, then encoded as the Messages API's objects and events.
 */
export async function respondTranslated(context: GatewayContext, provider: ProviderPlugin, forward: ForwardSlice, chat: ChatRequest): Promise<GatewayResponse> {
  const { auth, transform, request } = slices(context);
  const adapter = provider.operations.chat;
  if (!adapter) throw new Error('translated messages response without a chat adapter');
  // The answer is re-encoded by the gateway: the provider's extra fields (thinking blocks) are wanted.
  const target = { ...auth.target, strict: false };
  const judge = context.guardrail?.output;
  if (context.request.streaming && adapter.stream && !answeredWithJson(forward)) {
    const body = relayStream({
      upstream: forward.body,
      origin: new URL(transform.upstreamRequest.url).origin,
      decoder: adapter.stream.createDecoder?.() ?? new SseDecoder(),
      mapper: adapter.stream.createMapper(chat, target),
      encoder: new MessagesStreamEncoder(request.model),
      signal: context.signal,
      provider: provider.id,
      judge: judge?.stream(chatAnswerText),
      record: assembledRecorder(context.cache?.recorder, new ChatAssembly(), (answer) => messageFromChat(answer, request.model)),
      observe: relayObserver(transform, forward),
    });
    return { status: 200, headers: { ...SSE_HEADERS }, body: { stream: body } };
  }
  const parsed = await readUpstreamJson(forward, provider.id, context.signal);
  forward.endedAt = performance.now();
  const mapped = mapAnswer(provider.id, () => adapter.fromUpstream(parsed.value, chat, target, forward.headers));
  context.cache?.recorder?.answer(messageFromChat(mapped, request.model));
  const response = judge ? await judge.response(mapped, chatAnswerText) : mapped;
  if (response.usage) transform.usage = response.usage;
  if (response.model) transform.model = response.model;
  return messageAnswer(context, messageFromChat(response, request.model));
}
