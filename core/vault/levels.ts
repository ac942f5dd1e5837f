import type { LevelAdmission, LevelSettlement } from '../store/state.js';
import type { LevelLimits } from './records.js';

/** The levels a request is admitted and charged at (docs/limits.md#levels). */
export type LevelName = 'organization' | 'team' | 'user' | 'key' | 'end_user' | 'tag';

export type BudgetPeriod = 'total' | 'day' | 'week' | 'month';

/** One level that applies to a request: whose it is, its limits, and where its counters live. */
export interface Level {
  readonly level: LevelName;
  /** The subject: a key, team, user or service account id, `organization`, an end user, or `<metadata key>=<value>`. */
  readonly id: string;
  /** How refusals name it: "This key", "Team Search", "End user alice (rule of team Search)"... */
  readonly label: string;
  /** The subject's own name, for alerts (a key's or team's name, a user's email); absent: its id. */
  readonly name?: string;
  readonly limits: LevelLimits;
  /** Counter keys' common prefix (a key's is `usage:<key id>`, as it always was). */
  readonly base: string;
  /** Counts requests per day and in total even without a limit on them (keys: the usage API reads them). */
  readonly countsRequests?: boolean;
}

const DAY_MS = 86_400_000;

/** Where the counters of a team, user, service account or the organization live (admission and the admin API's `limits_usage` alike). */
export function subjectBase(level: 'organization' | 'team' | 'user', id: string, serviceAccount = false): string {
  return level === 'organization' ? 'usage:org' : level === 'team' ? `usage:team:${id}` : serviceAccount ? `usage:sa:${id}` : `usage:user:${id}`;
}

/** The UTC periods of `now`, their ids and ends; computed once a day per process. */
interface Calendar {
  readonly dayStart: number;
  readonly nextDay: number;
  readonly ids: Readonly<Record<Exclude<BudgetPeriod, 'total'>, string>>;
  readonly ends: Readonly<Record<Exclude<BudgetPeriod, 'total'>, number>>;
}

let calendar: Calendar | undefined;

/** The UTC calendar at `now`: the day, the ISO week (from Monday) and the month, with when each ends. */
export function calendarAt(now: number): Calendar {
  if (calendar !== undefined && now >= calendar.dayStart && now < calendar.nextDay) return calendar;
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const day = date.getUTCDate();
  const dayStart = Date.UTC(year, month, day);
  const sinceMonday = (date.getUTCDay() + 6) % 7;
  const weekStart = dayStart - sinceMonday * DAY_MS;
  const fresh: Calendar = {
    dayStart,
    nextDay: dayStart + DAY_MS,
    ids: { day: date.toISOString().slice(0, 10), week: `w${new Date(weekStart).toISOString().slice(0, 10)}`, month: date.toISOString().slice(0, 7) },
    ends: { day: dayStart + DAY_MS, week: weekStart + 7 * DAY_MS, month: Date.UTC(year, month + 1, 1) },
  };
  if (now >= fresh.dayStart && now < fresh.nextDay) calendar = fresh;
  return fresh;
}

/** The counter of `base`'s spend (or reservations) in `period` at `now`. */
export function periodCounter(base: string, kind: 'spent' | 'reserved', period: BudgetPeriod, now: number): string {
  return period === 'total' ? `${base}:${kind}:total` : `${base}:${kind}:${period}:${calendarAt(now).ids[period]}`;
}

/** When the period's counters start again (epoch ms); undefined for `total`. */
export function periodEnd(period: BudgetPeriod, now: number): number | undefined {
  return period === 'total' ? undefined : calendarAt(now).ends[period];
}

/** How long a period's counter must live: a day past its period's end (none for `total`). */
const periodTtl = (period: BudgetPeriod, now: number): number | undefined => (period === 'total' ? undefined : calendarAt(now).ends[period] - now + DAY_MS);

const toNanos = (usd: number): number => Math.round(usd * 1_000_000_000);

/** Whether a level's spend must be counted: it has a budget or a soft budget. */
export const tracksSpend = (limits: LevelLimits): boolean => limits.budget_usd !== undefined || limits.soft_budget_usd !== undefined;

/**
 * Each level's admission and settlement parts, built once per UTC day (and per change of its
 * limits) rather than on every request; bounded. A lifetime computed at the first request of the
 * day only decides when a finished period's counter is dropped (a day after its end at the latest).
 */
interface CachedParts {
  readonly limits: LevelLimits;
  readonly dayStart: number;
  readonly admission: LevelAdmission;
  settlement?: LevelSettlement;
  reservedSettlement?: LevelSettlement;
}
const partsCache = new Map<string, CachedParts>();
const MAX_CACHED_PARTS = 10_000;

