import type { GatewayContext, UsageUnits } from '../pipeline/context.js';
import type { CacheStatus } from '../cache/slice.js';
import type { GuardrailRecord } from '../guardrails/slice.js';
import type { OperationName } from '../spec/unified.js';
import { ATTEMPT_MESSAGE_MAX, type AttemptRecord, type SkippedTarget } from '../routing/plan.js';
import { timeOrderedId } from '../ids.js';
import { redactSecrets } from '../redact.js';
import { servedRequest, servingAuth } from '../routing/attempt.js';

/**
 * One request, as logged. A typed value so that sinks (pino, the durable log store, metrics,
 * traces) share one shape. It never holds headers, bodies or credentials; error messages pass
 * through {@link redactSecrets} first. Bodies travel beside it ({@link LogBodies}) to the sinks
 * that store them.
 */
export interface LogEntry {
  /** Unique id of the entry (the admin API's `id`). */
  readonly id: string;
  /**
   * The entry is a later state of one already written under its id (a batch's, as it progresses):
   * the stores replace the stored row, unless it holds a longer `durationMs` (a later state written
   * first, as a replayed spill may). Absent: written once, a second write of the id is ignored.
   */
  readonly replaces?: true;
  /** An intermediate state of a `replaces` entry (a batch not ended yet): sinks that count requests (metrics) skip it, and count the final one. */
  readonly progress?: true;
  readonly time: string;
  readonly traceId: string;
  readonly method: string;
  readonly path: string;
  /** The unified operation, or `mcp` for a request to the MCP endpoint (the `mcp` field then says what it was). */
  readonly operation: OperationName;
  /** An MCP request's JSON-RPC method, the upstream server and tool it reached (docs/mcp.md). */
  readonly mcp?: { readonly server?: string; readonly method: string; readonly tool?: string; readonly session?: string };
  readonly provider?: string;
  readonly model?: string;
  readonly status: number;
  readonly outcome: 'ok' | 'error' | 'stream_error' | 'client_closed';
  readonly error?: { readonly type: string; readonly code: string | null; readonly message: string };
  /** `account` or `virtual-key:<id>` (kept for log readers); the three fields below split it. */
  readonly caller?: string;
  readonly callerType?: 'account' | 'virtual-key' | 'service-account';
  readonly keyId?: string;
  readonly keyName?: string;
  /** The end user the client named: the request's `user` field (Messages: `metadata.user_id`), at most 256 characters. */
  readonly endUser?: string;
  readonly streaming: boolean;
  readonly durationMs: number;
  /** The gateway's own time: the duration less the upstream's and, under routing, less `routingMs`. */
  readonly gatewayMs: number;
  readonly upstreamMs?: number;
  /** A routed request's failed attempts and back-off waits before the attempt whose answer the client got (all of them when none answered). */
  readonly routingMs?: number;
  readonly timeToFirstTokenMs?: number;
  /** Token usage; `cachedTokens` and `reasoningTokens` only when the provider reported a non-zero count. */
  readonly usage?: {
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly totalTokens: number;
    readonly cachedTokens?: number;
    readonly reasoningTokens?: number;
  };
  /** Counts besides tokens: requests and characters for speech, requests and images for image operations. */
  readonly units?: UsageUnits;
  /** The request's cost in USD from its usage and the price table, when both are known. */
  readonly costUsd?: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly guardrailPolicy?: string;
  readonly guardrails: ReadonlyArray<LoggedVerdict>;
  /** A routed request's route: a config or alias name, or a stored route's id, name and version. */
  readonly route?: { readonly name?: string; readonly id?: string; readonly version?: number; readonly source: string };
  /** A routed request's upstream attempts, in order (the last one's answer is what the client got). */
  readonly attempts?: ReadonlyArray<AttemptRecord>;
  /** A routed request's targets passed over: an open breaker, a spent retry budget, the per-request attempt cap. */
  readonly skipped?: ReadonlyArray<SkippedTarget>;
  /**
   * What the response cache did (absent when it does not apply): on a hit, the stored answer's age,
   * the similarity of a semantic hit, and what the answer cost when it was made, saved now; when a
   * semantic lookup embedded the request's text, the tokens and cost of that (part of `costUsd`).
   */
  readonly cache?: {
    readonly status: CacheStatus;
    readonly savedUsd?: number;
    readonly ageSeconds?: number;
    readonly similarity?: number;
    readonly embeddingTokens?: number;
    readonly embeddingUsd?: number;
  };
  /** Fields of the request the provider could not take, left out by a protocol translation (docs/protocols.md). */
  readonly droppedFields?: ReadonlyArray<string>;
}

