import type { Readable } from 'node:stream';
import type { GatewayError } from '../errors.js';
import type { MemoryLease } from '../http/memory-budget.js';
import type { GuardrailSide, GuardrailVerdict } from '../spec/guardrail.js';
import type { Caller } from '../spec/key-resolver.js';
import type { ProviderPlugin, ProviderTarget, UpstreamRequest } from '../spec/provider.js';
import type { ErrorBody, OperationName, Usage } from '../spec/unified.js';
import type { AttemptRecord, ResolvedRoute, ResolvedTarget, RouteLabel, SkippedTarget } from '../routing/plan.js';

export type { Caller };

/**
 * The typed context of one request. The route fills `incoming` and `request`; each stage then
 * writes only its own slices (`key`, `auth`, `routing`; `guardrail`; `cache`, `transform`;
 * `forward`, `routed`; `log`), as the ownership table of `docs/architecture.md` lists them (checked
 * by `core/pipeline/ownership.test.ts`; in development the runner freezes a slice once its stage is
 * done). Hooks never see the Koa context: what they need is here.
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

  /**
   * Written by the route's {@link loadRequest} (run by the auth stage): the validated request, empty
   * until then. The guardrail stage's input chain may replace its body (a transform verdict).
   */
  request: RequestSlice;
  /**
   * Set by the route: reads and validates the request body into `request`. The auth stage runs it
   * once the caller is known, so no body of an unauthenticated request is read, parsed or spooled.
   */
  readonly loadRequest?: () => Promise<void>;
  /**
   * Written by the auth stage (its `KeyResolver`) as soon as the caller's key is known, before the
   * key's own checks run, so that a request they refuse (an expired key) is covered too.
   */
  key?: KeySlice;
  /** Written by the auth stage once the caller and target are resolved. */
  auth?: AuthSlice;
  /**
   * Written by the auth stage when the request takes a route (absent on the plain path): the
   * resolved plan and which route it is. `auth` names the route's first provider target (the
   * guardrail policy and the limits read it); the target that answered is `routed.tried`.
   */
  routing?: RoutingSlice;
  /**
   * Written by the forward stage's route executor on a routed request: every attempt's record, and
   * the attempt whose answer the client gets (or the last one tried) as a value. Readers after the
   * forward stage take the answering target's auth and request from here ({@link servingAuth}).
   */
  routed?: RoutedSlice;
  /** Written by the guardrail stage. */
  guardrail?: GuardrailSlice;
  /**
   * Written by the response cache's hook (`core/cache/hook.ts`, transform stage) when the request's
   * route or the configuration caches it: what the lookup found and, on a miss it will store, the
   * recorder the operation reports its answer to.
   */
  cache?: CacheSlice;
  /** Written by the transform stage. */
  transform?: TransformSlice;
  /** Written by the forward stage. */
  forward?: ForwardSlice;
  /** Written by the log-stage hooks that run before `gateway-log`, which reads it. */
  log?: LogSlice;
  /**
   * The answer to send. Written only by `writeResponse` (`core/pipeline/response.ts`): by the transform
   * stage, or by the route with the error response.
   */
  response?: GatewayResponse;
  /** The error that ended the request, if any (set by the runner). */
  error?: GatewayError;
  /**
   * Taps on the streamed answer, in registration order: written only by `tapStream`, applied by
   * `writeResponse` (`core/pipeline/response.ts`). A field, not a WeakMap keyed by the context: a tap's
   * closure holds the context, and V8's young-generation GC keeps such an entry's key alive, which
   * promoted every request's objects to the old generation (+100 MB heap, +30 % CPU under load).
   */
  taps?: StreamTap[];
}

/**
 * Sees (and passes on unchanged) the bytes of a streamed answer on their way to the client: the
 * log's body capture, the limits' usage reader. Returns the stream the client is sent. Given the
 * request's context, so that a tap needs no closure of its own per request.
 */
export type StreamTap = (stream: Readable, response: GatewayResponse, context: GatewayContext) => Readable;

/** The response cache's verdict on a request, as the `x-gateway-cache` response header says it. */
export type CacheStatus = 'HIT' | 'SEMANTIC-HIT' | 'MISS' | 'BYPASS' | 'REFRESH';

export interface CacheSlice {
  readonly status: CacheStatus;
  /** Set on a hit: the stored answer's provider and model, its age, and what it cost when it was made (USD, when priced). */
  readonly hit?: { readonly provider: string; readonly model?: string; readonly ageSeconds: number; readonly savedUsd?: number; readonly similarity?: number };
  /** Set on a miss (or refresh) whose answer may be stored: the operation reports its answer here, before output guardrails. */
  readonly recorder?: AnswerRecorder;
  /**
   * Set when a semantic lookup embedded the request's text: the embeddings call's model, tokens and
   * price (USD, when priced), charged to the caller (added to the request's cost by the settle hook).
   */
  readonly embedding?: EmbeddingSpend;
}

