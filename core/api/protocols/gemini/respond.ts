import { assembledRecorder } from '../../../cache/cacheable.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import type { GeminiRequest, GeminiResponse } from '../../../spec/gemini.js';
import { unifiedGeminiUsage } from '../../../spec/gemini.js';
import type { GenerateContentAdapter, ProviderPlugin } from '../../../spec/provider.js';
import type { ChatCompletionChunk, ChatRequest, ChatResponse } from '../../../spec/unified.js';
import { chatAnswerText } from '../../answer-text.js';
import type { AnswerRendering, ProtocolAnswer } from '../../protocol-respond.js';
import { ChatAssembly } from '../../stream-assembly.js';
import { GeminiAssembly } from './assembly.js';
import { geminiResponseFromChat, includesThoughts } from './from-chat.js';
import { judgedResponse, nativeAnswerOf, nativeAnswerText, type NativeChunk, NativeStreamEncoder, nativeChunkMapper, nativeGeminiRestorer } from './native.js';
import { streamRestorer } from '../../../guardrails/output/index.js';
import { GeminiStreamEncoder, responseAsStream } from './stream-encoder.js';

const slices = (context: GatewayContext) => {
  const { auth, transform } = context;
  if (!auth || !transform) throw new Error('generateContent response without auth or transform slice');
  return { auth, transform, request: context.request.body as GeminiRequest };
};

/** A stream without `alt=sse` is one JSON array, sent as JSON (as Google sends it); an SSE stream keeps the SSE headers. */
export const streamHeaders = (request: GeminiRequest): Readonly<Record<string, string>> | undefined =>
  request.stream === 'array' ? { 'content-type': 'application/json; charset=utf-8' } : undefined;

/** A `GenerateContentResponse` as the client gets it: JSON, or a stream of one piece in the request's framing. */
export const rendering = (request: GeminiRequest): AnswerRendering<GeminiResponse> => ({
  events: (response) => responseAsStream(response, request.stream === 'sse'),
  json: (response) => response,
});

/**
 * A native answer: a stream's pieces are relayed as the provider sent them (judged candidate by
 * candidate by the output guardrails, reframed as the client asked), a JSON answer is judged whole.
 */
export function nativeGeminiAnswer(
  context: GatewayContext,
  adapter: GenerateContentAdapter,
): ProtocolAnswer<GeminiRequest, GeminiResponse, GeminiResponse, NativeChunk, GeminiResponse> {
  const { auth, transform, request } = slices(context);
  const judge = context.guardrail?.output;
  return {
    adapter,
    sent: request,
    target: auth.target,
    headers: streamHeaders(request),
    relay: (mapper) => ({
      mapper: nativeChunkMapper(mapper),
      encoder: new NativeStreamEncoder(request.stream === 'sse'),
      judge: judge?.stream(nativeAnswerText),
      restore: nativeGeminiRestorer(context.guardrail?.restorer),
      record: assembledRecorder(context.cache?.recorder, new GeminiAssembly(), (response) => response),
    }),
    async whole(mapped) {
      context.cache?.recorder?.answer(mapped);
      const response = judge ? judgedResponse(await judge.response(nativeAnswerOf(mapped), nativeAnswerText)) : mapped;
      transform.usage = unifiedGeminiUsage(response.usageMetadata);
      if (typeof response.modelVersion === 'string' && response.modelVersion) transform.model = response.modelVersion;
      return response;
    },
    render: rendering(request),
  };
}

/**
 * A translated answer: the provider's chat answer (a stream's chunks, or one JSON body) mapped by its
 * chat adapter, judged as chat answers are, then encoded as Gemini's responses.
 */
export function translatedGeminiAnswer(
  context: GatewayContext,
  provider: ProviderPlugin,
  chat: ChatRequest,
): ProtocolAnswer<ChatRequest, ChatResponse, ChatCompletionChunk, ChatCompletionChunk, GeminiResponse> {
  const { auth, transform, request } = slices(context);
  const adapter = provider.operations.chat;
  if (!adapter) throw new Error('translated generateContent response without a chat adapter');
  const judge = context.guardrail?.output;
  const thoughts = includesThoughts(request);
  return {
    adapter,
    sent: chat,
    // The answer is re-encoded by the gateway: the provider's extra fields (thinking blocks) are wanted.
    target: { ...auth.target, strict: false },
    headers: streamHeaders(request),
    relay: (mapper) => ({
      mapper,
      encoder: new GeminiStreamEncoder(request.model, request.stream === 'sse', thoughts),
      judge: judge?.stream(chatAnswerText),
      restore: streamRestorer(context),
      record: assembledRecorder(context.cache?.recorder, new ChatAssembly(), (answer) => geminiResponseFromChat(answer, request.model, thoughts)),
    }),
    async whole(mapped) {
      context.cache?.recorder?.answer(geminiResponseFromChat(mapped, request.model, thoughts));
      const response = judge ? await judge.response(mapped, chatAnswerText) : mapped;
      if (response.usage) transform.usage = response.usage;
      if (response.model) transform.model = response.model;
      return geminiResponseFromChat(response, request.model, thoughts);
    },
    render: rendering(request),
  };
}
