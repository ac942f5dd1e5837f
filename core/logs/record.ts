import { SseDecoder } from '../http/sse.js';
import type { LogBodies, LogEntry } from './entry.js';
import { maskFlagged } from './entry.js';
import { redactSecrets } from '../redact.js';

/** One logged request as the log store keeps it and the admin API answers it (snake_case). */
export interface LogRecord {
  id: string;
  time: string;
  trace_id: string;
  caller_type: 'account' | 'virtual-key' | 'service-account' | null;
  key_id: string | null;
  key_name: string | null;
  /** The end user the client named (the request's `user` field); null when it named none. */
  end_user: string | null;
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
  /** Each verdict with the policy that gave it (absent in rows logged before it was recorded). */
  guardrails: Array<{ policy?: string; guardrail: string; side: string; action: string; ms: number }>;
  /** A routed request's route and upstream attempts (absent on the plain path). */
  routing?: { route?: LogEntry['route']; attempts: NonNullable<LogEntry['attempts']>; skipped?: NonNullable<LogEntry['skipped']>; routing_ms?: number };
  /** Request fields a protocol translation left out because the provider cannot use them (absent when none). */
  dropped_fields?: string[];
  /** A later state of the row of this id (see `LogEntry.replaces`); not a column. */
  replaces?: true;
  /** Redacted and size-capped; null when body logging was off or the body was not captured. */
  request_body: string | null;
  response_body: string | null;
}

/** A record without its bodies (list answers). */
export type LogSummary = Omit<LogRecord, 'request_body' | 'response_body'>;

const SUMMARY_FIELDS: ReadonlyArray<keyof LogSummary> = [
  'id', 'time', 'trace_id', 'caller_type', 'key_id', 'key_name', 'end_user', 'provider', 'model', 'operation', 'method', 'path', 'status',
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

const chunkText = (chunk: Uint8Array | string) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8'));

/**
 * A request's bodies as plain text, before redaction and capping: what the request thread hands
 * to the log writer, which may run in another thread (`recordFromText` does the rest there).
 */
export interface TextBodies {
  /** The first `maxBytes` + margin bytes of the request body, and its whole length when it was longer. */
  readonly request?: { readonly text: string; readonly totalBytes?: number };
  /** The JSON answer's text, or the SSE text the client received (`stream`, assembled later). */
  readonly response?: { readonly text: string; readonly stream?: true; readonly truncated?: true };
  readonly secrets: ReadonlyArray<string>;
  /** What guardrails flagged, masked in both bodies before they are capped (absent when nothing). */
  readonly flagged?: ReadonlyArray<string>;
}

/** A log entry and its bodies as text: JSON-safe, so it can cross to a worker thread. */
export interface PendingRecord {
  readonly entry: LogEntry;
  readonly bodies?: TextBodies;
}

/** Only conversions to text (no redaction, no parsing): cheap enough for the request thread. */
export function textBodies(bodies: LogBodies, maxBytes = DEFAULT_BODY_MAX_BYTES): TextBodies {
  const secrets = bodies.secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
  const text: { request?: TextBodies['request']; response?: TextBodies['response']; secrets: string[]; flagged?: ReadonlyArray<string> } = { secrets };
  if (bodies.flagged && bodies.flagged.length > 0) text.flagged = bodies.flagged;
  if (Buffer.isBuffer(bodies.request)) {
    const whole = bodies.request.length <= maxBytes + MARGIN;
    // The text the body was parsed from is the same as decoding it again, when the window is all of it.
    const window = whole && bodies.requestText !== undefined ? bodies.requestText : bodies.request.subarray(0, maxBytes + MARGIN).toString('utf8');
    text.request = whole ? { text: window } : { text: window, totalBytes: bodies.request.length };
  } else if (bodies.request) {
    text.request = { text: JSON.stringify(bodies.request.json) };
  }
  const response = bodies.response;
  if (response && 'json' in response) text.response = { text: response.serialised ? (response.serialisedText ?? chunkText(response.serialised)) : JSON.stringify(response.json) };
  else if (response) text.response = response.truncated ? { text: response.chunks.map(chunkText).join(''), stream: true, truncated: true } : { text: response.chunks.map(chunkText).join(''), stream: true };
  return text;
}

/** The events of an SSE text, by the gateway's decoder (an event the text cuts off is left out). */
function sseEvents(text: string) {
  const decoder = new SseDecoder();
  return [...decoder.push(Buffer.from(text)), ...decoder.end()];
}

/**
 * Turns the SSE text a client received into one JSON summary: the assembled content of each
 * choice, the model, finish reasons and usage, in the three streamed APIs' events (chat chunks,
 * Responses events, Messages events). A chat stream's tool calls are kept (`tool_calls`: their
 * argument deltas joined), a Responses stream's final output items (`output`), a Messages
 * stream's content blocks (`content_blocks`: text, thinking, tool input assembled). Falls back to
 * the raw text when it is not SSE JSON.
 */
export function assembleStream(text: string, truncated: boolean): string {
  const content: string[] = [];
  const finishReasons: string[] = [];
  // By choice and call index (`0:1`), in the order the calls began.
  type ToolCall = { choice: number; id?: string; name: string; arguments: string };
  const toolCalls = new Map<string, ToolCall>();
  const blocks: Array<Record<string, any>> = [];
  let output: unknown;
  let model: string | undefined;
  let usage: unknown;
  let error: unknown;
  let events = 0;
  const addText = (index: number, delta: string) => {
    content[index] = (content[index] ?? '') + delta;
  };
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
    // A Messages `message_delta` carries the output count only: merged below.
    if (chunk?.usage && chunk.type !== 'message_delta') usage = chunk.usage;
    for (const choice of Array.isArray(chunk?.choices) ? chunk.choices : []) {
      const index = typeof choice?.index === 'number' ? choice.index : 0;
      const delta = choice?.delta?.content ?? choice?.text;
      if (typeof delta === 'string') addText(index, delta);
      if (typeof choice?.finish_reason === 'string') finishReasons[index] = choice.finish_reason;
      for (const call of Array.isArray(choice?.delta?.tool_calls) ? choice.delta.tool_calls : []) {
        const key = `${index}:${typeof call?.index === 'number' ? call.index : 0}`;
        const target: ToolCall = toolCalls.get(key) ?? { choice: index, name: '', arguments: '' };
        toolCalls.set(key, target);
        if (typeof call?.id === 'string') target.id = call.id;
        if (typeof call?.function?.name === 'string') target.name += call.function.name;
        if (typeof call?.function?.arguments === 'string') target.arguments += call.function.arguments;
      }
    }
    // Responses API events: text deltas; the final response carries the output items and usage.
    if (typeof chunk?.type === 'string' && chunk.type.startsWith('response.')) {
      if (chunk.type === 'response.output_text.delta' && typeof chunk.delta === 'string') addText(0, chunk.delta);
      const response = chunk.response;
      if (response && typeof response === 'object') {
        if (typeof response.model === 'string') model ??= response.model;
        if (response.usage) usage = response.usage;
        if (Array.isArray(response.output) && response.output.length > 0) output = response.output;
        if (response.error) error = response.error;
      }
    }
    // Messages API events: content blocks started, then their deltas; the stop reason at the end.
    if (chunk?.type === 'message_start' && chunk.message) {
      if (typeof chunk.message.model === 'string') model ??= chunk.message.model;
      if (chunk.message.usage) usage = chunk.message.usage;
    } else if (chunk?.type === 'content_block_start' && chunk.content_block && typeof chunk.index === 'number') {
      blocks[chunk.index] = { ...chunk.content_block };
    } else if (chunk?.type === 'content_block_delta' && blocks[chunk.index]) {
      const block = blocks[chunk.index];
      const delta = chunk.delta ?? {};
      if (delta.type === 'text_delta' && typeof delta.text === 'string') {
        block.text = (block.text ?? '') + delta.text;
        addText(0, delta.text);
      } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') block.thinking = (block.thinking ?? '') + delta.thinking;
      else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') block.partial = (block.partial ?? '') + delta.partial_json;
    } else if (chunk?.type === 'message_delta') {
      if (typeof chunk.delta?.stop_reason === 'string') finishReasons[0] = chunk.delta.stop_reason;
      if (chunk.usage && usage && typeof usage === 'object') usage = { ...usage, ...chunk.usage };
      else if (chunk.usage) usage = chunk.usage;
    }
  }
  if (events === 0) return text;
  const summary: Record<string, unknown> = { stream: true, model, content: content.length <= 1 ? (content[0] ?? '') : content };
  if (finishReasons.length > 0) summary.finish_reason = finishReasons.length === 1 ? finishReasons[0] : finishReasons;
  if (toolCalls.size > 0) summary.tool_calls = [...toolCalls.values()];
  if (output !== undefined) summary.output = output;
  if (blocks.length > 0) summary.content_blocks = blocks.filter(Boolean).map(({ partial, ...block }) => (partial === undefined ? block : { ...block, input: parsedOr(partial) }));
  if (usage !== undefined) summary.usage = usage;
  if (error !== undefined) summary.error = error;
  if (truncated) summary.truncated = true;
  return JSON.stringify(summary, null, 0);
}

