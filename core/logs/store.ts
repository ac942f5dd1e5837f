import type { LogRecord, LogSummary, PendingRecord } from './record.js';

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
  /** Only these virtual keys' rows (a team member's view); empty: none. */
  keys?: readonly string[];
  traceId?: string;
  metadataKey?: string;
  metadataValue?: string;
  /** Only failed requests: status 400 or above, or an error recorded (a stream that broke after its 200). */
  errors?: boolean;
  /**
   * Free-text search over the stored (redacted) request and response bodies: the string values of
   * a JSON body (not its keys or numbers), a body that is not JSON as text. Every word must occur
   * (SQLite FTS5, PostgreSQL text search with the `simple` configuration). Rows without bodies never match.
   */
  search?: string;
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

/** One row's stored bodies. */
export interface LogBodiesRow {
  id: string;
  request_body: string | null;
  response_body: string | null;
}

export interface LogPage {
  data: LogSummary[];
  nextCursor: LogCursor | null;
}

/** A column, or `metadata.<key>`: the value of one `x-gateway-metadata` key. */
export type UsageGroupBy = 'provider' | 'model' | 'key' | 'user' | 'none' | `metadata.${string}`;

/** The metadata key of a `metadata.<key>` grouping, or undefined for a column. */
export const metadataGroupKey = (groupBy: UsageGroupBy): string | undefined => (groupBy.startsWith('metadata.') ? groupBy.slice('metadata.'.length) : undefined);

export interface UsageQuery {
  /** Inclusive start of the first bucket, epoch ms (a multiple of `bucketMs`). */
  from: number;
  /** Exclusive end. */
  to: number;
  bucketMs: number;
  groupBy: UsageGroupBy;
  /** Only these virtual keys' rows (a team's view); empty: none; absent: every row. */
  keys?: readonly string[];
}

