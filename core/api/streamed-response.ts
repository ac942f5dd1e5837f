import { SseDecoder } from '../http/sse.js';
import type { AnswerText, TextChoice } from '../guardrails/output/index.js';
import type { ForwardSlice, GatewayContext, GatewayResponse, TransformSlice } from '../pipeline/context.js';
import type { ProviderPlugin, StreamingAdapter } from '../spec/provider.js';
import type { Usage } from '../spec/unified.js';
import { jsonBody } from './json-response.js';
import { mapAnswer, readUpstreamJson } from './operation.js';
import { relayStream, type RelayedChunk, type StreamObserver, type StreamShape } from './stream-relay.js';

export const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

interface StreamableRequest {
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
}

interface StreamableResponse {
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

/** Records what a relayed stream reveals as it flows (usage, model, first token, end, error) for the log entry. */
export function streamObserver(transform: TransformSlice, forward: ForwardSlice): StreamObserver {
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
      observe: streamObserver(transform, forward),
    });
    return { status: 200, headers: SSE_HEADERS, body: { stream: body } };
  }

  const parsed = await readUpstreamJson(forward, provider.id, context.signal);
  forward.endedAt = performance.now();
  const mapped = mapAnswer(provider.id, () => adapter.fromUpstream(parsed.value, request, auth.target, forward.headers));
  const response = judge ? await judge.response(mapped, operation.text) : mapped;
  if (response.usage) transform.usage = response.usage;
  if (response.model) transform.model = response.model;
  if (context.request.streaming) {
    return { status: 200, headers: SSE_HEADERS, body: { bytes: Buffer.from(operation.asStream(response, includeUsage, context.strict)) } };
  }
  return { status: 200, headers: {}, body: jsonBody(context.strict ? operation.strictResponse(response) : response, parsed) };
}
