import type { Readable } from 'node:stream';
import type { GatewayError } from '../errors.js';
import type { MemoryLease } from '../http/memory-budget.js';
import type { Caller } from '../spec/key-resolver.js';
import type { ProviderPlugin, ProviderTarget, UpstreamRequest } from '../spec/provider.js';
import type { ErrorBody, OperationName, Usage } from '../spec/unified.js';

export type { Caller };

/**
 * The typed context of one request. The route fills `incoming` and `request`; each stage then
 * writes only its own slices (`key`, `auth`, `routing`; `guardrail`; `cache`, `transform`;
 * `forward`, `routed`; `log`), as the ownership table of `docs/architecture.md` lists them (checked
 * by `core/pipeline/ownership.test.ts`; in development the runner freezes a slice once its stage is
 * done). Hooks never see the Koa context: what they need is here.
 *
 * A subsystem's slices are declared in its own folder by module augmentation, so that this file
 * imports nothing above the pipeline: `routing` and `routed` in `core/routing/slices.ts`,
 * `guardrail` in `core/guardrails/slice.ts`, `cache` in `core/cache/slice.ts`.
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
  /** The auth the request was built with when a credential exchange gave it a token (the forward stage renews it after a 401). */
  readonly exchangedAuth?: AuthSlice;
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
  /** Search units a rerank was billed (Cohere's unit: a query with up to 100 documents). */
  readonly searches?: number;
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
  /**
   * Sends a second request of the same attempt (the stream a first answer names: a stream adapter's
   * `follow`), with the attempt's `auth()`, egress policy, time-out, trace headers and the client's abort.
   */
  readonly follow?: (request: UpstreamRequest) => Promise<ForwardSlice>;
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
