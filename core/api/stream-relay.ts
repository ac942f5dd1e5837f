import { Readable } from 'node:stream';
import { bodyFailure } from '../http/upstream.js';
import { SSE_DONE, sseData } from '../http/sse.js';
import type { ChunkTransformer } from '../pipeline/context.js';
import type { StreamDecoder, StreamMapper, StreamStep, UpstreamEvent } from '../spec/provider.js';
import type { ErrorBody, Usage } from '../spec/unified.js';

/** What the relay reads of a chunk, whatever the operation (chat chunks, text completions). */
export interface RelayedChunk {
  choices: unknown[];
  usage?: Usage | null;
  model?: string;
}

/** The operation-specific side of a stream: its strict schema and how its usage chunk looks. */
export interface StreamShape<Chunk extends RelayedChunk> {
  /** The chunk with only the fields of the OpenAI schema (a copy). */
  strict(chunk: Chunk): Chunk;
  /** A chunk with the identity (id, created, model) of `source`, no choices, and `usage`. */
  usageChunk(source: Chunk | undefined, usage: Usage): Chunk;
}

export interface StreamRelayOptions<Chunk extends RelayedChunk> {
  readonly upstream: AsyncIterable<Uint8Array>;
  readonly origin: string;
  readonly decoder: StreamDecoder;
  readonly mapper: StreamMapper<Chunk>;
  readonly shape: StreamShape<Chunk>;
  readonly includeUsage: boolean;
  readonly strict: boolean;
  readonly signal: AbortSignal;
  readonly provider: string;
  /** Applied to every chunk with choices before it is written (output guardrails); may stop the stream. */
  readonly transformer?: ChunkTransformer<Chunk>;
  /** Called as facts become known, for the log entry. */
  readonly observe: StreamObserver;
}

export interface StreamObserver {
  usage(usage: Usage): void;
  model(model: string): void;
  firstToken(): void;
  end(error?: ErrorBody): void;
}

/**
 * Relays an upstream stream to the client as unified chunks, enforcing the streaming rules of the
 * API spec whatever the provider does: every chunk carries `usage: null` except one usage chunk
 * (`choices: []`) sent last and only when `include_usage` was asked for; the stream ends with
 * `data: [DONE]`. An upstream error, or an upstream that stops early, ends the client's stream with
 * an `{"error": …}` event (which the OpenAI SDKs raise as an APIError) and no `[DONE]`.
 *
 * Reading is pulled by the client (backpressure); a client that leaves aborts `signal`, which
 * cancels the upstream request and ends the loop.
 */
export function relayStream<Chunk extends RelayedChunk>(options: StreamRelayOptions<Chunk>): Readable {
  return Readable.from(relay(options), { objectMode: false });
}