/** One guardrail verdict as logged: a denial's reason, a transform's counts by kind, never values. */
export interface LoggedVerdict {
  /** The policy whose chain gave it (what `GET /admin/policies/verdicts` counts by). */
  readonly policy?: string;
  readonly guardrail: string;
  readonly side: string;
  readonly action: string;
  readonly ms: number;
  readonly reason?: string;
  readonly changes?: Readonly<Record<string, number>>;
  /** The guardrail itself errored or timed out; `action` is what its fail mode decided. */
  readonly failure?: 'error' | 'timeout';
  /** With a failure: the step's fail mode, which decided `action` (`fail-open`: let through although the guardrail failed). */
  readonly onError?: 'fail-closed' | 'fail-open';
  /** Window checks of a stream, when more than one. */
  readonly checks?: number;
  /** Checks that reused the verdict of identical text judged earlier in the request (no second call). */
  readonly cached?: number;
}

/**
 * The request and response bodies of one request, as references captured on the hot path; the
 * log store's writer serialises, caps and redacts them later (see `core/logs/record.ts`).
 */
export interface LogBodies {
  /**
   * The JSON request body's bytes as received (JSON operations only), or the body itself when the
   * gateway rewrote it (a guardrail's redaction, a route target's `override_params`, a
   * `provider/model` prefix): then what was sent on is logged, serialised by the writer.
   */
  readonly request?: Buffer | { readonly json: unknown };
  /** The request's bytes decoded, when they were for parsing (the writer then need not decode them again). */
  readonly requestText?: string;
  /** The JSON answer, or the bytes streamed to the client (SSE), or nothing; `serialisedText` is `serialised` decoded, when it was. */
  readonly response?:
    | { readonly json: unknown; readonly serialised?: Uint8Array; readonly serialisedText?: string }
    | { readonly chunks: ReadonlyArray<Uint8Array | string>; readonly truncated: boolean };
  /** Secrets of this request to remove from the text (provider key, caller key). */
  readonly secrets: ReadonlyArray<string | undefined>;
  /** What guardrails flagged in this request or its answer, to mask ({@link maskFlagged}); absent when nothing. */
  readonly flagged?: ReadonlyArray<string>;
}

/** What replaces a value a guardrail flagged, wherever the request is logged. */
export const FLAGGED_MARKER = '[FLAGGED]';

/** What the guardrails of a request flagged (in its input or its answer), or undefined when nothing. */
export function flaggedValues(context: GatewayContext): string[] | undefined {
  const verdicts = context.guardrail?.verdicts;
  if (!verdicts || verdicts.length === 0) return undefined;
  let values: string[] | undefined;
  for (const record of verdicts) if (record.flagged) (values ??= []).push(...record.flagged);
  return values;
}

/**
 * Replaces every value a guardrail flagged, as it is and as it reads inside a JSON string (a
 * quote, a backslash, a line break escaped), by {@link FLAGGED_MARKER}; longer values first, so a
 * value inside another is not left half-masked.
 */
export function maskFlagged(text: string, flagged: ReadonlyArray<string> | undefined): string {
  if (!flagged || flagged.length === 0) return text;
  const forms = new Set<string>();
  for (const value of flagged) {
    if (value.length === 0) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
  }
  let masked = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) if (masked.includes(form)) masked = masked.split(form).join(FLAGGED_MARKER);
  return masked;
}

const entryTexts = new WeakMap<LogEntry, string>();

/**
 * The entry's JSON text, made once per entry: the pino line and the SQLite log worker's batch both
 * carry it (sinks never change an entry).
 */
