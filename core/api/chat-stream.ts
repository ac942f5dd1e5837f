import { Readable } from 'node:stream';
import { upstreamFailure } from '../http/upstream.js';
import { SSE_DONE, sseData } from '../http/sse.js';
import type { ChatStreamMapper, StreamDecoder, StreamStep, UpstreamEvent } from '../spec/provider.js';
import type { ChatChunkChoice, ChatCompletionChunk, ChatResponse, ErrorBody, Usage } from '../spec/unified.js';
import { strictChatChunk } from './chat-strict.js';

export interface ChatStreamOptions {
  readonly upstream: AsyncIterable<Uint8Array>;
  readonly origin: string;
  readonly decoder: StreamDecoder;
  readonly mapper: ChatStreamMapper;
  readonly includeUsage: boolean;
  readonly strict: boolean;
  readonly signal: AbortSignal;
  readonly provider: string;
  /** Called as facts become known, for the log entry. */
  readonly observe: {
    usage(usage: Usage): void;
    model(model: string): void;
    firstToken(): void;
    end(error?: ErrorBody): void;
  };
}

/**
 * Relays an upstream stream to the client as OpenAI chat chunks, enforcing the streaming rules of
 * the API spec whatever the provider does: every chunk carries `usage: null` except one usage chunk
 * (`choices: []`) sent last and only when `include_usage` was asked for; the stream ends with
 * `data: [DONE]`. An upstream error, or an upstream that stops early, ends the client's stream with
 * an `{"error": …}` event (which the OpenAI SDKs raise as an APIError) and no `[DONE]`.
 *
 * Reading is pulled by the client (backpressure); a client that leaves aborts `signal`, which
 * cancels the upstream request and ends the loop.
 */
export function relayChatStream(options: ChatStreamOptions): Readable {
  return Readable.from(relay(options), { objectMode: false });
}

async function* relay(options: ChatStreamOptions): AsyncGenerator<string> {
  const { decoder, observe } = options;
  let usage: Usage | undefined;
  let last: ChatCompletionChunk | undefined;
  let done = false;
  let sentContent = false;

  const emit = (step: StreamStep): string => {
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
      const outgoing = options.strict ? strictChatChunk(chunk) : { ...chunk };
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

  const handle = (events: UpstreamEvent[]): { out: string; error?: ErrorBody } => {
    let out = '';
    for (const event of events) {
      if (done) break;
      const step = options.mapper.map(event);
      out += emit(step);
      if (step.error) return { out, error: { ...step.error, provider: options.provider } };
    }
    return { out };
  };

  /** The usage chunk (when asked for) and `[DONE]`. */
  const finish = (): string => {
    const tail = options.includeUsage && usage ? sseChunk(chunkLike(last, [], usage), options.strict) : '';
    observe.end();
    return tail + SSE_DONE;
  };

  let finished = false;
  const upstream = options.upstream[Symbol.asyncIterator]();
  try {
    for (let read = await upstream.next(); !read.done; read = await upstream.next()) {
      const { out, error } = handle(decoder.push(read.value));
      if (error) {
        yield out + fail(error);
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
    const { out, error } = handle(decoder.end());
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
    yield fail({ ...upstreamFailure(error, options.origin).body, provider: options.provider });
  } finally {
    // Leaving early for any other reason (error event, client gone) releases the upstream body.
    if (!finished) await upstream.return?.();
  }
}

/**
 * A whole completion as the SSE events of a stream (for upstreams that answer a streamed request
 * with one JSON body): per choice a chunk with its message as the delta and one with its
 * finish_reason, then the usage chunk when asked for, then `[DONE]`.
 */
export function completionAsStream(response: ChatResponse, includeUsage: boolean, strict: boolean): string {
  let out = '';
  for (const choice of response.choices) {
    const { tool_calls: toolCalls, ...message } = choice.message;
    const delta: ChatChunkChoice['delta'] = { ...message };
    if (toolCalls) delta.tool_calls = toolCalls.map((call, index) => ({ index, ...call }));
    out += sseChunk(chunkLike(response, [{ index: choice.index, delta, logprobs: choice.logprobs ?? null, finish_reason: null }], null), strict);
    out += sseChunk(chunkLike(response, [{ index: choice.index, delta: {}, logprobs: null, finish_reason: choice.finish_reason }], null), strict);
  }
  if (includeUsage && response.usage) out += sseChunk(chunkLike(response, [], response.usage), strict);
  return out + SSE_DONE;
}

/** A chunk with the identity (id, created, model, fingerprint) of `source`. */
function chunkLike(
  source: Pick<ChatCompletionChunk, 'id' | 'created' | 'model' | 'system_fingerprint'> | undefined,
  choices: ChatChunkChoice[],
  usage: Usage | null,
): ChatCompletionChunk {
  const chunk: ChatCompletionChunk = {
    id: source?.id ?? '',
    object: 'chat.completion.chunk',
    created: source?.created ?? Math.floor(Date.now() / 1000),
    model: source?.model ?? '',
    choices,
    usage,
  };
  if (source?.system_fingerprint !== undefined) chunk.system_fingerprint = source.system_fingerprint;
  return chunk;
}

const sseChunk = (chunk: ChatCompletionChunk, strict: boolean): string => sseData(JSON.stringify(strict ? strictChatChunk(chunk) : chunk));

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
