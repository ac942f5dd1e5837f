import type { SharedState } from '../store/state.js';
import { calendarAt, type Level, type LevelName, levelAdmission, periodCounter, periodEnd, subjectBase } from './levels.js';
import type { LevelLimits } from './records.js';

const fromNanos = (nanos: number): number => nanos / 1_000_000_000;
const iso = (time: number | undefined): string | null => (time === undefined ? null : new Date(time).toISOString());

/**
 * What a level has used of each of its limits, and when each resets (the admin API's `limits_usage`
 * on a team, user, service account and the organization). Read-only; a limit the level does not set is null.
 */
export async function levelUsage(state: SharedState, level: Level, now = Date.now()) {
  const { limits } = level;
  const parts = levelAdmission(level, now);
  const period = limits.budget_period ?? 'total';
  const calendar = calendarAt(now);
  const [[spent, reserved, day], minute, window] = await Promise.all([
    state.read([periodCounter(level.base, 'spent', period, now), parts.reservedKey, parts.dayCounterKey ?? `${level.base}:requests:day:${calendar.ids.day}`]),
    limits.requests_per_minute === undefined ? Promise.resolve(0) : state.minuteCount(parts.minuteWindowKey, now),
    limits.tokens_per_minute === undefined && limits.max_concurrent === undefined ? Promise.resolve({ tokens: 0, inFlight: 0 }) : state.windowUsage(parts.tokensWindowKey, parts.concurrentKey, now),
  ]);
  const resetsAt = iso(periodEnd(period, now));
  return {
    level: level.level,
    id: level.id,
    budget: limits.budget_usd === undefined ? null : { limit_usd: limits.budget_usd, spent_usd: fromNanos(spent!), reserved_usd: fromNanos(reserved!), period, resets_at: resetsAt },
    soft_budget: limits.soft_budget_usd === undefined ? null : { limit_usd: limits.soft_budget_usd, spent_usd: fromNanos(spent!), period, resets_at: resetsAt },
    requests_per_minute: limits.requests_per_minute === undefined ? null : { limit: limits.requests_per_minute, used: minute, window_seconds: 60 },
    requests_per_day: limits.requests_per_day === undefined ? null : { limit: limits.requests_per_day, used: day!, resets_at: iso(calendar.ends.day) },
    tokens_per_minute: limits.tokens_per_minute === undefined ? null : { limit: limits.tokens_per_minute, used: window.tokens, window_seconds: 60 },
    max_concurrent: limits.max_concurrent === undefined ? null : { limit: limits.max_concurrent, in_flight: window.inFlight },
  };
}

/** The level of a team, user, service account or the organization by its record's limits (the same counters admission uses). */
export function subjectLevel(level: Exclude<LevelName, 'key' | 'end_user' | 'tag'>, id: string, limits: LevelLimits, serviceAccount = false): Level {
  return { level, id, label: id, limits, base: subjectBase(level, id, serviceAccount) };
}
