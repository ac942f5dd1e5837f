import { SseDecoder } from '../http/sse.js';
import type { LogBodies, LogEntry } from './entry.js';
import { redactSecrets } from './entry.js';

/** One logged request as the log store keeps it and the admin API answers it (snake_case). */
export interface LogRecord {
  id: string;
  time: string;
  trace_id: string;
  caller_type: 'account' | 'virtual-key' | null;
  key_id: string | null;
  key_name: string | null;
  provider: string | null;
  model: string | null;
  operation: string;
  method: string;
  path: string;
  status: number;
  outcome: string;
  error_type: string | null;
  error_code: string | null;
  error_message: string | null;
  streaming: boolean;
  latency_ms: number;
  gateway_ms: number;
  upstream_ms: number | null;
  ttft_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  /** What the response cache did (`HIT`, `SEMANTIC-HIT`, `MISS`, `BYPASS`, `REFRESH`); null when it did not apply. */
  cache_status: string | null;
  /** On a hit: what the stored answer cost when it was made (USD), saved by serving it again. */
  cache_saved_usd: number | null;
  metadata: Record<string, string>;
  guardrails: Array<{ guardrail: string; side: string; action: string; ms: number }>;
  /** A routed request's route and upstream attempts (absent on the plain path). */
  routing?: { route?: LogEntry['route']; attempts: NonNullable<LogEntry['attempts']> };
  /** Request fields a protocol translation left out because the provider cannot use them (absent when none). */
  dropped_fields?: string[];
  /** Redacted and size-capped; null when body logging was off or the body was not captured. */
  request_body: string | null;
  response_body: string | null;
}

/** A record without its bodies (list answers). */
export type LogSummary = Omit<LogRecord, 'request_body' | 'response_body'>;

const SUMMARY_FIELDS: ReadonlyArray<keyof LogSummary> = [
  'id', 'time', 'trace_id', 'caller_type', 'key_id', 'key_name', 'provider', 'model', 'operation', 'method', 'path', 'status',
  'outcome', 'error_type', 'error_code', 'error_message', 'streaming', 'latency_ms', 'gateway_ms', 'upstream_ms', 'ttft_ms',
  'prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'total_tokens', 'cost_usd', 'cache_status', 'cache_saved_usd', 'metadata', 'guardrails',
];

/** The scalar columns of a record, in a fixed order (both stores use it). */
export const SCALAR_FIELDS = SUMMARY_FIELDS.filter((field) => field !== 'metadata' && field !== 'guardrails' && field !== 'time');

/** Default cap of each stored body, in bytes of text. */
export const DEFAULT_BODY_MAX_BYTES = 32 * 1024;

/** Margin redacted past the cap, so that a secret cut by the cap cannot leak its prefix. */
const MARGIN = 512;

function capText(text: string, maxBytes: number, secrets: LogBodies['secrets'], totalLength = text.length): string {
  const window = text.length > maxBytes + MARGIN ? text.slice(0, maxBytes + MARGIN) : text;
  const redacted = redactSecrets(window, secrets);
  if (redacted.length <= maxBytes && totalLength === text.length && window.length === text.length) return redacted;
  return `${redacted.slice(0, maxBytes)}…[truncated, ${totalLength} in all]`;
}

const requestText = (bytes: Buffer, maxBytes: number, secrets: LogBodies['secrets']) =>
  capText(bytes.subarray(0, maxBytes + MARGIN).toString('utf8'), maxBytes, secrets, bytes.length > maxBytes + MARGIN ? bytes.length : undefined);

const chunkText = (chunk: Uint8Array | string) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8'));

/** The events of an SSE text, by the gateway's decoder (an event the text cuts off is left out). */
function sseEvents(text: string) {
  const decoder = new SseDecoder();
  return [...decoder.push(Buffer.from(text)), ...decoder.end()];
}

/**
 * Turns the SSE text a client received into one JSON summary: the assembled content of each
 * choice, the model, finish reasons and usage. Falls back to the raw text when it is not SSE JSON.
 */