/** What a semantic lookup's embeddings call used. */
export interface EmbeddingSpend {
  readonly provider: string;
  readonly model: string;
  readonly tokens: number;
  readonly costUsd?: number;
}

/**
 * Where an operation reports the answer it maps from the provider, before output guardrails judge
 * it, so that the response cache can store it: a whole answer at once, a stream chunk by chunk.
 */
export interface AnswerRecorder {
  /** A whole answer (a JSON upstream answer, mapped). */
  answer(answer: unknown): void;
  /** One streamed chunk, mapped. */
  chunk(chunk: unknown): void;
  /** The stream is complete (its end marker passed, nothing cut it); resolves once the answer is stored (bounded in time). */
  complete(): Promise<void>;
}

/** What the caller's key says about the request, known before the key is checked further. */
export interface KeySlice {
  /** `false` when the key keeps request and response bodies out of the log (a virtual key's `log_bodies: false`). */
  readonly logBodies?: false;
  /** The models a virtual key is limited to (`limits.allowed_models`): `GET /v1/models` lists only these. */
  readonly allowedModels?: readonly string[];
}

/** What the log entry needs that only the log stage learns. */
export interface LogSlice {
  /** The request's cost in USD, once usage is known and priced (`virtual-key-settle`). */
  costUsd?: number;
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
  /** `raw` decoded (UTF-8), as it was parsed: the log reuses it rather than decoding the bytes again. */
  readonly rawText?: string;
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

export interface RoutingSlice {
  readonly plan: ResolvedRoute;
  readonly label: RouteLabel;
}

/** What the forward stage's route executor learnt while it ran a routed request. */
export interface RoutedSlice {
  /** Every upstream attempt, in order. */
  readonly attempts: AttemptRecord[];
  /**
   * The target whose answer the client gets; while the route runs, and when no attempt answered,
   * the last one tried (even when its mapping failed). Absent when no attempt was made.
   */
  tried?: AttemptTarget;
  /**
   * The attempt whose answer the client gets; while the route runs, and when no attempt answered,
   * the last one mapped. Absent when no attempt was mapped.
   */
  attempt?: Attempt;
  /** The name of the target whose answer the client gets. */
  target?: string;
  /** Targets passed over (an open breaker, the retry budget, the attempt cap), in order; absent when none. */
  skipped?: SkippedTarget[];
  /**
   * Milliseconds spent on the route before the attempt whose answer the client gets was sent:
   * failed attempts and the waits between them (all of it when no attempt answered). Server-Timing
   * and the log report it as `routing`, apart from the gateway's own time.
   */
  routingMs?: number;
}

/** One routed attempt's target as a value, built by the forward stage before the request is mapped for it. */
export interface AttemptTarget {
  readonly target: ResolvedTarget;
  /** The target's provider, credentials and base URL, with the caller, forwarded headers and policy. */
  readonly auth: AuthSlice;
  /** The validated request with the target's `override_params` merged into its body. */
  readonly request: RequestSlice;
  /**
   * The request's context as this attempt's target sees it (`auth` and `request` are the attempt's,
   * every other field is read through from the request's context; it takes no writes): what the
   * operation's mapping and response mapping are given, the same object for both.
   */
  readonly view: GatewayContext;
}

/**
 * One routed attempt, a value the forward stage builds for a target: the target, its provider and
 * credentials, the request with its `override_params`, and the upstream request built from them by
 * the transform stage's pure mapping (`buildUpstreamRequest` in `core/hooks/transform.ts`).
 */
export interface Attempt extends AttemptTarget {
  readonly upstreamRequest: UpstreamRequest;
  /** Fields of the client's request the mapping left out (as {@link TransformSlice.dropped}). */
  readonly dropped?: readonly string[];
}

export interface GuardrailSlice {
  /** The policy that applied, if any. */
  policy?: string;
  /** One entry per guardrail run (for a stream: per guardrail, aggregated over its window checks). */
  readonly verdicts: GuardrailRecord[];
  // `output` (the output judge) is declared by its owner, core/guardrails/output/index.ts (module augmentation).
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
  /**
   * What it flagged in the judged texts (its verdict's `flagged`, else the texts it denied or
   * changed): masked wherever the request is logged, never logged itself. Absent when nothing.
   */
  flagged?: string[];
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
  /** Fields of the client's request the mapping left out because the provider cannot take them (a protocol translation's). */
  readonly dropped?: readonly string[];
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
  readonly body:
    | { readonly json: unknown; readonly serialised?: Uint8Array; /** `serialised` decoded (the log reuses it). */ readonly serialisedText?: string }
    | { readonly stream: Readable }
    | { readonly bytes: Uint8Array }
    | null;
}
