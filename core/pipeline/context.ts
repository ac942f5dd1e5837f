import type { Readable } from 'node:stream';
import type { GatewayError } from '../errors.js';
import type { MemoryLease } from '../http/memory-budget.js';
import type { GuardrailSide, GuardrailVerdict } from '../spec/guardrail.js';
import type { Caller } from '../spec/key-resolver.js';
import type { ProviderPlugin, ProviderTarget, UpstreamRequest } from '../spec/provider.js';
import type { ChatCompletionChunk, ErrorBody, OperationName, Usage } from '../spec/unified.js';

export type { Caller };

/**
 * The typed context of one request. The route fills `incoming` and `request`; each stage then
 * writes only its own slice (`auth`, `guardrail`, `transform`, `forward`, `log`). Hooks never see
 * the Koa context: what they need is here.
 */
export interface GatewayContext {
  /** `x-gateway-trace-id` of the request, or a generated one. */
  readonly traceId: string;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  readonly operation: OperationName;
  readonly incoming: IncomingRequest;
  /** Aborted when the client goes away before its response is complete. */
  readonly signal: AbortSignal;
  /** `x-gateway-metadata`, validated. */
  readonly metadata: Readonly<Record<string, string>>;
  /** `x-gateway-strict-api-compliance` (default true). */
  readonly strict: boolean;

  /** Written by the route: the validated request (empty until {@link loadRequest} has run). */
  request: RequestSlice;
  /**
   * Set by the route: reads and validates the request body into `request`. The auth stage runs it
   * once the caller is known, so no body of an unauthenticated request is read, parsed or spooled.
   */
  readonly loadRequest?: () => Promise<void>;
  /** Written by the auth stage. */
  auth?: AuthSlice;
  /** Written by the guardrail stage. */
  guardrail?: GuardrailSlice;
  /** Written by the transform stage. */
  transform?: TransformSlice;
  /** Written by the forward stage. */
  forward?: ForwardSlice;
  /** The answer to send; written by the stage that produced it (transform, or the runner on error). */
  response?: GatewayResponse;
  /** The error that ended the request, if any (set by the runner). */
  error?: GatewayError;
  /** The request's cost in USD, once usage is known and priced (set before the log entry is built). */
  costUsd?: number;
  /**
   * Written by the auth stage as soon as the caller's key is known: `false` when that key keeps
   * request and response bodies out of the log (a virtual key's `log_bodies: false`). Set before
   * the key's own checks run, so that a request they refuse (an expired key) is covered too.
   */
  logBodies?: false;
}

export interface IncomingRequest {
  readonly method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Query string with its `?`, or empty. */
  readonly search: string;
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The client's address: the socket's, or taken from X-Forwarded-For past `server.trustProxy` hops. */
  readonly clientAddress?: string;
}

export interface RequestSlice {
  /** The validated JSON body (JSON operations). */
  readonly body?: unknown;
  /** The JSON body's bytes as received. */
  readonly raw?: Buffer;
  /** The raw body stream (pass-through). */
  readonly stream?: Readable;
  readonly model?: string;
  readonly streaming: boolean;
  /** Removes what reading the request left behind (temporary upload files); called once the response closes. */
  readonly cleanup?: () => Promise<void>;
}

export interface AuthSlice {
  readonly caller: Caller;
  readonly provider: ProviderPlugin;
  readonly target: ProviderTarget;
  /** Headers named in `x-gateway-forward-headers`, passed upstream untouched. */
  readonly forwardHeaders: Readonly<Record<string, string>>;
  /** The guardrail policy that applies (a virtual key's `guardrail_policy`, or the config's default). */
  readonly policy?: string;
}

export interface GuardrailSlice {
  /** The policy that applied, if any. */
  policy?: string;
  /** One entry per guardrail run (for a stream: per guardrail, aggregated over its window checks). */
  readonly verdicts: GuardrailRecord[];
  /** Installed by the guardrail stage when the policy judges output; the operation applies it. */
  output?: OutputFilter;
}

/** One guardrail's verdict as the log records it (a transform's `changes` are counts, never values). */
export interface GuardrailRecord {
  guardrail: string;
  side: GuardrailSide;
  verdict: GuardrailVerdict;
  ms: number;
  /** Set when the guardrail itself failed; the verdict is then what its fail mode decided. */
  failure?: 'error' | 'timeout';
  /** How many times it judged (a stream's windows); absent when once. */
  checks?: number;
}

/** What an output filter needs of every choice, plain or streamed. */
export interface TextChoice {
  index: number;
  finish_reason?: string | null;
  logprobs?: unknown;
}

