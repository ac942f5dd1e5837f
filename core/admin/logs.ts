import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../errors.js';
import { decodeCursor, encodeCursor, type LogQuery, type LogStore, NO_GROUP, searchTerms, type UsageCell, type UsageGroupBy } from '../logs/store.js';
import { accessOf, type AdminGuard } from './guard.js';
import type { Access } from '../org/access.js';
import { sendExport, sendTail } from './logs-stream.js';

const MAX_TEXT = 256;

const invalid = (message: string, { param }: { param: string }) => errors.invalidRequest(message, { param, code: 'invalid_query' });

function text(koa: Context, name: string): string | undefined {
  const value = koa.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT) {
    throw invalid(`${name} must be given once, as a non-empty string of at most ${MAX_TEXT} characters.`, { param: name });
  }
  return value;
}

function time(koa: Context, name: string): number | undefined {
  const value = text(koa, name);
  if (value === undefined) return undefined;
  const parsed = Date.parse(value);
  if (!Number.isFinite(parsed)) throw invalid(`${name} must be an ISO 8601 date-time, e.g. 2026-11-21T10:00:00Z.`, { param: name });
  return parsed;
}

function oneOf<T extends string>(koa: Context, name: string, allowed: readonly T[], fallback?: T): T | undefined {
  const value = text(koa, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw invalid(`${name} must be one of ${allowed.join(', ')}.`, { param: name });
  return value as T;
}

/** Reads and checks the logs explorer's filters from the query string. */
export function parseLogQuery(koa: Context): LogQuery {
  return parseQuery(koa);
}

function parseQuery(koa: Context): LogQuery {
  const limitText = text(koa, 'limit');
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw invalid('limit must be an integer from 1 to 500.', { param: 'limit' });
  const cursorText = text(koa, 'cursor');
  const cursor = cursorText === undefined ? undefined : decodeCursor(cursorText);
  if (cursorText !== undefined && !cursor) throw invalid('cursor must be a next_cursor value from an earlier answer.', { param: 'cursor' });
  const statusClass = oneOf(koa, 'status_class', ['2xx', '3xx', '4xx', '5xx'] as const);
  const metadataKey = text(koa, 'metadata_key');
  const metadataValue = text(koa, 'metadata_value');
  if (metadataValue !== undefined && metadataKey === undefined) throw invalid('metadata_value needs metadata_key.', { param: 'metadata_value' });
  const from = time(koa, 'from');
  const to = time(koa, 'to');
  if (from !== undefined && to !== undefined && from > to) throw invalid('from must not be after to.', { param: 'from' });
  const errorsOnly = oneOf(koa, 'errors', ['true', 'false'] as const);
  const search = text(koa, 'q');
  if (search !== undefined && searchTerms(search).length === 0) throw invalid('q must hold at least one word (letters or digits) to search the bodies for.', { param: 'q' });
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
    errors: errorsOnly === 'true' ? true : undefined,
    search,
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

/** Rounds to `digits` decimals; costs keep 9, so that an embedding's $0.00000016 is not rounded away. */
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
  return { hits, misses, hit_rate: hits + misses === 0 ? null : round(hits / (hits + misses), 4), saved_usd: round(saved, 9) };
}

/** Longest metadata key (as `x-gateway-metadata` allows). */
const METADATA_KEY_MAX = 128;
const GROUP_COLUMNS = ['provider', 'model', 'key', 'user', 'team', 'user_id', 'none'] as const;

/**
 * Usage grouped by the keys' team (`organization` for keys shared by the organization) or owner
 * (the gateway user or service account; `none` for keys without one): one exact scan per group over
 * its keys (so percentiles are the group's own), limited to the keys the caller may see.
 */
async function byOwner(
  store: LogStore,
  period: { from: number; to: number; bucketMs: number; rangeMs: number },
  groupBy: 'team' | 'user_id',
  visible: string[] | undefined,
  owners: Parameters<typeof mountLogsApi>[1]['owners'],
): Promise<[UsageCell[], UsageCell[]]> {
  const allowed = visible === undefined ? undefined : new Set(visible);
  const groups = new Map<string, string[]>();
  for (const owner of (await owners?.()) ?? []) {
    if (allowed !== undefined && !allowed.has(owner.id)) continue;
    const group = groupBy === 'team' ? (owner.team_id ?? 'organization') : (owner.user_id ?? NO_GROUP);
    groups.set(group, [...(groups.get(group) ?? []), owner.id]);
  }
  const scans = await Promise.all(
    [...groups].map(async ([group, keys]) => {
      const regroup = (cells: UsageCell[]) => cells.map((cell) => ({ ...cell, group }));
      const [cells, totals] = await Promise.all([
        store.usage({ from: period.from, to: period.to, bucketMs: period.bucketMs, groupBy: 'none', keys }),
        store.usage({ from: period.from, to: period.to, bucketMs: period.rangeMs, groupBy: 'none', keys }),
      ]);
      return [regroup(cells), regroup(totals)] as const;
    }),
  );
  return [scans.flatMap(([cells]) => cells), scans.flatMap(([, totals]) => totals)];
}

/** `group_by`: a column, the keys' `team` or owner (`user_id`), or `metadata.<key>`. */
function groupByOf(koa: Context): UsageGroupBy | 'team' | 'user_id' {
  const value = text(koa, 'group_by');
  if (value === undefined) return 'none';
  if ((GROUP_COLUMNS as readonly string[]).includes(value)) return value as UsageGroupBy;
  const key = value.startsWith('metadata.') ? value.slice('metadata.'.length) : undefined;
  if (key !== undefined && key.length >= 1 && key.length <= METADATA_KEY_MAX) return value as UsageGroupBy;
  throw invalid(`group_by must be one of ${GROUP_COLUMNS.join(', ')}, or metadata.<key> with a key of 1 to ${METADATA_KEY_MAX} characters.`, { param: 'group_by' });
}

/** Bucket widths of a custom period: the narrowest one giving at most {@link MAX_BUCKETS} buckets. */
const CUSTOM_BUCKETS_MS = [60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000];
const MAX_BUCKETS = 400;
/** Longest custom period. */
const MAX_PERIOD_MS = 366 * 86_400_000;

/**
 * The period a usage answer covers: a named `range` ending with the bucket that holds `to` (or
 * now), or a custom one from `from` to `to` (exclusive).
 */
function periodOf(koa: Context): { range: keyof typeof USAGE_RANGES | 'custom'; from: number; to: number; bucketMs: number } {
  const from = time(koa, 'from');
  if (from !== undefined) {
    if (koa.query.range !== undefined) throw invalid('Give either range, or from and to, not both.', { param: 'range' });
    const to = time(koa, 'to');
    if (to === undefined) throw invalid('from needs to.', { param: 'to' });
    if (to <= from) throw invalid('from must be before to.', { param: 'from' });
    if (to - from > MAX_PERIOD_MS) throw invalid('A period is at most 366 days long.', { param: 'from' });
    const bucketMs = CUSTOM_BUCKETS_MS.find((width) => (to - from) / width <= MAX_BUCKETS) ?? 86_400_000;
    return { range: 'custom', from, to, bucketMs };
  }
  const range = oneOf(koa, 'range', ['hour', 'day', 'week'] as const, 'day')!;
  const { rangeMs, bucketMs } = USAGE_RANGES[range];
  const to = Math.ceil(((time(koa, 'to') ?? Date.now()) + 1) / bucketMs) * bucketMs;
  return { range, from: to - rangeMs, to, bucketMs };
}

/** One group's (or the whole period's) figures, from one cell spanning the period. */
function figures(cell: UsageCell | undefined) {
  const requests = cell?.requests ?? 0;
  const hits = cell?.cacheHits ?? 0;
  const misses = cell?.cacheMisses ?? 0;
  return {
    requests,
    errors: cell?.errors ?? 0,
    error_rate: requests === 0 ? null : round((cell?.errors ?? 0) / requests, 4),
    p50_ms: requests === 0 ? null : round(cell!.p50Ms, 3),
    p95_ms: requests === 0 ? null : round(cell!.p95Ms, 3),
    prompt_tokens: cell?.promptTokens ?? 0,
    completion_tokens: cell?.completionTokens ?? 0,
    cost_usd: round(cell?.costUsd ?? 0, 9),
    cache_hits: hits,
    cache_misses: misses,
    cache_hit_rate: hits + misses === 0 ? null : round(hits / (hits + misses), 4),
    cache_saved_usd: round(cell?.savedUsd ?? 0, 9),
  };
}

const labelled = (cell: UsageCell) => ({ group: cell.group, ...(cell.label === undefined ? {} : { label: cell.label }) });

/** How many groups the top lists hold. */
const TOP = 10;

/**
 * The groups with the most spend (then the most requests), one cell each over the whole period;
 * `(none)` (no key, no end user, no model: e.g. refused before auth) is not a group to rank.
 */
function top(cells: readonly UsageCell[]) {
  return cells
    .filter((cell) => cell.group !== NO_GROUP)
    .sort((a, b) => b.costUsd - a.costUsd || b.requests - a.requests || a.group.localeCompare(b.group))
    .slice(0, TOP)
    .map((cell) => ({ ...labelled(cell), cost_usd: round(cell.costUsd, 9), requests: cell.requests }));
}

/**
 * `GET /admin/logs`, `GET /admin/logs/:id`, `GET /admin/usage` and `GET /admin/usage/summary`,
 * behind the admin guard. Lists are newest first with keyset pagination (`next_cursor`), never
 * OFFSET, so any page of a large table costs one index range scan.
 */
export function mountLogsApi(
  router: Router,
  parts: {
    guard: AdminGuard;
    store: LogStore;
    onTailError?: (error: Error) => void;
    /** The ids of the virtual keys a test accepts (a team member's view of the logs); absent: no scoping. */
    keysOf?: (visible: (key: { team_id?: string | null; user_id?: string; service_account_id?: string }) => boolean) => Promise<string[]>;
    /** Every key's team (null: the organization's) and owner (a user or service account), for `group_by=team` and `group_by=user_id`. */
    owners?: () => Promise<ReadonlyArray<{ readonly id: string; readonly team_id: string | null; readonly user_id?: string }>>;
  },
): void {
  const { guard, store } = parts;
  /**
   * The keys whose rows the caller may read: every row for an organization-wide reader; for a team's,
   * its team's keys (a member's own keys), and never the account key's rows.
   */
  const visibleKeys = async (access: Access): Promise<string[] | undefined> => {
    if (access.organizationWide('logs.read') || !parts.keysOf) return undefined;
    return parts.keysOf((key) => access.mayRead('logs.read', key));
  };
  /** The filters, refusing a search the store cannot answer, narrowed to the rows the caller may read. */
  const parseLogQuery = async (koa: Context): Promise<LogQuery> => {
    const query = parseQuery(koa);
    if (query.search !== undefined && !store.searchable) {
      throw invalid('Body search is off on this gateway (logs.search or GATEWAY_LOG_SEARCH=false); turn it on to search the bodies.', { param: 'q' });
    }
    const access = accessOf(koa);
    const keys = await visibleKeys(access);
    // A body search reads the bodies: it needs logs.bodies as much as reading them does.
    if (query.search !== undefined && !mayReadBodies(access, keys)) throw errors.permission('Searching the stored bodies needs the logs.bodies permission.', { code: 'permission_denied' });
    return keys === undefined ? query : { ...query, keys };
  };
  /** Whether the caller reads stored bodies: an organization-wide reader with logs.bodies, or a team's reader holding it (its rows are already narrowed to its keys). */
  const mayReadBodies = (access: Access, keys: readonly string[] | undefined): boolean => (keys === undefined ? access.organizationWide('logs.bodies') : access.holdsAnywhere('logs.bodies'));

  // Before `/admin/logs/:id`, which would take these names as ids.
  router.get('/admin/logs/export', guard.require('logs.read'), async (koa) => {
    const format = oneOf(koa, 'format', ['csv', 'jsonl'] as const);
    if (!format) throw invalid('format must be csv or jsonl.', { param: 'format' });
    const bodies = oneOf(koa, 'bodies', ['true', 'false'] as const);
    const query = await parseLogQuery(koa);
    if (bodies === 'true' && !mayReadBodies(accessOf(koa), query.keys)) throw errors.permission('Exporting the stored bodies needs the logs.bodies permission.', { code: 'permission_denied' });
    sendExport(koa, store, query, format, bodies === 'true');
  });

  router.get('/admin/logs/tail', guard.require('logs.read'), async (koa) => {
    const query = await parseLogQuery(koa);
    if (query.to !== undefined) throw invalid('A live tail has no end: leave out to.', { param: 'to' });
    if (query.cursor !== undefined) throw invalid('A live tail starts now: leave out cursor.', { param: 'cursor' });
    await sendTail(koa, store, query, parts.onTailError ?? (() => {}));
  });

  router.get('/admin/logs', guard.require('logs.read'), async (koa) => {
    const page = await store.list(await parseLogQuery(koa));
    koa.body = { data: page.data, next_cursor: page.nextCursor ? encodeCursor(page.nextCursor) : null };
  });

  router.get('/admin/logs/:id', guard.require('logs.read'), async (koa) => {
    const id = koa.params.id;
    const record = id && id.length <= MAX_TEXT ? await store.get(id) : undefined;
    const access = accessOf(koa);
    const keys = await visibleKeys(access);
    if (!record || (keys !== undefined && (record.key_id === null || !keys.includes(record.key_id)))) {
      throw errors.notFound(`No log entry has the id ${JSON.stringify(id)}.`, { code: 'log_not_found' });
    }
    // Stored bodies are a permission of their own: without it, the entry without its prompts.
    koa.body = mayReadBodies(access, keys) ? record : { ...record, request_body: null, response_body: null, bodies_withheld: record.request_body !== null || record.response_body !== null };
  });

  mountUsageApi(router, guard, store, async (access) => (access.organizationWide('usage.read') || !parts.keysOf ? undefined : parts.keysOf((key) => access.mayRead('usage.read', key))), parts.owners);
}

/**
 * `GET /admin/usage` and `GET /admin/usage/summary` (`usage.read`): the organization's usage over
 * every key, or for a team's reader over its teams' keys (a member's: its own keys) — `keysOf`.
 */
function mountUsageApi(router: Router, guard: AdminGuard, store: LogStore, keysOf: (access: Access) => Promise<string[] | undefined>, owners?: Parameters<typeof mountLogsApi>[1]['owners']): void {
  router.get('/admin/usage', guard.require('usage.read'), async (koa) => {
    const keys = await keysOf(accessOf(koa));
    const only = keys === undefined ? {} : { keys };
    const { range, from, to: end, bucketMs } = periodOf(koa);
    const groupBy = groupByOf(koa);
    const rangeMs = end - from;
    // The buckets for the charts, and one cell per group over the whole range for the totals
    // (percentiles do not add up from buckets).
    const [cells, totalCells] =
      groupBy === 'team' || groupBy === 'user_id'
        ? await byOwner(store, { from, to: end, bucketMs, rangeMs }, groupBy, keys, owners)
        : await Promise.all([store.usage({ from, to: end, bucketMs, groupBy, ...only }), store.usage({ from, to: end, bucketMs: rangeMs, groupBy, ...only })]);
    const labels = new Map(totalCells.filter((cell) => cell.label !== undefined).map((cell) => [cell.group, cell.label!]));
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
        ...(labels.has(group) ? { label: labels.get(group) } : {}),
        points: Array.from({ length: Math.ceil(rangeMs / bucketMs) }, (_, index) => {
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
            cost_usd: round(cell?.costUsd ?? 0, 9),
            cache_hits: cell?.cacheHits ?? 0,
            cache_misses: cell?.cacheMisses ?? 0,
            cache_saved_usd: round(cell?.savedUsd ?? 0, 9),
          };
        }),
      }));
    const totals = [...totalCells]
      .sort((a, b) => b.requests - a.requests || a.group.localeCompare(b.group))
      .map((cell) => ({ ...labelled(cell), ...figures(cell) }));
    koa.body = { range, group_by: groupBy, from: new Date(from).toISOString(), to: new Date(end).toISOString(), bucket_seconds: bucketMs / 1000, series, totals, cache: cacheSummary(cells) };
  });

  router.get('/admin/usage/summary', guard.require('usage.read'), async (koa) => {
    const visible = await keysOf(accessOf(koa));
    const only = visible === undefined ? {} : { keys: visible };
    const { range, from, to } = periodOf(koa);
    const length = to - from;
    // Two scans: the period (overall, and by key, end user and model) and the one before.
    const [[current, keys, users, models], [previous]] = await Promise.all([
      store.usageTotals({ from, to, groupBys: ['none', 'key', 'user', 'model'], ...only }),
      store.usageTotals({ from: from - length, to: from, groupBys: ['none'], ...only }),
    ]);
    koa.body = {
      range,
      current: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), ...figures(current[0]) },
      previous: { from: new Date(from - length).toISOString(), to: new Date(from).toISOString(), ...figures(previous[0]) },
      top: { keys: top(keys), users: top(users), models: top(models) },
    };
  });
}
