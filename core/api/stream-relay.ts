import { Readable } from 'node:stream';
import { bodyFailure } from '../http/upstream.js';
import { SSE_DONE, sseData } from '../http/sse.js';
import type { ChunkJudge } from '../guardrails/output/index.js';
import type { StreamDecoder, StreamMapper, UpstreamEvent } from '../spec/provider.js';
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
  /** Applied to every chunk with choices before it is written (output guardrails); may hold back, rewrite or stop. */
  readonly judge?: ChunkJudge<Chunk>;
  /** Called as facts become known, for the log entry. */
  readonly observe: StreamObserver;
  /**
   * How chunks reach the client: absent, as the operation's own SSE chunks (`usage: null`, the usage
   * chunk last when asked for, `[DONE]`, or an `{"error": …}` event). An inbound protocol (the
   * Responses API) supplies its own encoder, fed by the same chunks, judged by the same judge.
   */
  readonly output?: StreamOutput<Chunk>;
}

/**
 * The client side of a relayed stream: turns the unified chunks (judged) into the protocol's SSE
 * text. `complete` ends a stream that was answered or cut by the judge; `failed` one that ended with
 * an error. Each is called once, and exactly one of them.
 */
export interface StreamOutput<Chunk extends RelayedChunk> {
  chunk(chunk: Chunk): string;
  /** `usage`: what the upstream reported (if anything); `last`: the last chunk relayed. */
  complete(usage: Usage | undefined, last: Chunk | undefined): string | Promise<string>;
  failed(error: ErrorBody): string | Promise<string>;
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
  return Readable.from(new StreamRelay(options).run(), { objectMode: false });
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

  constructor(private readonly options: StreamRelayOptions<Chunk>) {
    this.upstream = options.upstream[Symbol.asyncIterator]();
  }

  /** Reads the upstream to the client's stream, one SSE text per upstream read. */
  async *run(): AsyncGenerator<string> {
    const { decoder } = this.options;
    try {
      for (let read = await this.upstream.next(); !read.done; read = await this.upstream.next()) {
        const out = await this.relay(decoder.push(read.value));
        if (this.state.name !== 'streaming') {
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
      out += this.emit(judge && step.chunks ? await this.judged(judge, step.chunks) : step.chunks);
      if (this.at('cut')) break;
      if (step.done) this.enter({ name: 'answered' });
      if (step.error) {
        this.enter({ name: 'failed', error: { ...step.error, provider: this.options.provider } });
        return out;
      }
    }
    if (this.at('answered') && judge) {
      const held = await judge.end();
      out += this.emit(held.chunks);
      if (held.stop) this.enter({ name: 'cut' });
    }
    return out;
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

  /** The chunks as SSE events with `usage: null`; the usage chunk is kept back (sent last, if asked for). */
  private emit(chunks: readonly Chunk[] | undefined): string {
    const { observe, output } = this.options;
    let out = '';
    for (const chunk of chunks ?? []) {
      this.last = chunk;
      if (chunk.usage) {
        this.usage = chunk.usage;
        observe.usage(chunk.usage);
      }
      if (chunk.choices.length === 0 && chunk.usage) continue;
      if (!this.contentSent) {
        this.contentSent = true;
        observe.firstToken();
        if (chunk.model) observe.model(chunk.model);
      }
      out += output ? output.chunk(chunk) : this.chatChunk(chunk);
    }
    return out;
  }

  /** The operation's own SSE chunk: strict when asked, `usage: null`. */
  private chatChunk(chunk: Chunk): string {
    const outgoing = this.options.strict ? this.options.shape.strict(chunk) : { ...chunk };
    outgoing.usage = null;
    return sseData(JSON.stringify(outgoing));
  }

  /**
   * The end of the client's stream: the error event when failed; else the usage chunk (when asked
   * for) and `[DONE]`. An answered upstream's body is then read to its end in the background, so
   * its keep-alive connection goes back to the pool rather than being torn down.
   */
  private async close(): Promise<string> {
    const { observe, shape, output } = this.options;
    const state = this.state;
    let tail: string;
    if (state.name === 'failed') {
      observe.end(state.error);
      tail = output ? await output.failed(state.error) : sseData(JSON.stringify({ error: state.error }));
    } else if (output) {
      observe.end();
      tail = await output.complete(this.usage, this.last);
    } else {
      tail = this.options.includeUsage && this.usage ? sseChunk(shape.usageChunk(this.last, this.usage), shape, this.options.strict) : '';
      observe.end();
      tail += SSE_DONE;
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
