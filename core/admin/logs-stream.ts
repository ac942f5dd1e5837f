import { PassThrough, Readable } from 'node:stream';
import type { Context } from 'koa';
import { errors } from '../errors.js';
import type { LogSummary } from '../logs/record.js';
import type { LogQuery, LogStore } from '../logs/store.js';

/** Rows read from the store per page of an export (one store query, one chunk written). */
export const EXPORT_PAGE = 500;
/** With bodies (up to twice the body cap each), fewer rows per page. */
const EXPORT_PAGE_WITH_BODIES = 100;

/** The columns of a CSV export, in order: the list's fields, then the routing summary and the JSON-valued fields. */
export const CSV_COLUMNS = [
  'id', 'time', 'trace_id', 'caller_type', 'key_id', 'key_name', 'provider', 'model', 'operation', 'method', 'path', 'status',
  'outcome', 'error_type', 'error_code', 'error_message', 'streaming', 'latency_ms', 'gateway_ms', 'upstream_ms', 'ttft_ms',
  'prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'total_tokens', 'cost_usd', 'cache_status',
  'cache_saved_usd', 'route', 'attempts', 'route_target', 'metadata', 'guardrails',
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote, a line break or edge spaces,
 * quotes doubled. A text starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a `'`
 * in front, so that a spreadsheet does not run a logged value (a model name, an error message:
 * caller-controlled) as a formula.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvRow(row: LogSummary & { request_body?: string | null; response_body?: string | null }, withBodies: boolean): string {
  const attempts = row.routing?.attempts ?? [];
  const route = row.routing?.route;
  const derived: Record<string, unknown> = {
    route: route ? (route.name ?? route.id ?? null) : null,
    attempts: attempts.length > 0 ? attempts.length : null,
    route_target: attempts.at(-1)?.target ?? null,
  };
  const record = row as unknown as Record<string, unknown>;
  const fields = CSV_COLUMNS.map((column) => csvField(column in derived ? derived[column] : record[column]));
  if (withBodies) fields.push(csvField(row.request_body), csvField(row.response_body));
  return fields.join(',');
}

/** The filtered rows, page by page, newest first: one text chunk per page, read only when the response wants more. */
async function* exportChunks(store: LogStore, query: LogQuery, format: 'csv' | 'jsonl', withBodies: boolean): AsyncGenerator<string> {
  if (format === 'csv') yield `${[...CSV_COLUMNS, ...(withBodies ? ['request_body', 'response_body'] : [])].join(',')}\r\n`;
  let cursor = query.cursor;
  do {
    const page = await store.list({ ...query, limit: withBodies ? EXPORT_PAGE_WITH_BODIES : EXPORT_PAGE, cursor });
    let rows: Array<LogSummary & { request_body?: string | null; response_body?: string | null }> = page.data;
    if (withBodies && rows.length > 0) {
      const bodies = new Map((await store.bodies(rows.map((row) => row.id))).map((body) => [body.id, body]));
      rows = rows.map((row) => ({ ...row, request_body: bodies.get(row.id)?.request_body ?? null, response_body: bodies.get(row.id)?.response_body ?? null }));
    }
    if (rows.length > 0) {
      yield format === 'csv' ? rows.map((row) => `${csvRow(row, withBodies)}\r\n`).join('') : rows.map((row) => `${JSON.stringify(row)}\n`).join('');
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

/**
 * `GET /admin/logs/export?format=csv|jsonl&<the list's filters>[&bodies=true]`: every row the filters
 * select, newest first, streamed page by page (never held whole). Rows logged after the export
 * started are newer than its first page and not in it. With `bodies=true` each row also has its
 * stored (redacted, capped) `request_body` and `response_body` (null when none was stored).
 */
export function sendExport(koa: Context, store: LogStore, query: LogQuery, format: 'csv' | 'jsonl', withBodies = false): void {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  koa.set('content-disposition', `attachment; filename="gateway-logs-${stamp}.${format}"`);
  koa.set('cache-control', 'no-store');
  koa.set('x-content-type-options', 'nosniff');
  koa.type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
  // Koa pipes the stream with back-pressure and destroys it (ending the generator) if the client goes away.
  koa.body = Readable.from(exportChunks(store, query, format, withBodies), { objectMode: false });
}

/** How often a live tail asks the store for new rows. */
export const TAIL_POLL_MS = 1000;
/** How far back each poll looks past the newest row seen: rows reach the store late by a batch's linger, or from other instances. */
export const TAIL_LOOKBACK_MS = 5000;
/** Pages (of 500) read per poll at most: a tail shows traffic, it does not promise every row of a flood. */
const TAIL_MAX_PAGES = 4;
const HEARTBEAT_MS = 15_000;
/** Open tails per instance. */
export const MAX_TAILS = 16;

let openTails = 0;

/** How far back a reconnecting tail (`Last-Event-ID`) may resume. */
export const TAIL_RESUME_MAX_MS = 10 * 60_000;

/**
 * `GET /admin/logs/tail?<the list's filters>`: server-sent events of the rows logged from now on
 * that match the filters (`event: log`, `data`: the list's row, `id`: its id), oldest first. It reads
 * the store, so with PostgreSQL it shows every instance's requests, and it costs nothing while no
 * one tails: each open tail polls the store every second for rows newer than the last it saw (minus
 * a look-back, with the ids already sent skipped). `event: ready` is sent once the tail is open. A
 * client that reconnects with `Last-Event-ID` (EventSource does) resumes after that row, if it is at
 * most {@link TAIL_RESUME_MAX_MS} old, so a short disconnection loses nothing.
 */
export async function sendTail(koa: Context, store: LogStore, query: LogQuery, onError: (error: Error) => void): Promise<void> {
  if (openTails >= MAX_TAILS) {
    throw errors.rateLimited(`At most ${MAX_TAILS} live tails may be open at once on this instance; close one.`, { code: 'too_many_tails' });
  }
  // Resuming: rows after the last one the client got (time, then id: the order they were sent in).
  const lastId = koa.get('last-event-id');
  const last = lastId && lastId.length <= 256 ? await store.get(lastId).catch(() => undefined) : undefined;
  const lastTime = last ? Date.parse(last.time) : undefined;
  const resumeFrom = lastTime !== undefined && lastTime >= Date.now() - TAIL_RESUME_MAX_MS ? lastTime : undefined;
  const after = (row: LogSummary) => resumeFrom === undefined || Date.parse(row.time) > resumeFrom || row.id > lastId;
  openTails++;
  const openedAt = resumeFrom ?? Date.now();
  const stream = new PassThrough();
  koa.req.socket.setTimeout(0);
  koa.req.socket.setNoDelay(true);
  koa.status = 200;
  koa.type = 'text/event-stream; charset=utf-8';
  koa.set('cache-control', 'no-store');
  koa.set('x-accel-buffering', 'no');
  koa.body = stream;

  const seen = new Map<string, number>();
  let newest = openedAt;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    openTails--;
    clearTimeout(timer);
    clearInterval(heartbeat);
    stream.end();
  };
  koa.req.on('close', close);
  stream.on('close', close);

  const poll = async () => {
    try {
      const from = Math.max(openedAt, query.from ?? 0, newest - TAIL_LOOKBACK_MS);
      const fresh: LogSummary[] = [];
      let cursor: LogQuery['cursor'];
      for (let pages = 0; pages < TAIL_MAX_PAGES && !closed; pages++) {
        const page = await store.list({ ...query, from, to: undefined, limit: EXPORT_PAGE, cursor });
        const unseen = page.data.filter((row) => !seen.has(row.id) && after(row));
        fresh.push(...unseen);
        cursor = page.nextCursor ?? undefined;
        if (!cursor || unseen.length === 0) break;
      }
      if (closed) return;
      const now = Date.now();
      for (const row of fresh.reverse()) {
        const time = Date.parse(row.time);
        seen.set(row.id, time);
        newest = Math.max(newest, Math.min(time, now));
        stream.write(`id: ${row.id}\nevent: log\ndata: ${JSON.stringify(row)}\n\n`);
      }
      for (const [id, time] of seen) if (time < newest - TAIL_LOOKBACK_MS) seen.delete(id);
    } catch (error) {
      // A store outage: said once per failed poll, and the tail keeps polling.
      onError(error as Error);
      if (!closed) stream.write(`event: store_error\ndata: ${JSON.stringify({ message: 'The log store did not answer; retrying.' })}\n\n`);
    }
    if (!closed) timer = setTimeout(poll, TAIL_POLL_MS);
  };

  stream.write(`retry: 2000\nevent: ready\ndata: ${JSON.stringify({ since: new Date(openedAt).toISOString() })}\n\n`);
  timer = setTimeout(poll, TAIL_POLL_MS);
}