/** Reads and writes the judged text of one kind of choice. */
export interface ChoiceText<Choice> {
  /** The choice's text; undefined when it carries none to judge. */
  read(choice: Choice): string | undefined;
  /** A copy with `text` as its text (logprobs dropped when the text changed: they would describe the original). */
  write(choice: Choice, text: string): Choice;
}

/** The streamed side of {@link AnswerText}. */
export interface ChunkText<Chunk extends { choices: TextChoice[] }> extends ChoiceText<Chunk['choices'][number]> {
  /** Whether the choice carries something besides its text (a role, tool calls): then it is sent even with its text held back. */
  carriesMore(choice: Chunk['choices'][number]): boolean;
  /** A choice carrying only `text` (held-back text released when the upstream ends). */
  released(index: number, text: string): Chunk['choices'][number];
  /** A chunk with the identity of `source` whose choices (one per index) end with `finish_reason: "content_filter"`. */
  filtered(source: Chunk | undefined, indices: readonly number[]): Chunk;
}

/**
 * Where an operation's answers keep their text (chat: `message.content` and `delta.content`; text
 * completions: `text`), so that one output filter judges every operation that declares it.
 */
export interface AnswerText<Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }> {
  readonly answer: ChoiceText<Response['choices'][number]> & {
    /** The choice denied: its text emptied (as the schema allows) and `finish_reason: "content_filter"`. */
    denied(choice: Response['choices'][number]): Response['choices'][number];
  };
  readonly chunk: ChunkText<Chunk>;
}

/**
 * Judges an answer before the client gets it, without the operation knowing any guardrail: plain
 * answers pass through `response`, streamed ones through a {@link ChunkTransformer}. The operation
 * says where its text is with an {@link AnswerText}.
 */
export interface OutputFilter {
  /** Returns the answer to send (a denial: every choice {@link AnswerText.answer denied}). */
  response<Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }>(response: Response, text: AnswerText<Response, Chunk>): Promise<Response>;
  /** A transformer for one stream. */
  stream<Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }>(text: AnswerText<Response, Chunk>): ChunkTransformer<Chunk>;
}

/**
 * Applied by the stream relay to every chunk that carries choices, before it is written. It may hold
 * text back (and release it with a later chunk), rewrite it, or stop the stream.
 */
export interface ChunkTransformer<Chunk = ChatCompletionChunk> {
  push(chunk: Chunk): Promise<ChunkFilterStep<Chunk>>;
  /** The upstream's stream is complete: what is still held back. */
  end(): Promise<ChunkFilterStep<Chunk>>;
}

export interface ChunkFilterStep<Chunk = ChatCompletionChunk> {
  readonly chunks: Chunk[];
  /**
   * The stream must end after these chunks: the relay sends the usage chunk when asked for and
   * known, then `[DONE]`, and cancels the upstream request.
   */
  readonly stop?: boolean;
}

export interface TransformSlice {
  readonly upstreamRequest: UpstreamRequest;
  /** Token usage, once known (for streams: when the usage event passes). */
  usage?: Usage;
  /** What the request is counted in besides tokens (speech: characters; images: images), once known. */
  units?: UsageUnits;
  /** Model the provider reports. */
  model?: string;
  /** `performance.now()` when the first streamed content chunk went to the client. */
  firstTokenAt?: number;
  /** Set when a stream ended with an error after its headers were sent. */
  streamError?: ErrorBody;
}

/** Counts an operation is measured by besides tokens. */
export interface UsageUnits {
  readonly requests?: number;
  /** Characters of input (speech). */
  readonly characters?: number;
  /** Images produced (image operations). */
  readonly images?: number;
  /** Seconds of audio, when a transcription reports its usage as a duration. */
  readonly seconds?: number;
}

export interface ForwardSlice {
  /** The origin the request went to (named in errors). */
  readonly origin: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The upstream body, unread. */
  readonly body: Readable;
  /** `performance.now()` when the upstream request was sent. */
  readonly sentAt: number;
  /** When the upstream's response headers arrived. */
  readonly headersAt: number;
  /** When the upstream body was fully read (set later for streamed bodies). */
  endedAt?: number;
  /** Counts the bytes of this answer read whole against the memory budget; released when the response closes. */
  readonly memory: MemoryLease;
  /** Most bytes of this answer the gateway reads whole (`upstream.maxAnswerBytes`); more is a 502. */
  readonly maxAnswerBytes: number;
}

/**
 * The gateway's answer: JSON (serialised by the core), bytes, or a stream piped to the client. A
 * JSON answer may carry `serialised`: its exact JSON text, set when the upstream's answer is sent
 * unchanged, so that neither the response nor the log serialises it again. Whoever changes `json`
 * builds a new body without it.
 */
export interface GatewayResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: { readonly json: unknown; readonly serialised?: Uint8Array } | { readonly stream: Readable } | { readonly bytes: Uint8Array } | null;
}
