import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../errors.js';
import { decodeCursor, encodeCursor, type LogQuery, type LogStore, type UsageGroupBy } from '../logs/store.js';
import type { AdminGuard } from './guard.js';

const MAX_TEXT = 256;

const invalid = (param: string, message: string) => errors.invalidRequest(message, { param, code: 'invalid_query' });

function text(koa: Context, name: string): string | undefined {
  const value = koa.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT) {
    throw invalid(name, `${name} must be given once, as a non-empty string of at most ${MAX_TEXT} characters.`);
  }
  return value;
}

function time(koa: Context, name: string): number | undefined {
  const value = text(koa, name);
  if (value === undefined) return undefined;
  const parsed = Date.parse(value);
  if (!Number.isFinite(parsed)) throw invalid(name, `${name} must be an ISO 8601 date-time, e.g. 2026-11-21T10:00:00Z.`);
  return parsed;
}

function oneOf<T extends string>(koa: Context, name: string, allowed: readonly T[], fallback?: T): T | undefined {
  const value = text(koa, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw invalid(name, `${name} must be one of ${allowed.join(', ')}.`);
  return value as T;
}

/** Reads and checks the logs explorer's filters from the query string. */
export function parseLogQuery(koa: Context): LogQuery {
  const limitText = text(koa, 'limit');
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw invalid('limit', 'limit must be an integer from 1 to 500.');
  const cursorText = text(koa, 'cursor');
  const cursor = cursorText === undefined ? undefined : decodeCursor(cursorText);
  if (cursorText !== undefined && !cursor) throw invalid('cursor', 'cursor must be a next_cursor value from an earlier answer.');
  const statusClass = oneOf(koa, 'status_class', ['2xx', '3xx', '4xx', '5xx'] as const);
  const metadataKey = text(koa, 'metadata_key');
  const metadataValue = text(koa, 'metadata_value');
  if (metadataValue !== undefined && metadataKey === undefined) throw invalid('metadata_value', 'metadata_value needs metadata_key.');
  const from = time(koa, 'from');
  const to = time(koa, 'to');
  if (from !== undefined && to !== undefined && from > to) throw invalid('from', 'from must not be after to.');
  return {
    from,
    to,
    statusClass: statusClass ? (Number(statusClass[0]) as 2 | 3 | 4 | 5) : undefined,
    provider: text(koa, 'provider'),
    model: text(koa, 'model'),
    key: text(koa, 'key'),
    traceId: text(koa, 'trace_id'),
    metadataKey,
    metadataValue,
    limit,
    cursor,
  };
}

/** Time ranges of the usage view and the width of their buckets. */
export const USAGE_RANGES = {
  hour: { rangeMs: 3_600_000, bucketMs: 60_000 },
  day: { rangeMs: 86_400_000, bucketMs: 900_000 },
  week: { rangeMs: 604_800_000, bucketMs: 3_600_000 },
} as const;

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The response cache over the whole range: hits, misses, hit rate (of the lookups: hits and misses; null without any) and what the hits saved. */
function cacheSummary(cells: ReadonlyArray<{ cacheHits: number; cacheMisses: number; savedUsd: number }>) {
  let hits = 0;
  let misses = 0;
  let saved = 0;
  for (const cell of cells) {
    hits += cell.cacheHits;
    misses += cell.cacheMisses;
    saved += cell.savedUsd;
  }
  return { hits, misses, hit_rate: hits + misses === 0 ? null : round(hits / (hits + misses), 4), saved_usd: round(saved, 6) };
}

/**
 * `GET /admin/logs`, `GET /admin/logs/:id` and `GET /admin/usage`, behind the admin guard.
 * Lists are newest first with keyset pagination (`next_cursor`), never OFFSET, so any page of a
 * large table costs one index range scan.
 */
export function mountLogsApi(router: Router, parts: { guard: AdminGuard; store: LogStore }): void {
  const { guard, store } = parts;

  router.get('/admin/logs', guard.middleware, async (koa) => {
    const page = await store.list(parseLogQuery(koa));
    koa.body = { data: page.data, next_cursor: page.nextCursor ? encodeCursor(page.nextCursor) : null };
  });

  router.get('/admin/logs/:id', guard.middleware, async (koa) => {
    const id = koa.params.id;
    const record = id && id.length <= MAX_TEXT ? await store.get(id) : undefined;
    if (!record) throw errors.notFound(`No log entry has the id ${JSON.stringify(id)}.`, { code: 'log_not_found' });
    koa.body = record;
  });

  router.get('/admin/usage', guard.middleware, async (koa) => {
    const range = oneOf(koa, 'range', ['hour', 'day', 'week'] as const, 'day')!;
    const groupBy = oneOf<UsageGroupBy>(koa, 'group_by', ['provider', 'model', 'key', 'none'], 'none')!;
    const { rangeMs, bucketMs } = USAGE_RANGES[range];
    const end = Math.ceil(((time(koa, 'to') ?? Date.now()) + 1) / bucketMs) * bucketMs;
    const from = end - rangeMs;
    const cells = await store.usage({ from, to: end, bucketMs, groupBy });
    const groups = new Map<string, { total: number; cells: Map<number, (typeof cells)[number]> }>();
    for (const cell of cells) {
      const group = groups.get(cell.group) ?? { total: 0, cells: new Map() };
      group.total += cell.requests;
      group.cells.set(cell.bucket, cell);
      groups.set(cell.group, group);
    }
    const series = [...groups.entries()]
      .sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]))
      .map(([group, { cells: byBucket }]) => ({
        group,
        points: Array.from({ length: rangeMs / bucketMs }, (_, index) => {
          const bucket = from + index * bucketMs;
          const cell = byBucket.get(bucket);
          return {
            t: new Date(bucket).toISOString(),
            requests: cell?.requests ?? 0,
            errors: cell?.errors ?? 0,
            p50_ms: round(cell?.p50Ms ?? 0, 3),
            p95_ms: round(cell?.p95Ms ?? 0, 3),
            prompt_tokens: cell?.promptTokens ?? 0,
            completion_tokens: cell?.completionTokens ?? 0,
            cost_usd: round(cell?.costUsd ?? 0, 6),
            cache_hits: cell?.cacheHits ?? 0,
            cache_misses: cell?.cacheMisses ?? 0,
            cache_saved_usd: round(cell?.savedUsd ?? 0, 6),
          };
        }),
      }));
    koa.body = { range, bucket_seconds: bucketMs / 1000, series, cache: cacheSummary(cells) };
  });
}