export function entryJson(entry: LogEntry): string {
  let text = entryTexts.get(entry);
  if (text === undefined) {
    text = JSON.stringify(entry);
    entryTexts.set(entry, text);
  }
  return text;
}

/** A destination for log entries. Writes must not block the response path. */
export interface LogSink {
  /**
   * `bodies` is present when body logging is on for this request; `context` is the finished
   * request's context, for sinks that correlate more than the entry holds (traces).
   */
  write(entry: LogEntry, bodies?: LogBodies, context?: GatewayContext): void;
}



const round = (value: number) => Math.round(value * 1000) / 1000;

const detail = (details: Record<string, unknown> | null | undefined, name: string): number | undefined => {
  const value = details?.[name];
  // Zero counts are left out: most providers send them for every request, and absent reads the same.
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
};

/** The secrets of a request that must never reach a log: the provider credential (with a stored credential's fields) and the caller's key. */
export function requestSecrets(context: GatewayContext): Array<string | undefined> {
  const credentials = servingAuth(context)?.target.credentials;
  return [credentials?.apiKey, ...Object.values(credentials?.fields ?? {}), context.incoming.headers['x-gateway-api-key']];
}

/** Builds the entry for a finished request. */
export function buildLogEntry(context: GatewayContext, finishedAt: number): LogEntry {
  // Optional fields are assigned one by one rather than spread in: conditional object spreads made
  // this function ~2% of the request thread's CPU.
  const { forward, transform, response, error } = context;
  const auth = servingAuth(context);
  const request = servedRequest(context);
  const clientClosed = context.signal.aborted;
  const status = clientClosed ? 499 : (error?.status ?? response?.status ?? 500);
  const durationMs = finishedAt - context.startedAt;
  const upstreamMs = forward ? (forward.endedAt ?? finishedAt) - forward.sentAt : undefined;
  const failure = error?.body ?? transform?.streamError;
  const secrets = requestSecrets(context);
  const flagged = flaggedValues(context);
  const usage = transform?.usage;
  const caller = auth?.caller;
  const hit = context.cache?.hit;
  const entry: Mutable<LogEntry> = {
    id: timeOrderedId(),
    time: new Date().toISOString(),
    traceId: context.traceId,
    method: context.incoming.method,
    path: context.incoming.path,
    operation: context.operation,
    provider: hit?.provider ?? auth?.provider.id ?? context.incoming.headers['x-gateway-provider'],
    model: transform?.model ?? hit?.model ?? request.model,
    status,
    outcome: clientClosed ? 'client_closed' : error || status >= 400 ? 'error' : transform?.streamError ? 'stream_error' : 'ok',
    caller: caller ? (caller.type === 'account' ? 'account' : `${caller.type}:${caller.id}`) : undefined,
    streaming: request.streaming,
    durationMs: round(durationMs),
    gatewayMs: round(Math.max(0, durationMs - (upstreamMs ?? 0) - (context.routed?.routingMs ?? 0))),
    metadata: context.metadata,
    guardrails: (context.guardrail?.verdicts ?? []).map((record) => loggedVerdict(record, secrets, context.guardrail?.policy, flagged)),
  };
  // A policy that reveals reasons puts the reason in the error message: what was flagged is masked there too.
  if (failure) entry.error = { type: failure.type, code: failure.code, message: maskFlagged(redactSecrets(failure.message, secrets), flagged) };
  if (caller) entry.callerType = caller.type;
  if (caller?.type === 'virtual-key') {
    entry.keyId = caller.id;
    entry.keyName = caller.name;
  }
  const endUser = endUserOf(request.body);
  if (endUser !== undefined) entry.endUser = endUser;
  if (upstreamMs !== undefined) entry.upstreamMs = round(upstreamMs);
  if (transform?.firstTokenAt !== undefined) entry.timeToFirstTokenMs = round(transform.firstTokenAt - context.startedAt);
  if (usage) {
    const tokens: Mutable<NonNullable<LogEntry['usage']>> = { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, totalTokens: usage.total_tokens };
    const cachedTokens = detail(usage.prompt_tokens_details, 'cached_tokens');
    const reasoningTokens = detail(usage.completion_tokens_details, 'reasoning_tokens');
    if (cachedTokens !== undefined) tokens.cachedTokens = cachedTokens;
    if (reasoningTokens !== undefined) tokens.reasoningTokens = reasoningTokens;
    entry.usage = tokens;
  }
  if (transform?.units) entry.units = transform.units;
  if (context.log?.costUsd !== undefined) entry.costUsd = context.log.costUsd;
  if (context.guardrail?.policy) entry.guardrailPolicy = context.guardrail.policy;
  if (context.cache) entry.cache = cacheOf(context.cache, hit);
  if (transform?.dropped) entry.droppedFields = transform.dropped;
  if (context.routing) {
    entry.route = context.routing.label;
    const attempts = context.routed?.attempts ?? [];
    // The answer's usage belongs to the attempt that gave it, the last one.
    entry.attempts = usage && attempts.length > 0 ? [...attempts.slice(0, -1), { ...attempts[attempts.length - 1], usage }] : attempts;
    // The last failed answer is the client's: its code and message are the error's (read by the transform stage, not the executor).
    const last = entry.attempts.at(-1);
    if (failure && last && last.status >= 400 && last.message === undefined) {
      entry.attempts = [...entry.attempts.slice(0, -1), { ...last, errorCode: last.errorCode ?? failure.code ?? failure.type, message: capMessage(redactSecrets(failure.message, secrets)) }];
    }
    if (context.routed?.routingMs !== undefined) entry.routingMs = round(context.routed.routingMs);
    if (context.routed?.skipped) entry.skipped = context.routed.skipped;
  }
  return entry;
}