/** Totals over a whole period for several column groupings at once (one scan of the period). */
export interface UsageTotalsQuery {
  from: number;
  to: number;
  /** Column groupings only (not `metadata.<key>`). */
  groupBys: ReadonlyArray<Exclude<UsageGroupBy, `metadata.${string}`>>;
  /** Only these virtual keys' rows (a team's view); empty: none; absent: every row. */
  keys?: readonly string[];
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
  /** Grouped by key: the key's name as logged (the latest one seen), when it has one. */
  label?: string;
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

/** A time range of guardrail verdicts (`GET /admin/policies/verdicts`). */
export interface VerdictQuery {
  /** Inclusive, epoch ms. */
  from: number;
  /** Exclusive, epoch ms. */
  to: number;
}

/** How often one guardrail of one policy gave one action on one side in the range. */
export interface VerdictCount {
  policy: string;
  guardrail: string;
  side: string;
  /** `allow`, `deny` or `transform` (a redaction). */
  action: string;
  count: number;
}

/** The requests one policy judged in the range, and how many of them were denied or transformed. */
export interface PolicyRequests {
  policy: string;
  requests: number;
  denied: number;
  transformed: number;
}

export interface VerdictCounts {
  verdicts: VerdictCount[];
  requests: PolicyRequests[];
}

/**
 * Counts the verdicts of rows (each row's `guardrails` array, all of one policy): by policy,
 * guardrail, side and action, and the requests per policy with how many were denied or transformed.
 * Verdicts without a policy (logged before it was recorded) are skipped.
 */
export function countVerdicts<Row>(rows: Iterable<Row>, verdictsOf: (row: Row) => ReadonlyArray<{ policy?: string; guardrail: string; side: string; action: string }>): VerdictCounts {
  const verdicts = new Map<string, VerdictCount>();
  const requests = new Map<string, PolicyRequests>();
  for (const row of rows) {
    const list = verdictsOf(row);
    const policy = list[0]?.policy;
    if (policy === undefined) continue;
    let perPolicy = requests.get(policy);
    if (!perPolicy) requests.set(policy, (perPolicy = { policy, requests: 0, denied: 0, transformed: 0 }));
    perPolicy.requests++;
    let denied = false;
    let transformed = false;
    for (const verdict of list) {
      const key = `${policy}\u0000${verdict.guardrail}\u0000${verdict.side}\u0000${verdict.action}`;
      const counted = verdicts.get(key);
      if (counted) counted.count++;
      else verdicts.set(key, { policy, guardrail: verdict.guardrail, side: verdict.side, action: verdict.action, count: 1 });
      denied ||= verdict.action === 'deny';
      transformed ||= verdict.action === 'transform';
    }
    if (denied) perPolicy.denied++;
    if (transformed) perPolicy.transformed++;
  }
  const order = (entry: VerdictCount) => `${entry.policy}\u0000${entry.side}\u0000${entry.guardrail}\u0000${entry.action}`;
  return {
    verdicts: [...verdicts.values()].sort((a, b) => (order(a) < order(b) ? -1 : 1)),
    requests: [...requests.values()].sort((a, b) => (a.policy < b.policy ? -1 : 1)),
  };
}

/**
 * Durable storage of request logs: SQLite (embedded default) or PostgreSQL (`DATABASE_URL`, shared
 * by instances). Writes come in batches from the log queue, never from the request path. `insert`
 * is idempotent by id, so a batch replayed after an uncertain failure is not counted twice.
 */
export interface LogStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Whether the bodies are indexed for {@link LogQuery.search} (a search on a store without the index throws). */
  readonly searchable: boolean;
  /** Creates or migrates the schema. */
  init(): Promise<void>;
  /**
   * Writes the records; a record whose id is stored already is ignored (a replayed batch), except
   * one marked `replaces`, which replaces the stored row and its metadata unless that row has a
   * longer `latency_ms` (a later state of the same entry: a translated batch's, as it progresses).
   */
  insert(records: readonly LogRecord[]): Promise<void>;
  /**
   * Optional: stores entries whose records are still to be built (`recordFromText`: redaction,
   * capping), for a store that builds them off the request thread. Same effect as `insert`.
   */
  insertPending?(pending: readonly PendingRecord[], bodyMaxBytes: number): Promise<void>;
  list(query: LogQuery): Promise<LogPage>;
  get(id: string): Promise<LogRecord | undefined>;
  /** The stored bodies of these rows (ids without stored bodies are left out): exports with bodies. */
  bodies(ids: readonly string[]): Promise<LogBodiesRow[]>;
  usage(query: UsageQuery): Promise<UsageCell[]>;
  /** Guardrail verdicts in the range by policy, guardrail, side and action (verdicts logged with their policy). */
  verdicts(query: VerdictQuery): Promise<VerdictCounts>;
  /**
   * For each grouping of `query.groupBys`, in order, one cell per group spanning the period
   * (`bucket` = `from`): what `usage` answers with `bucketMs = to - from`, for all of them in one
   * scan of the period.
   */
  usageTotals(query: UsageTotalsQuery): Promise<UsageCell[][]>;
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
  search?: (terms: string[], id: string, param: (value: unknown) => string) => string,
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
  // A caller who may see only some keys (a team's): their rows alone; none is no row.
  if (query.keys !== undefined) conditions.push(query.keys.length === 0 ? '1 = 0' : `${prefix}key_id IN (${query.keys.map((key) => param(key)).join(', ')})`);
  if (query.traceId !== undefined) conditions.push(`${prefix}trace_id = ${param(query.traceId)}`);
  if (query.metadataKey !== undefined && metadata) conditions.push(metadata(query.metadataKey, query.metadataValue, param));
  // The same expression as the partial index `logs_errors` (both stores), which the planner needs to use it.
  if (query.errors) conditions.push(`(${prefix}status >= 400 OR ${prefix}error_type IS NOT NULL)`);
  if (query.search !== undefined && search) conditions.push(search(searchTerms(query.search), id, param));
  if (query.cursor) {
    const at = param(query.cursor.timeMs);
    conditions.push(`(${time} < ${at} OR (${time} = ${at} AND ${id} < ${param(query.cursor.id)}))`);
  }
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params, param };
}

/**
 * The words of a search text: split on white space, each keeping its inner punctuation (`gpt-4o`
 * is searched as the adjacent tokens `gpt` and `4o`); chunks without a letter or digit are left
 * out. Every word must occur in the bodies.
 */
export function searchTerms(text: string): string[] {
  return text.split(/\s+/u).filter((chunk) => /[\p{L}\p{N}]/u.test(chunk));
}

/** Percentile with linear interpolation between closest ranks (PostgreSQL's `percentile_cont`). */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

/** The grouping column's SQL expression (not for `metadata.<key>`, which each store reads its own way). */
export function groupExpression(groupBy: UsageGroupBy): string {
  switch (groupBy) {
    case 'user':
      return `COALESCE(end_user, '${NO_GROUP}')`;
    case 'provider':
      return `COALESCE(provider, '${NO_GROUP}')`;
    case 'model':
      return `COALESCE(model, '${NO_GROUP}')`;
    case 'key':
      return `COALESCE(key_id, caller_type, '${NO_GROUP}')`;
    case 'none':
      return `'all'`;
    default:
      throw new Error(`no column groups usage by ${groupBy}`);
  }
}

/** The status class column's value. */
export const statusClassOf = (status: number): number => Math.floor(status / 100);

/** Rounds a stored time to milliseconds since the epoch. */
export const timeMsOf = (record: Pick<LogRecord, 'time'>): number => Date.parse(record.time);
