import type { LogRecord, LogSummary } from './record.js';

/** Filters of the logs explorer (every one backed by an index). */
export interface LogQuery {
  /** Inclusive lower bound, epoch ms. */
  from?: number;
  /** Exclusive upper bound, epoch ms. */
  to?: number;
  statusClass?: 2 | 3 | 4 | 5;
  provider?: string;
  model?: string;
  /** A virtual key id, or `account` for the account key. */
  key?: string;
  traceId?: string;
  metadataKey?: string;
  metadataValue?: string;
  /** 1..500. */
  limit: number;
  /** From a previous page's `nextCursor`. */
  cursor?: LogCursor;
}

/** Keyset position: the last row of the previous page (newest first, by time then id). */
export interface LogCursor {
  timeMs: number;
  id: string;
}

export interface LogPage {
  data: LogSummary[];
  nextCursor: LogCursor | null;
}

export type UsageGroupBy = 'provider' | 'model' | 'key' | 'none';

export interface UsageQuery {
  /** Inclusive start of the first bucket, epoch ms (a multiple of `bucketMs`). */
  from: number;
  /** Exclusive end. */
  to: number;
  bucketMs: number;
  groupBy: UsageGroupBy;
}

/** One (group, bucket) cell, as the stores compute it. */
export interface UsageCell {
  group: string;
  /** Bucket start, epoch ms. */
  bucket: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p95Ms: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  /** Requests answered from the response cache (exact or semantic hits). */
  cacheHits: number;
  /** Cacheable requests the cache could not answer. */
  cacheMisses: number;
  /** What the hits' answers cost when they were made (USD). */
  savedUsd: number;
}

/** A cell with nothing counted yet. */
export const emptyCell = (group: string, bucket: number): UsageCell => ({
  group,
  bucket,
  requests: 0,
  errors: 0,
  p50Ms: 0,
  p95Ms: 0,
  promptTokens: 0,
  completionTokens: 0,
  costUsd: 0,
  cacheHits: 0,
  cacheMisses: 0,
  savedUsd: 0,
});

/**
 * Durable storage of request logs: SQLite (embedded default) or PostgreSQL (`DATABASE_URL`, shared
 * by instances). Writes come in batches from the log queue, never from the request path. `insert`
 * is idempotent by id, so a batch replayed after an uncertain failure is not counted twice.
 */
export interface LogStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Creates or migrates the schema. */
  init(): Promise<void>;
  insert(records: readonly LogRecord[]): Promise<void>;
  list(query: LogQuery): Promise<LogPage>;
  get(id: string): Promise<LogRecord | undefined>;
  usage(query: UsageQuery): Promise<UsageCell[]>;
  /** Rows stored (tests, benchmarks). */
  count(): Promise<number>;
  /** Applies retention; returns the number of rows deleted. Stores without retention return 0. */
  prune(now?: number): Promise<number>;
  close(): Promise<void>;
}

/** Group label of rows with no value for the grouping column (e.g. rejected before auth). */
export const NO_GROUP = '(none)';

export function encodeCursor(cursor: LogCursor): string {
  return Buffer.from(JSON.stringify([cursor.timeMs, cursor.id])).toString('base64url');
}

/** Returns undefined when the text is not a cursor this gateway made. */
export function decodeCursor(text: string): LogCursor | undefined {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string') {
      return { timeMs: value[0], id: value[1] };
    }
  } catch {
    // fall through
  }
  return undefined;
}

/**
 * The WHERE clause of a list query, shared by both stores. `placeholder(n)` renders the n-th
 * parameter (`?n` for SQLite, `$n` for PostgreSQL); `metadata` renders the metadata condition,
 * which is stored differently by each. `columns` qualifies the column names when the query joins
 * (`time` and `id` may come from another table whose index gives the order).
 */
export function listWhere(
  query: LogQuery,
  placeholder: (index: number) => string,
  metadata: ((key: string, value: string | undefined, param: (value: unknown) => string) => string) | undefined,
  columns: { prefix: string; time: string; id: string } = { prefix: '', time: 'time_ms', id: 'id' },
): { where: string; params: unknown[]; param: (value: unknown) => string } {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return placeholder(params.length);
  };
  const { prefix, time, id } = columns;
  const conditions: string[] = [];
  if (query.from !== undefined) conditions.push(`${time} >= ${param(query.from)}`);
  if (query.to !== undefined) conditions.push(`${time} < ${param(query.to)}`);
  if (query.statusClass !== undefined) conditions.push(`${prefix}status_class = ${param(query.statusClass)}`);
  if (query.provider !== undefined) conditions.push(`${prefix}provider = ${param(query.provider)}`);
  if (query.model !== undefined) conditions.push(`${prefix}model = ${param(query.model)}`);
  // The account key has no key id: its rows are found through the key index's NULL range (one
  // index fewer to maintain on every insert).
  if (query.key === 'account') conditions.push(`${prefix}key_id IS NULL AND ${prefix}caller_type = ${param('account')}`);
  else if (query.key !== undefined) conditions.push(`${prefix}key_id = ${param(query.key)}`);
  if (query.traceId !== undefined) conditions.push(`${prefix}trace_id = ${param(query.traceId)}`);
  if (query.metadataKey !== undefined && metadata) conditions.push(metadata(query.metadataKey, query.metadataValue, param));
  if (query.cursor) {
    const at = param(query.cursor.timeMs);
    conditions.push(`(${time} < ${at} OR (${time} = ${at} AND ${id} < ${param(query.cursor.id)}))`);
  }
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params, param };
}

/** Percentile with linear interpolation between closest ranks (PostgreSQL's `percentile_cont`). */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

/** The grouping column's SQL expression. */
export function groupExpression(groupBy: UsageGroupBy): string {
  switch (groupBy) {
    case 'provider':
      return `COALESCE(provider, '${NO_GROUP}')`;
    case 'model':
      return `COALESCE(model, '${NO_GROUP}')`;
    case 'key':
      return `COALESCE(key_id, caller_type, '${NO_GROUP}')`;
    case 'none':
      return `'all'`;
  }
}

/** The status class column's value. */
export const statusClassOf = (status: number): number => Math.floor(status / 100);

/** Rounds a stored time to milliseconds since the epoch. */
export const timeMsOf = (record: Pick<LogRecord, 'time'>): number => Date.parse(record.time);