const capMessage = (message: string): string => (message.length > ATTEMPT_MESSAGE_MAX ? `${message.slice(0, ATTEMPT_MESSAGE_MAX - 1)}…` : message);

/** Longest end user id kept; a longer one is cut (the usage split groups by it). */
const END_USER_MAX = 256;

/**
 * The end user a request names: the `user` field of the OpenAI-shaped bodies (chat, completions,
 * embeddings, images, Responses), or `metadata.user_id` of a Messages body.
 */
export function endUserOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const fields = body as { user?: unknown; metadata?: { user_id?: unknown } | null };
  const user = typeof fields.user === 'string' ? fields.user : typeof fields.metadata?.user_id === 'string' ? fields.metadata.user_id : undefined;
  return user === undefined || user === '' ? undefined : user.slice(0, END_USER_MAX);
}

type Mutable<T> = { -readonly [Field in keyof T]: T[Field] };

function cacheOf({ status, embedding }: NonNullable<GatewayContext['cache']>, hit: NonNullable<GatewayContext['cache']>['hit']): NonNullable<LogEntry['cache']> {
  const logged: Mutable<NonNullable<LogEntry['cache']>> = { status };
  if (embedding !== undefined) {
    logged.embeddingTokens = embedding.tokens;
    if (embedding.costUsd !== undefined) logged.embeddingUsd = embedding.costUsd;
  }
  if (hit === undefined) return logged;
  logged.ageSeconds = hit.ageSeconds;
  if (hit.savedUsd !== undefined) logged.savedUsd = hit.savedUsd;
  if (hit.similarity !== undefined) logged.similarity = round(hit.similarity);
  return logged;
}

function loggedVerdict(record: GuardrailRecord, secrets: ReadonlyArray<string | undefined>, policy: string | undefined, flagged: string[] | undefined): LoggedVerdict {
  const logged: Mutable<LoggedVerdict> = { ...(policy !== undefined ? { policy } : {}), guardrail: record.guardrail, side: record.side, action: record.verdict.action, ms: round(record.ms) };
  // A reason must not quote what was flagged; one that does has it masked.
  if (record.verdict.action === 'deny') logged.reason = maskFlagged(redactSecrets(record.verdict.reason, secrets), flagged);
  if (record.verdict.action === 'transform') logged.changes = { ...record.verdict.changes };
  if (record.failure) logged.failure = record.failure;
  if (record.onError) logged.onError = record.onError;
  if (record.checks) logged.checks = record.checks;
  if (record.cached) logged.cached = record.cached;
  return logged;
}