async function* relay<Chunk extends RelayedChunk>(options: StreamRelayOptions<Chunk>): AsyncGenerator<string> {
  const { decoder, observe, shape } = options;
  let usage: Usage | undefined;
  let last: Chunk | undefined;
  let done = false;
  let sentContent = false;
  let stopped = false;

  const emit = (step: StreamStep<Chunk>): string => {
    let out = '';
    for (const chunk of step.chunks ?? []) {
      last = chunk;
      if (chunk.usage) {
        usage = chunk.usage;
        observe.usage(chunk.usage);
      }
      if (chunk.choices.length === 0 && chunk.usage) continue; // the usage chunk is sent last, if asked for
      if (!sentContent) {
        sentContent = true;
        observe.firstToken();
        if (chunk.model) observe.model(chunk.model);
      }
      const outgoing = options.strict ? shape.strict(chunk) : { ...chunk };
      outgoing.usage = null;
      out += sseData(JSON.stringify(outgoing));
    }
    if (step.done) done = true;
    return out;
  };

  const fail = (error: ErrorBody): string => {
    observe.end(error);
    return sseData(JSON.stringify({ error }));
  };

  /** The transformer's view of the chunks: held back, rewritten, or cut (usage-only chunks pass). */
  const transform = async (transformer: ChunkTransformer<Chunk>, chunks: Chunk[]): Promise<Chunk[]> => {
    const passed: Chunk[] = [];
    for (const chunk of chunks) {
      if (chunk.choices.length === 0) {
        passed.push(chunk);
        continue;
      }
      const result = await transformer.push(chunk);
      passed.push(...result.chunks);
      if (result.stop) {
        stopped = true;
        break;
      }
    }
    return passed;
  };

  const handle = async (events: UpstreamEvent[]): Promise<{ out: string; error?: ErrorBody }> => {
    const { transformer } = options;
    let out = '';
    for (const event of events) {
      if (done || stopped) break;
      const step = options.mapper.map(event);
      out += emit(transformer && step.chunks ? { ...step, chunks: await transform(transformer, step.chunks) } : step);
      if (step.error && !stopped) return { out, error: { ...step.error, provider: options.provider } };
    }
    if (done && !stopped && transformer) {
      const held = await transformer.end();
      out += emit({ chunks: held.chunks });
      if (held.stop) stopped = true;
    }
    return { out };
  };

  /** The usage chunk (when asked for) and `[DONE]`. */
  const finish = (): string => {
    const tail = options.includeUsage && usage ? sseChunk(shape.usageChunk(last, usage), shape, options.strict) : '';
    observe.end();
    return tail + SSE_DONE;
  };

  let finished = false;
  const upstream = options.upstream[Symbol.asyncIterator]();
  try {
    for (let read = await upstream.next(); !read.done; read = await upstream.next()) {
      const { out, error } = await handle(decoder.push(read.value));
      if (error) {
        yield out + fail(error);
        return;
      }
      if (stopped) {
        // Cut by the transformer: the client's stream ends cleanly; leaving without `finished`
        // releases the upstream body, which cancels the upstream request.
        yield out + finish();
        return;
      }
      if (done) {
        // The client has everything: end its response now, and read the rest of the upstream body
        // in the background so its keep-alive connection goes back to the pool, not torn down.
        finished = true;
        drain(upstream);
        yield out + finish();
        return;
      }
      if (out) yield out;
    }
    const { out, error } = await handle(decoder.end());
    if (stopped) {
      yield out + finish();
      return;
    }
    if (error) {
      yield out + fail(error);
      return;
    }
    if (!done) {
      yield out +
        fail({
          message: 'The upstream stream ended before it was complete.',
          type: 'upstream_error',
          param: null,
          code: 'stream_incomplete',
          provider: options.provider,
        });
      return;
    }
    yield out + finish();
  } catch (error) {
    if (options.signal.aborted) return;
    yield fail({ ...bodyFailure(error, options.origin).body, provider: options.provider });
  } finally {
    // Leaving early for any other reason (error event, client gone) releases the upstream body.
    if (!finished) await upstream.return?.();
  }
}

/** The identity of a stream (id, created, model, fingerprint) as chunks copy it. */
export interface ChunkIdentity {
  readonly id?: string;
  readonly created?: number;
  readonly model?: string;
  readonly system_fingerprint?: string | null;
}

/** A chunk of `object` type with the identity of `source`, the given choices and usage. */
export function chunkWithIdentity<Chunk extends RelayedChunk>(object: string, source: ChunkIdentity | undefined, choices: Chunk['choices'], usage: Usage | null): Chunk {
  const chunk: Record<string, unknown> = {
    id: source?.id ?? '',
    object,
    created: source?.created ?? Math.floor(Date.now() / 1000),
    model: source?.model ?? '',
    choices,
    usage,
  };
  if (source?.system_fingerprint !== undefined) chunk.system_fingerprint = source.system_fingerprint;
  return chunk as unknown as Chunk;
}

/** One chunk as an SSE event, strict when asked. */
export const sseChunk = <Chunk extends RelayedChunk>(chunk: Chunk, shape: StreamShape<Chunk>, strict: boolean): string =>
  sseData(JSON.stringify(strict ? shape.strict(chunk) : chunk));

/** Reads an upstream body to its end, ignoring what it says (errors included). */
function drain(upstream: AsyncIterator<Uint8Array>): void {
  void (async () => {
    try {
      while (!(await upstream.next()).done) {
        // discard
      }
    } catch {
      // the connection failed after the stream was complete: nothing to tell anyone
    }
  })();
}
