import type { GatewayContext, UsageUnits } from '../pipeline/context.js';
import type { OperationName } from '../spec/unified.js';

/**
 * One request, as logged. A typed value so that sinks (pino now; durable stores later) share one
 * shape. It never holds headers, bodies or credentials; error messages pass through
 * {@link redactSecrets} first.
 */
export interface LogEntry {
  readonly time: string;
  readonly traceId: string;
  readonly method: string;
  readonly path: string;
  readonly operation: OperationName;
  readonly provider?: string;
  readonly model?: string;
  readonly status: number;
  readonly outcome: 'ok' | 'error' | 'stream_error' | 'client_closed';
  readonly error?: { readonly type: string; readonly code: string | null; readonly message: string };
  readonly caller?: string;
  readonly streaming: boolean;
  readonly durationMs: number;
  readonly gatewayMs: number;
  readonly upstreamMs?: number;
  readonly timeToFirstTokenMs?: number;
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number; readonly totalTokens: number };
  /** Counts besides tokens: requests and characters for speech, requests and images for image operations. */
  readonly units?: UsageUnits;
  /** The request's cost in USD from its usage and the price table, when both are known. */
  readonly costUsd?: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly guardrailPolicy?: string;
  readonly guardrails: ReadonlyArray<LoggedVerdict>;
}

/** One guardrail verdict as logged: a denial's reason, a transform's counts by kind, never values. */
export interface LoggedVerdict {
  readonly guardrail: string;
  readonly side: string;
  readonly action: string;
  readonly ms: number;
  readonly reason?: string;
  readonly changes?: Readonly<Record<string, number>>;
  /** The guardrail itself errored or timed out; `action` is what its fail mode decided. */
  readonly failure?: 'error' | 'timeout';
  /** Window checks of a stream, when more than one. */
  readonly checks?: number;
}

/** A destination for log entries. Writes must not block the response path. */
export interface LogSink {
  write(entry: LogEntry): void;
}

const KEY_LIKE = /\b(?:sk|pk|rk|gw|vk|gsk|xai|key)-[A-Za-z0-9_-]{8,}|\bBearer\s+\S+|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{20,}/g;

/** Removes the given secrets and anything shaped like an API key or a Bearer credential. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let redacted = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) redacted = redacted.split(secret).join('[REDACTED]');
  }
  return redacted.replace(KEY_LIKE, '[REDACTED]');
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/** Builds the entry for a finished request. */
export function buildLogEntry(context: GatewayContext, finishedAt: number): LogEntry {
  const { forward, transform, auth, response, error } = context;
  const clientClosed = context.signal.aborted;
  const status = clientClosed ? 499 : (error?.status ?? response?.status ?? 500);
  const durationMs = finishedAt - context.startedAt;
  const upstreamMs = forward ? (forward.endedAt ?? finishedAt) - forward.sentAt : undefined;
  const failure = error?.body ?? transform?.streamError;
  const secrets = [auth?.target.credentials.apiKey, context.incoming.headers['x-gateway-api-key']];
  const usage = transform?.usage;
  return {
    time: new Date().toISOString(),
    traceId: context.traceId,
    method: context.incoming.method,
    path: context.incoming.path,
    operation: context.operation,
    provider: auth?.provider.id ?? context.incoming.headers['x-gateway-provider'],
    model: transform?.model ?? context.request.model,
    status,
    outcome: clientClosed ? 'client_closed' : error || status >= 400 ? 'error' : transform?.streamError ? 'stream_error' : 'ok',
    ...(failure ? { error: { type: failure.type, code: failure.code, message: redactSecrets(failure.message, secrets) } } : {}),
    caller: auth ? (auth.caller.type === 'account' ? 'account' : `virtual-key:${auth.caller.id}`) : undefined,
    streaming: context.request.streaming,
    durationMs: round(durationMs),
    gatewayMs: round(durationMs - (upstreamMs ?? 0)),
    ...(upstreamMs === undefined ? {} : { upstreamMs: round(upstreamMs) }),
    ...(transform?.firstTokenAt === undefined ? {} : { timeToFirstTokenMs: round(transform.firstTokenAt - context.startedAt) }),
    ...(usage
      ? { usage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, totalTokens: usage.total_tokens } }
      : {}),
    ...(transform?.units ? { units: transform.units } : {}),
    ...(context.costUsd === undefined ? {} : { costUsd: context.costUsd }),
    metadata: context.metadata,
    ...(context.guardrail?.policy ? { guardrailPolicy: context.guardrail.policy } : {}),
    guardrails: (context.guardrail?.verdicts ?? []).map((entry) => ({
      guardrail: entry.guardrail,
      side: entry.side,
      action: entry.verdict.action,
      ms: round(entry.ms),
      ...(entry.verdict.action === 'deny' ? { reason: redactSecrets(entry.verdict.reason, secrets) } : {}),
      ...(entry.verdict.action === 'transform' ? { changes: { ...entry.verdict.changes } } : {}),
      ...(entry.failure ? { failure: entry.failure } : {}),
      ...(entry.checks ? { checks: entry.checks } : {}),
    })),
  };
}