function cachedParts(level: Level, now: number): CachedParts {
  const { dayStart } = calendarAt(now);
  let parts = partsCache.get(level.base);
  if (parts === undefined || parts.limits !== level.limits || parts.dayStart !== dayStart) {
    if (partsCache.size >= MAX_CACHED_PARTS) partsCache.clear();
    parts = { limits: level.limits, dayStart, admission: buildAdmission(level, now) };
    partsCache.set(level.base, parts);
  }
  return parts;
}

/** A level's part of an admission. */
export const levelAdmission = (level: Level, now: number): LevelAdmission => cachedParts(level, now).admission;

/** A level's part of a settlement (see {@link buildSettlement}). */
export function levelSettlement(level: Level, admission: LevelAdmission, reserved: boolean, now: number): LevelSettlement {
  const parts = cachedParts(level, now);
  if (parts.admission !== admission) return buildSettlement(level, admission, reserved, now);
  if (reserved) return (parts.reservedSettlement ??= buildSettlement(level, admission, true, now));
  return (parts.settlement ??= buildSettlement(level, admission, false, now));
}

function buildAdmission(level: Level, now: number): LevelAdmission {
  const { limits, base } = level;
  const period = limits.budget_period ?? 'total';
  const calendarNow = calendarAt(now);
  const counted = level.countsRequests === true || limits.requests_per_day !== undefined;
  return {
    minuteWindowKey: `${base}:minute`,
    ...(counted ? { dayCounterKey: `${base}:requests:day:${calendarNow.ids.day}` } : {}),
    ...(level.countsRequests ? { totalCounterKey: `${base}:requests:total` } : {}),
    spentKey: periodCounter(base, 'spent', period, now),
    reservedKey: periodCounter(base, 'reserved', period, now),
    tokensWindowKey: `${base}:tokens`,
    concurrentKey: `${base}:inflight`,
    ...(limits.requests_per_minute !== undefined ? { requestsPerMinute: limits.requests_per_minute } : {}),
    ...(limits.requests_per_day !== undefined ? { requestsPerDay: limits.requests_per_day } : {}),
    ...(limits.tokens_per_minute !== undefined ? { tokensPerMinute: limits.tokens_per_minute } : {}),
    ...(limits.max_concurrent !== undefined ? { maxConcurrent: limits.max_concurrent } : {}),
    ...(limits.budget_usd !== undefined ? { budgetNanos: toNanos(limits.budget_usd) } : {}),
    ...(limits.budget_usd !== undefined && period !== 'total' ? { periodTtlMs: periodTtl(period, now) } : {}),
  };
}

/**
 * A level's part of a settlement: its reservation released, its cost added (a key: to its total,
 * day, week and month counters, which the usage API reads; another level: to its budget period's
 * counter, when it has a budget or a soft one), its token estimate corrected, its request in flight ended.
 */
function buildSettlement(level: Level, admission: LevelAdmission, reserved: boolean, now: number): LevelSettlement {
  return {
    ...(reserved && admission.budgetNanos !== undefined ? { reservedKey: admission.reservedKey } : {}),
    spent: spentCounters(level, now),
    ...(admission.tokensPerMinute !== undefined ? { tokensWindowKey: admission.tokensWindowKey } : {}),
    ...(admission.maxConcurrent !== undefined ? { concurrentKey: admission.concurrentKey } : {}),
  };
}

/**
 * The counters a level's cost is added to at `now`, each with its lifetime: a key's total, day, week
 * and month (the usage API reads them); another level's budget period, when it has a budget or a soft one.
 */
export function spentCounters(level: Pick<Level, 'limits' | 'base' | 'countsRequests'>, now: number): LevelSettlement['spent'] {
  const { limits, base } = level;
  const periods: BudgetPeriod[] = level.countsRequests ? ['total', 'day', 'week', 'month'] : tracksSpend(limits) ? [limits.budget_period ?? 'total'] : [];
  return periods.map((period) => {
    const ttlMs = periodTtl(period, now);
    return ttlMs === undefined ? { key: periodCounter(base, 'spent', period, now) } : { key: periodCounter(base, 'spent', period, now), ttlMs };
  });
}

/** Whether a level limits anything an admission checks (a level without limits is left out, except a key's). */
export const limitsSomething = (limits: LevelLimits): boolean =>
  limits.budget_usd !== undefined ||
  limits.soft_budget_usd !== undefined ||
  limits.requests_per_minute !== undefined ||
  limits.requests_per_day !== undefined ||
  limits.tokens_per_minute !== undefined ||
  limits.max_concurrent !== undefined;

/** A counter-key-safe form of a caller-chosen value (an end user, a tag value): bounded and without separators. */
export const counterPart = (value: string): string => encodeURIComponent(value.length > 200 ? value.slice(0, 200) : value);
