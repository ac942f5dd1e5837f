import { Readable } from 'node:stream';
import { bodyFailure } from '../http/upstream.js';
import { SSE_DONE, sseData } from '../http/sse.js';
import type { ChunkJudge, ChunkRestoring } from '../guardrails/output/index.js';
import type { StreamDecoder, StreamMapper, UpstreamEvent } from '../spec/provider.js';
import type { ErrorBody, Usage } from '../spec/unified.js';
import type { AnswerRecorder } from '../cache/slice.js';

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

/**
 * Writes the client's side of a relayed stream: the unified chunks as the protocol's SSE events.
 * The default writes chat and text-completion chunks (see {@link chunkEncoder}); another inbound
 * protocol (Messages, Responses) supplies its own, fed by the same chunks, judged by the same judge.
 */
export interface StreamEncoder<Chunk extends RelayedChunk> {
  /** The SSE text of one chunk (empty to send nothing, e.g. a usage-only chunk kept for the end). */
  chunk(chunk: Chunk): string;
  /**
   * The normal end (answered, or cut by the judge): `usage` is what the upstream reported, `last`
   * the last chunk relayed. May be asynchronous (the Responses API stores the response first).
   */
  end(usage: Usage | undefined, last: Chunk | undefined): string | Promise<string>;
  /** The end of a stream that failed after its headers were sent. */
  error(error: ErrorBody): string | Promise<string>;
}

interface RelayInputs<Chunk extends RelayedChunk> {
  readonly upstream: AsyncIterable<Uint8Array>;
  readonly origin: string;
  readonly decoder: StreamDecoder;
  readonly mapper: StreamMapper<Chunk>;
  readonly signal: AbortSignal;
  readonly provider: string;
  /** Applied to every chunk with choices before it is written (output guardrails); may hold back, rewrite or stop. */
  readonly judge?: ChunkJudge<Chunk>;
  /** Applied to every chunk after the judge: puts back what an input transform masked (a placeholder split across chunks is restored whole). */
  readonly restore?: ChunkRestoring<Chunk>;
  /** Called as facts become known, for the log entry. */
  readonly observe: StreamObserver;
  /**
   * Given every chunk as mapped, before the judge sees it, and told when the stream is complete
   * (the response cache stores it then, before the client gets `[DONE]`).
   */
  readonly record?: AnswerRecorder;
}

/**
 * What a relay reads, maps and judges, and how it writes the client's side: an `encoder` of
 * another protocol, or the unified API's own (see {@link chunkEncoder}) from the operation's shape.
 */
export type StreamRelayOptions<Chunk extends RelayedChunk> = RelayInputs<Chunk> &
  (
    | { readonly encoder: StreamEncoder<Chunk> }
    | { readonly encoder?: undefined; readonly shape: StreamShape<Chunk>; readonly includeUsage: boolean; readonly strict: boolean }
  );

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
  return Readable.from(new StreamRelay(options).run(), { objectMode: false });
}

/**
 * The unified API's own encoder: every chunk a `data:` event with `usage: null` (strict when
 * asked), the usage chunk (`choices: []`) last and only when `includeUsage`, then `[DONE]`; an error
 * is an `{"error": …}` event and no `[DONE]`.
 */
export function chunkEncoder<Chunk extends RelayedChunk>(shape: StreamShape<Chunk>, includeUsage: boolean, strict: boolean): StreamEncoder<Chunk> {
  return {
    chunk(chunk) {
      if (chunk.choices.length === 0 && chunk.usage) return '';
      const outgoing = strict ? shape.strict(chunk) : { ...chunk };
      outgoing.usage = null;
      return sseData(JSON.stringify(outgoing));
    },
    end: (usage, last) => (includeUsage && usage ? sseChunk(shape.usageChunk(last, usage), shape, strict) : '') + SSE_DONE,
    error: (error) => sseData(JSON.stringify({ error })),
  };
}

/**
 * Where a relay is. `streaming`: events are relayed. `answered`: the upstream's end marker has
 * passed (what the judge held back is released; the rest of the upstream body is drained).
 * `cut`: the judge stopped the stream (the upstream is cancelled). `failed`: an error ends the
 * client's stream. `closed`: the last text is written, with the upstream body drained or released.
 */
type RelayState =
  | { readonly name: 'streaming' | 'answered' | 'cut' }
  | { readonly name: 'failed'; readonly error: ErrorBody }
  | { readonly name: 'closed'; readonly draining: boolean };

/** The states each state may move to; any other move is a bug in the relay. */
const TRANSITIONS: { readonly [State in RelayState['name']]: ReadonlyArray<RelayState['name']> } = {
  streaming: ['answered', 'cut', 'failed', 'closed'],
  answered: ['cut', 'failed', 'closed'],
  cut: ['failed', 'closed'],
  failed: ['closed'],
  closed: [],
};

/** One stream's relay: a state machine ({@link RelayState}) whose state changes only in `enter`. */
class StreamRelay<Chunk extends RelayedChunk> {
  private state: RelayState = { name: 'streaming' };
  private readonly upstream: AsyncIterator<Uint8Array>;
  /** The usage the upstream reported (sent last, when asked for). */
  private usage?: Usage;
  /** The last chunk relayed, whose identity the usage chunk copies. */
  private last?: Chunk;
  /** Whether a chunk with content went out (the first one is observed as the first token). */
  private contentSent = false;
  private readonly encoder: StreamEncoder<Chunk>;

