import { SseDecoder } from '../http/sse.js';
import type { AnswerText, TextChoice } from '../guardrails/output/index.js';
import type { ForwardSlice, GatewayContext, GatewayResponse, TransformSlice } from '../pipeline/context.js';
import type { ProviderPlugin, StreamingAdapter } from '../spec/provider.js';
import type { Usage } from '../spec/unified.js';
import { jsonBody } from './json-response.js';
import { mapAnswer, readUpstreamJson } from './operation.js';
import { relayStream, type RelayedChunk, type StreamObserver, type StreamShape } from './stream-relay.js';

/** The headers of every SSE answer. Frozen: a response copies them (`{ ...SSE_HEADERS }`), since later stages add headers to the copy. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });

export interface StreamableRequest {
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
}

export interface StreamableResponse {
  choices: TextChoice[];
  usage?: Usage | null;
  model?: string;
}

/** What differs between the operations that stream (chat, text completions). */
export interface StreamableOperation<Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }> {
  readonly shape: StreamShape<Chunk>;
  /** The response with only the fields of the OpenAI schema. */
  strictResponse(response: Response): Response;
  /** A whole response as the SSE events of a stream, `[DONE]` included. */
  asStream(response: Response, includeUsage: boolean, strict: boolean): string;
  /** Where the answer's text is, for the request's output judge (guardrails) when one is installed. */
  readonly text: AnswerText<Response, Chunk>;
}

/** Records what a relayed stream tells as it flows (usage, model, first token, end) for the log entry. */
export function relayObserver(transform: TransformSlice, forward: ForwardSlice): StreamObserver {
  return {
    usage: (usage) => {
      transform.usage = usage;
    },
    model: (model) => {
      transform.model = model;
    },
    firstToken: () => {
      transform.firstTokenAt ??= performance.now();
    },
    end: (error) => {
      forward.endedAt = performance.now();
      if (error) transform.streamError = error;
    },
  };
}

/**
 * The response side of an operation that may stream: a streamed upstream answer is relayed chunk
 * by chunk (see `relayStream`), a JSON one is mapped (and turned into a stream when the client asked
 * for one: some OpenAI-compatible servers ignore `stream: true`). Usage and model go to the
 * transform slice for the log entry.
 */
export async function respondStreamable<Request extends StreamableRequest, Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }>(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  adapter: StreamingAdapter<Request, Response, Chunk> | undefined,
  operation: StreamableOperation<Response, Chunk>,
): Promise<GatewayResponse> {
  const auth = context.auth;
  const transform = context.transform;
  if (!adapter || !auth || !transform) throw new Error(`${context.operation} response without adapter, auth or transform slice`);
  const request = context.request.body as Request;
  const includeUsage = request.stream_options?.include_usage === true;
  const judge = context.guardrail?.output;

  const answeredWithJson = String(forward.headers['content-type'] ?? '').startsWith('application/json');
  if (context.request.streaming && adapter.stream && !answeredWithJson) {
    const stream = adapter.stream;
    const body = relayStream({
      upstream: forward.body,
      origin: new URL(transform.upstreamRequest.url).origin,
      decoder: stream.createDecoder?.() ?? new SseDecoder(),
      mapper: stream.createMapper(request, auth.target),
      shape: operation.shape,
      includeUsage,
      strict: context.strict,
      signal: context.signal,
      provider: provider.id,
      judge: judge?.stream(operation.text),
      record: context.cache?.recorder,
      observe: relayObserver(transform, forward),
    });
    return { status: 200, headers: { ...SSE_HEADERS }, body: { stream: body } };
  }

  const parsed = await readUpstreamJson(forward, provider.id, context.signal);
  forward.endedAt = performance.now();
  const mapped = mapAnswer(provider.id, () => adapter.fromUpstream(parsed.value, request, auth.target, forward.headers));
  context.cache?.recorder?.answer(mapped);
  const { answer, response } = await wholeAnswer(context, mapped, operation, parsed);
  if (answer.usage) transform.usage = answer.usage;
  if (answer.model) transform.model = answer.model;
  return response;
}

/**
 * A whole answer (mapped from a JSON upstream answer, or stored by the response cache) as the
 * client's response: judged by the request's output guardrails, then the events of a stream when
 * the request streams, else JSON (stripped to the OpenAI schema when strict). `upstream`, when
 * given, is the parsed upstream body whose bytes are sent as received if nothing changed them.
 */
export async function wholeAnswer<Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }>(
  context: GatewayContext,
  mapped: Response,
  operation: StreamableOperation<Response, Chunk>,
  upstream?: { value: unknown; bytes: Buffer; text?: string },
): Promise<{ answer: Response; response: GatewayResponse }> {
  const judge = context.guardrail?.output;
  const answer = judge ? await judge.response(mapped, operation.text) : mapped;
  if (context.request.streaming) {
    const includeUsage = (context.request.body as StreamableRequest).stream_options?.include_usage === true;
    return { answer, response: { status: 200, headers: { ...SSE_HEADERS }, body: { bytes: Buffer.from(operation.asStream(answer, includeUsage, context.strict)) } } };
  }
  const json = context.strict ? operation.strictResponse(answer) : answer;
  return { answer, response: { status: 200, headers: {}, body: upstream ? jsonBody(json, upstream) : { json } } };
}
