import { upstreamError } from '../errors.js';
import { SseDecoder } from '../http/sse.js';
import type { ForwardSlice, GatewayContext, GatewayResponse, TransformSlice } from '../pipeline/context.js';
import type { ProviderPlugin, ProviderTarget, StreamingAdapter, StreamMapper, UpstreamRequest } from '../spec/provider.js';
import { restoredAnswer } from '../guardrails/output/index.js';
import { jsonBody } from './json-response.js';
import { mapAnswer, readErrorBody, readUpstreamJson } from './operation.js';
import { relayStream, type RelayedChunk, type StreamObserver, type StreamRelayOptions } from './stream-relay.js';

/** The headers of every SSE answer. Frozen: a response copies them (`{ ...SSE_HEADERS }`), since later stages add headers to the copy. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });

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

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The protocol's side of a relayed stream: the mapper (the provider's, or a wrapper of it), the
 * client's encoder (or the unified API's shape, strictness and usage flag), the output judge's view
 * of the chunks and the cache recorder. The relay's plumbing (body, framing, signal, observer) is
 * the same for every protocol.
 */
export type RelayedAs<Chunk extends RelayedChunk> = DistributiveOmit<StreamRelayOptions<Chunk>, 'upstream' | 'origin' | 'decoder' | 'signal' | 'provider' | 'observe'>;

/** How a protocol's whole answer reaches the client: its events when the request streams, its JSON otherwise. */
export interface AnswerRendering<Answer> {
  events(answer: Answer): string;
  json(answer: Answer): unknown;
}

/**
 * What a protocol declares to answer one attempt (chat and text completions; Messages and Responses,
 * native or translated to chat), plain or streamed. {@link respondWithProtocol} does the rest.
 */
export interface ProtocolAnswer<Sent, Mapped, Upstream, Chunk extends RelayedChunk, Answer> {
  /** The adapter that reads the provider's answer: the provider's own for the protocol, or its chat adapter when the request was translated. */
  readonly adapter: StreamingAdapter<Sent, Mapped, Upstream>;
  /** The request as sent upstream and its target, as the adapter's mappings take them. */
  readonly sent: Sent;
  readonly target: ProviderTarget;
  /** Headers of the response besides the SSE ones (the Responses API's dropped tools). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The protocol's side of a relayed stream, given the provider's stream mapper. */
  relay(mapper: StreamMapper<Upstream>): RelayedAs<Chunk>;
  /**
   * A whole answer as the adapter mapped it from the provider's JSON body: reported to the cache
   * recorder, judged by the output guardrails, its usage and model put in the transform slice for the
   * log, and made the protocol's object.
   */
  whole(mapped: Mapped): Promise<Answer>;
  readonly render: AnswerRendering<Answer>;
}

const answeredWithJson = (forward: ForwardSlice): boolean => String(forward.headers['content-type'] ?? '').startsWith('application/json');

/** Upstream error bodies of a followed stream are read up to this size for mapping. */
const ERROR_BODY_LIMIT = 1024 * 1024;

/**
 * Opens the stream a first answer names (a stream adapter's `follow`): the first answer's JSON is
 * read, `follow` builds the second request from it, and the forward stage's `follow` sends it with
 * the attempt's credentials, egress policy, time-out and abort. An error status of the second
 * answer is mapped by the provider's `mapError`, as for any upstream error. When `follow` names no
 * request, the first answer is the whole answer: its parsed JSON is given back.
 */
async function followStream(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  follow: (firstAnswer: unknown) => UpstreamRequest | undefined,
): Promise<{ readonly forward: ForwardSlice } | { readonly parsed: Awaited<ReturnType<typeof readUpstreamJson>> }> {
  if (forward.follow === undefined) throw new Error('a followed stream without the forward stage’s follow');
  const first = await readUpstreamJson(forward, provider.id, context.signal);
  const request = mapAnswer(provider.id, () => follow(first.value));
  if (request === undefined) return { parsed: first };
  const second = await forward.follow(request);
  if (second.status >= 400) {
    const body = await readErrorBody(second, context.signal, ERROR_BODY_LIMIT);
    throw upstreamError(second.status, provider.mapError({ status: second.status, headers: second.headers, body }), provider.id);
  }
  return { forward: second };
}

/**
 * The one response path of the operations that may stream: a streamed upstream answer is relayed
 * chunk by chunk (see `relayStream`) through the protocol's encoder; a JSON one is read, mapped and
 * finished by the protocol (`whole`), then rendered, as a stream's events when the client asked for
 * one (some OpenAI-compatible servers ignore `stream: true`, and a translated protocol may get a JSON
 * body), else as JSON.
 */
export async function respondWithProtocol<Sent, Mapped, Upstream, Chunk extends RelayedChunk, Answer>(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  answer: ProtocolAnswer<Sent, Mapped, Upstream, Chunk, Answer>,
): Promise<GatewayResponse> {
  const transform = context.transform;
  if (!transform) throw new Error(`${context.operation} response without a transform slice`);
  const { adapter, sent, target } = answer;
  // A stream the first answer names is opened by a second request (the adapter's `follow`).
  const follow = adapter.stream?.follow;
  const followed = context.request.streaming && follow && answeredWithJson(forward) ? await followStream(context, provider, forward, (first) => follow(first, sent, target)) : undefined;
  const streamed = followed && 'forward' in followed ? followed.forward : forward;
  if (context.request.streaming && adapter.stream && !answeredWithJson(streamed)) {
    const stream = adapter.stream;
    const body = relayStream<Chunk>({
      upstream: streamed.body,
      origin: streamed === forward ? new URL(transform.upstreamRequest.url).origin : streamed.origin,
      decoder: stream.createDecoder?.() ?? new SseDecoder(),
      signal: context.signal,
      provider: provider.id,
      observe: relayObserver(transform, forward),
      ...answer.relay(stream.createMapper(sent, target)),
    } as StreamRelayOptions<Chunk>);
    return { status: 200, headers: { ...SSE_HEADERS, ...answer.headers }, body: { stream: body } };
  }
  const parsed = followed && 'parsed' in followed ? followed.parsed : await readUpstreamJson(streamed, provider.id, context.signal);
  forward.endedAt = performance.now();
  const mapped = mapAnswer(provider.id, () => adapter.fromUpstream(parsed.value, sent, target, streamed.headers));
  return renderAnswer(context, await answer.whole(mapped), answer.render, answer.headers, parsed);
}

/**
 * A whole answer as the client's response: the protocol's events when the request streams, else its
 * JSON. `upstream`, when given, is the parsed upstream body whose bytes are sent as received if
 * nothing changed them. Also how the response cache replays a stored answer. Values an input
 * transform masked are restored in it (text, tool-call arguments, structured output).
 */
export function renderAnswer<Answer>(
  context: GatewayContext,
  answer: Answer,
  render: AnswerRendering<Answer>,
  headers: Readonly<Record<string, string>> = {},
  upstream?: { value: unknown; bytes: Uint8Array; text?: string },
): GatewayResponse {
  // What an input transform masked is put back last, after the output guardrails judged the answer.
  answer = restoredAnswer(context, answer);
  if (context.request.streaming) return { status: 200, headers: { ...SSE_HEADERS, ...headers }, body: { bytes: Buffer.from(render.events(answer)) } };
  const json = render.json(answer);
  return { status: 200, headers: { ...headers }, body: upstream ? jsonBody(json, upstream) : { json } };
}