/** A tool's streamed JSON input, parsed; as text when the stream was cut inside it. */
function parsedOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Builds the stored record: done by the log writer, off the request path, which is where the
 * bodies are serialised, capped and redacted.
 */
export function toLogRecord(entry: LogEntry, bodies: LogBodies | undefined, bodyMaxBytes = DEFAULT_BODY_MAX_BYTES): LogRecord {
  return recordFromText(entry, bodies && textBodies(bodies, bodyMaxBytes), bodyMaxBytes);
}

/** The stored record from an entry and its bodies as text: redacts, caps, and sums up a stream. */
export function recordFromText(entry: LogEntry, bodies: TextBodies | undefined, bodyMaxBytes = DEFAULT_BODY_MAX_BYTES): LogRecord {
  const usage = entry.usage;
  const record: LogRecord = {
    id: entry.id,
    time: entry.time,
    trace_id: entry.traceId,
    caller_type: entry.callerType ?? null,
    key_id: entry.keyId ?? null,
    key_name: entry.keyName ?? null,
    end_user: entry.endUser ?? null,
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
    // Flagged values are masked in the whole text before it is capped (a value cut by the cap would leave its start), and in a stream once assembled (a value split across events is whole there).
    request_body: bodies?.request ? capText(maskFlagged(bodies.request.text, bodies.flagged), bodyMaxBytes, bodies.secrets, bodies.request.totalBytes) : null,
    response_body: bodies?.response
      ? capText(maskFlagged(bodies.response.stream ? assembleStream(bodies.response.text, bodies.response.truncated === true) : bodies.response.text, bodies.flagged), bodyMaxBytes, bodies.secrets)
      : null,
  };
  if (entry.droppedFields?.length) record.dropped_fields = [...entry.droppedFields];
  if (entry.replaces) record.replaces = true;
  if (entry.attempts) {
    record.routing = {
      ...(entry.route ? { route: entry.route } : {}),
      attempts: entry.attempts,
      ...(entry.skipped ? { skipped: entry.skipped } : {}),
      ...(entry.routingMs !== undefined ? { routing_ms: entry.routingMs } : {}),
    };
  }
  return record;
}