  constructor(private readonly options: StreamRelayOptions<Chunk>) {
    this.upstream = options.upstream[Symbol.asyncIterator]();
    this.encoder = options.encoder !== undefined ? options.encoder : chunkEncoder(options.shape, options.includeUsage, options.strict);
  }

  /** Reads the upstream to the client's stream, one SSE text per upstream read. */
  async *run(): AsyncGenerator<string> {
    const { decoder } = this.options;
    try {
      for (let read = await this.upstream.next(); !read.done; read = await this.upstream.next()) {
        const out = await this.relay(decoder.push(read.value));
        if (this.state.name !== 'streaming') {
          await this.recordComplete();
          yield out + (await this.close());
          return;
        }
        if (out) yield out;
      }
      const out = await this.relay(decoder.end());
      if (this.state.name === 'streaming') {
        this.enter({
          name: 'failed',
          error: { message: 'The upstream stream ended before it was complete.', type: 'upstream_error', param: null, code: 'stream_incomplete', provider: this.options.provider },
        });
      }
      await this.recordComplete();
      yield out + (await this.close());
    } catch (error) {
      if (this.options.signal.aborted) {
        this.enter({ name: 'closed', draining: false });
        return;
      }
      this.enter({ name: 'failed', error: { ...bodyFailure(error, this.options.origin).body, provider: this.options.provider } });
      yield await this.close();
    } finally {
      // Leaving for any reason but a complete answer (error, cut, client gone) releases the upstream body.
      if (this.state.name !== 'closed' || !this.state.draining) await this.upstream.return?.();
    }
  }

  /** Tells the recorder the stream is complete, when it is (answered, not cut by the judge). */
  private async recordComplete(): Promise<void> {
    if (this.at('answered')) await this.options.record?.complete();
  }

  /** The one place the state changes. */
  private enter(next: RelayState): void {
    if (!TRANSITIONS[this.state.name].includes(next.name)) throw new Error(`stream relay: no move from ${this.state.name} to ${next.name}`);
    this.state = next;
  }

  /** Whether the relay is in state `name` (a call, so that type narrowing does not outlive a state change). */
  private at(name: RelayState['name']): boolean {
    return this.state.name === name;
  }

  /** Maps and judges the events of one upstream read while streaming; returns the SSE text to send. */
  private async relay(events: UpstreamEvent[]): Promise<string> {
    const { judge, mapper } = this.options;
    let out = '';
    for (const event of events) {
      if (!this.at('streaming')) break;
      const step = mapper.map(event);
      if (this.options.record && step.chunks) for (const chunk of step.chunks) this.options.record.chunk(chunk);
      out += this.emit(this.restored(judge && step.chunks ? await this.judged(judge, step.chunks) : step.chunks));
      if (this.at('cut')) break;
      if (step.done) this.enter({ name: 'answered' });
      if (step.error) {
        this.enter({ name: 'failed', error: { ...step.error, provider: this.options.provider } });
        return out;
      }
    }
    if (this.at('answered') && judge) {
      const held = await judge.end();
      out += this.emit(this.restored(held.chunks));
      if (held.stop) this.enter({ name: 'cut' });
    }
    if (this.at('answered') && this.options.restore) {
      const rest = this.options.restore.end();
      if (rest) out += this.emit([rest]);
    }
    return out;
  }

  /** The chunks with what an input transform masked put back (after the judge, so output guardrails judge what the model wrote). */
  private restored(chunks: Chunk[] | undefined): Chunk[] | undefined {
    const { restore } = this.options;
    return restore && chunks ? chunks.map((chunk) => restore.push(chunk)) : chunks;
  }

  /** The judge's view of the chunks: held back, rewritten, or cut (usage-only chunks pass). */
  private async judged(judge: ChunkJudge<Chunk>, chunks: Chunk[]): Promise<Chunk[]> {
    const passed: Chunk[] = [];
    for (const chunk of chunks) {
      if (chunk.choices.length === 0) {
        passed.push(chunk);
        continue;
      }
      const result = await judge.push(chunk);
      passed.push(...result.chunks);
      if (result.stop) {
        this.enter({ name: 'cut' });
        break;
      }
    }
    return passed;
  }

  /** The chunks as the encoder's SSE events; the usage a chunk reports is kept for the end. */
  private emit(chunks: readonly Chunk[] | undefined): string {
    const { observe } = this.options;
    let out = '';
    for (const chunk of chunks ?? []) {
      this.last = chunk;
      if (chunk.usage) {
        this.usage = chunk.usage;
        observe.usage(chunk.usage);
      }
      const text = this.encoder.chunk(chunk);
      if (!text) continue;
      if (!this.contentSent) {
        this.contentSent = true;
        observe.firstToken();
        if (chunk.model) observe.model(chunk.model);
      }
      out += text;
    }
    return out;
  }

  /**
   * The end of the client's stream: the error event when failed; else the usage chunk (when asked
   * for) and `[DONE]`. An answered upstream's body is then read to its end in the background, so
   * its keep-alive connection goes back to the pool rather than being torn down.
   */
  private async close(): Promise<string> {
    const { observe } = this.options;
    const state = this.state;
    let tail: string;
    if (state.name === 'failed') {
      observe.end(state.error);
      tail = await this.encoder.error(state.error);
    } else {
      tail = await this.encoder.end(this.usage, this.last);
      observe.end();
    }
    const draining = state.name === 'answered';
    if (draining) drain(this.upstream);
    this.enter({ name: 'closed', draining });
    return tail;
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