export function assembleStream(text: string, truncated: boolean): string {
  const content: string[] = [];
  const finishReasons: string[] = [];
  let model: string | undefined;
  let usage: unknown;
  let error: unknown;
  let events = 0;
  for (const { data: raw } of sseEvents(text)) {
    const data = raw.trim();
    if (data === '[DONE]' || data === '') continue;
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      continue;
    }
    events++;
    if (chunk?.error) error = chunk.error;
    if (typeof chunk?.model === 'string') model ??= chunk.model;
    if (chunk?.usage) usage = chunk.usage;
    for (const choice of Array.isArray(chunk?.choices) ? chunk.choices : []) {
      const index = typeof choice?.index === 'number' ? choice.index : 0;
      const delta = choice?.delta?.content ?? choice?.text;
      if (typeof delta === 'string') content[index] = (content[index] ?? '') + delta;
      if (typeof choice?.finish_reason === 'string') finishReasons[index] = choice.finish_reason;
    }
  }
  if (events === 0) return text;
  const summary: Record<string, unknown> = { stream: true, model, content: content.length <= 1 ? (content[0] ?? '') : content };
  if (finishReasons.length > 0) summary.finish_reason = finishReasons.length === 1 ? finishReasons[0] : finishReasons;
  if (usage !== undefined) summary.usage = usage;
  if (error !== undefined) summary.error = error;
  if (truncated) summary.truncated = true;
  return JSON.stringify(summary, null, 0);
}

function responseText(response: NonNullable<LogBodies['response']>): string {
  if ('json' in response) return response.serialised ? chunkText(response.serialised) : JSON.stringify(response.json);
  return assembleStream(response.chunks.map(chunkText).join(''), response.truncated);
}

/**
 * Builds the stored record: done by the log writer, off the request path, which is where the
 * bodies are serialised, capped and redacted.
 */
export function toLogRecord(entry: LogEntry, bodies: LogBodies | undefined, bodyMaxBytes = DEFAULT_BODY_MAX_BYTES): LogRecord {
  const usage = entry.usage;
  const record: LogRecord = {
    id: entry.id,
    time: entry.time,
    trace_id: entry.traceId,
    caller_type: entry.callerType ?? null,
    key_id: entry.keyId ?? null,
    key_name: entry.keyName ?? null,
    provider: entry.provider ?? null,
    model: entry.model ?? null,
    operation: entry.operation,
    method: entry.method,
    path: entry.path,
    status: entry.status,
    outcome: entry.outcome,
    error_type: entry.error?.type ?? null,
    error_code: entry.error?.code ?? null,
    error_message: entry.error?.message ?? null,
    streaming: entry.streaming,
    latency_ms: entry.durationMs,
    gateway_ms: entry.gatewayMs,
    upstream_ms: entry.upstreamMs ?? null,
    ttft_ms: entry.timeToFirstTokenMs ?? null,
    prompt_tokens: usage?.promptTokens ?? null,
    completion_tokens: usage?.completionTokens ?? null,
    cached_tokens: usage?.cachedTokens ?? null,
    reasoning_tokens: usage?.reasoningTokens ?? null,
    total_tokens: usage?.totalTokens ?? null,
    cost_usd: entry.costUsd ?? null,
    cache_status: entry.cache?.status ?? null,
    cache_saved_usd: entry.cache?.savedUsd ?? null,
    metadata: { ...entry.metadata },
    guardrails: entry.guardrails.map((verdict) => ({ ...verdict })),
    request_body: bodies?.request ? requestText(bodies.request, bodyMaxBytes, bodies.secrets) : null,
    response_body: bodies?.response ? capText(responseText(bodies.response), bodyMaxBytes, bodies.secrets) : null,
  };
  if (entry.droppedFields?.length) record.dropped_fields = [...entry.droppedFields];
  if (entry.attempts) record.routing = { ...(entry.route ? { route: entry.route } : {}), attempts: entry.attempts };
  return record;
}
