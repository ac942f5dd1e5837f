/**
 * The shared counters of providers' quotas (docs/limits.md, "A provider's quota, shared fairly"):
 * per quota, per team, sliding windows of requests and tokens kept as {@link WINDOW_BUCKETS} + 1
 * buckets, the requests in flight, when each team last asked and its weight. One acquire checks
 * and counts atomically (Redis: one Lua script, one round trip; embedded: in the memory of the
 * process that owns the store); the queue of requests that wait stays in each instance
 * (core/quota/scheduler.ts).
 */
export interface QuotaStore {
  /** Checks the quota and the team's fair share and, when granted, counts the request. */
  acquire(acquire: QuotaAcquire): Promise<QuotaGrant>;
  /** Gives back (or adds) tokens once the usage is known, and/or frees the request's concurrency slot. */
  release(release: QuotaRelease): Promise<void>;
  /** What each team holds now (the admin API and the dashboard show it). */
  snapshot(key: string, now: number, windowMs: number): Promise<QuotaSnapshot>;
}

/** A minute's window is this many buckets; one more is counted so that an entry lives at least a whole window. */
export const WINDOW_BUCKETS = 60;

export interface QuotaAcquire {
  /** The quota's key (`cred:<id>` or `route:<target>`). */
  readonly key: string;
  readonly team: string;
  /** The team's `quota_weight` (> 0). */
  readonly weight: number;
  readonly now: number;
  /** The window's length: 60 000 ms (tests shrink it with a simulated clock). */
  readonly windowMs: number;
  /** A team that asked nothing for this long (and has nothing in flight) is idle and lends its share. */
  readonly idleMs: number;
  readonly requestsPerMinute?: number;
  readonly tokensPerMinute?: number;
  readonly maxConcurrent?: number;
  /** The request's estimated tokens. */
  readonly tokens: number;
  /** Only marks the team active (it has requests waiting) and refuses: nothing is counted. */
  readonly probe?: boolean;
}

export type QuotaDimension = 'requests' | 'tokens' | 'concurrent';

export type QuotaGrant =
  | { readonly granted: true; readonly bucket: number }
  | {
      readonly granted: false;
      readonly dimension: QuotaDimension;
      /** `quota`: the provider's whole limit is used; `share`: the team is over its share and the rest is held for others. */
      readonly scope: 'quota' | 'share';
      /** When the window next slides enough to change the answer (ms from `now`); -1 when only a release can (concurrency). */
      readonly retryAfterMs: number;
    };

export interface QuotaRelease {
  readonly key: string;
  readonly team: string;
  /** The bucket the acquire counted the request in. */
  readonly bucket: number;
  readonly now: number;
  readonly windowMs: number;
  /** Tokens to add (positive) or give back (negative) in that bucket, if it is still in the window. */
  readonly tokensDelta: number;
  /** Frees the request's concurrency slot. */
  readonly concurrent: boolean;
}

export interface QuotaSnapshot {
  readonly teams: ReadonlyArray<{ readonly team: string; readonly weight: number; readonly active: boolean; readonly requests: number; readonly tokens: number; readonly concurrent: number }>;
}

/** The bucket of `now` for a window of `windowMs`. */
export const bucketOf = (now: number, windowMs: number): number => Math.floor((now * WINDOW_BUCKETS) / windowMs);
/** When bucket `bucket` leaves the window (it is counted for {@link WINDOW_BUCKETS} + 1 buckets: at least a whole window after its request). */
export const bucketExpiresAt = (bucket: number, windowMs: number): number => Math.ceil(((bucket + WINDOW_BUCKETS + 1) * windowMs) / WINDOW_BUCKETS);

/** One team's counters within one quota. */
export interface TeamCounters {
  weight: number;
  seen: number;
  concurrent: number;
  /** Per bucket: requests and tokens. */
  readonly requests: Map<number, number>;
  readonly tokens: Map<number, number>;
}

interface Used {
  requests: number;
  tokens: number;
  concurrent: number;
  /** Oldest bucket holding requests / tokens, or undefined. */
  oldestRequests?: number;
  oldestTokens?: number;
}

function usedBy(counters: TeamCounters, current: number): Used {
  const used: Used = { requests: 0, tokens: 0, concurrent: counters.concurrent };
  for (const [series, field, oldest] of [
    [counters.requests, 'requests', 'oldestRequests'],
    [counters.tokens, 'tokens', 'oldestTokens'],
  ] as const) {
    for (const [bucket, amount] of series) {
      if (bucket < current - WINDOW_BUCKETS) {
        series.delete(bucket);
        continue;
      }
      used[field] += amount;
      if (amount > 0 && (used[oldest] === undefined || bucket < used[oldest]!)) used[oldest] = bucket;
    }
  }
  return used;
}

/**
 * The fair-share decision over one quota's teams (the Redis script does the same in Lua). For each
 * limit: refused when the quota is full; granted when the team stays within its share (limit ×
 * weight ÷ the weights of the active teams) or has nothing in the window yet; otherwise granted only
 * from what is left once every other active team's unused share is held back for it (borrowing
 * never takes an active team's share).
 */
export function decide(teams: Map<string, TeamCounters>, acquire: QuotaAcquire): QuotaGrant {
  const current = bucketOf(acquire.now, acquire.windowMs);
  let own = teams.get(acquire.team);
  if (own === undefined) teams.set(acquire.team, (own = { weight: acquire.weight, seen: acquire.now, concurrent: 0, requests: new Map(), tokens: new Map() }));
  own.weight = acquire.weight;
  own.seen = acquire.now;
  if (acquire.probe) return { granted: false, dimension: 'requests', scope: 'share', retryAfterMs: -1 };
  const used = new Map<string, Used>();
  let weights = 0;
  const active = new Set<string>();
  for (const [team, counters] of teams) {
    const teamUsed = usedBy(counters, current);
    if (team !== acquire.team && teamUsed.requests === 0 && teamUsed.tokens === 0 && teamUsed.concurrent === 0 && acquire.now - counters.seen > acquire.windowMs + acquire.idleMs) {
      teams.delete(team);
      continue;
    }
    used.set(team, teamUsed);
    if (team === acquire.team || teamUsed.concurrent > 0 || acquire.now - counters.seen < acquire.idleMs) {
      active.add(team);
      weights += counters.weight;
    }
  }
  const limits: Array<[QuotaDimension, number | undefined, number]> = [
    ['requests', acquire.requestsPerMinute, 1],
    ['tokens', acquire.tokensPerMinute, acquire.tokens],
    ['concurrent', acquire.maxConcurrent, 1],
  ];
  for (const [dimension, limit, cost] of limits) {
    if (limit === undefined) continue;
    const amount = (entry: Used) => (dimension === 'requests' ? entry.requests : dimension === 'tokens' ? entry.tokens : entry.concurrent);
    let total = 0;
    let oldest: number | undefined;
    for (const entry of used.values()) {
      total += amount(entry);
      const bucket = dimension === 'requests' ? entry.oldestRequests : dimension === 'tokens' ? entry.oldestTokens : undefined;
      if (bucket !== undefined && (oldest === undefined || bucket < oldest)) oldest = bucket;
    }
    const retryAfterMs = oldest === undefined ? -1 : Math.max(1, bucketExpiresAt(oldest, acquire.windowMs) - acquire.now);
    if (total + cost > limit) return { granted: false, dimension, scope: 'quota', retryAfterMs };
    const mine = amount(used.get(acquire.team)!);
    if (mine === 0 || mine + cost <= (limit * acquire.weight) / weights) continue;
    let held = 0;
    for (const team of active) {
      if (team === acquire.team) continue;
      held += Math.max(0, (limit * teams.get(team)!.weight) / weights - amount(used.get(team)!));
    }
    if (total + cost + held > limit) return { granted: false, dimension, scope: 'share', retryAfterMs };
  }
  own.requests.set(current, (own.requests.get(current) ?? 0) + 1);
  own.tokens.set(current, (own.tokens.get(current) ?? 0) + acquire.tokens);
  own.concurrent += 1;
  return { granted: true, bucket: current };
}

/** Applies a release to one quota's teams (see {@link QuotaStore.release}). */
export function applyRelease(teams: Map<string, TeamCounters>, release: QuotaRelease): void {
  const counters = teams.get(release.team);
  if (counters === undefined) return;
  if (release.concurrent) counters.concurrent = Math.max(0, counters.concurrent - 1);
  if (release.tokensDelta !== 0 && release.bucket >= bucketOf(release.now, release.windowMs) - WINDOW_BUCKETS) {
    const value = counters.tokens.get(release.bucket);
    if (value !== undefined) counters.tokens.set(release.bucket, Math.max(0, value + release.tokensDelta));
  }
}

/** What each team of one quota holds (see {@link QuotaStore.snapshot}). */
export function snapshotOf(teams: Map<string, TeamCounters>, now: number, windowMs: number, idleMs = 5000): QuotaSnapshot {
  const current = bucketOf(now, windowMs);
  return {
    teams: [...teams].map(([team, counters]) => {
      const used = usedBy(counters, current);
      return { team, weight: counters.weight, active: used.concurrent > 0 || now - counters.seen < idleMs, requests: used.requests, tokens: used.tokens, concurrent: used.concurrent };
    }),
  };
}

/** The embedded quota store: the counters in this process's memory (the one process that owns the embedded store). */
export class MemoryQuotaStore implements QuotaStore {
  private readonly quotas = new Map<string, Map<string, TeamCounters>>();

  async acquire(acquire: QuotaAcquire): Promise<QuotaGrant> {
    let teams = this.quotas.get(acquire.key);
    if (teams === undefined) this.quotas.set(acquire.key, (teams = new Map()));
    return decide(teams, acquire);
  }

  async release(release: QuotaRelease): Promise<void> {
    const teams = this.quotas.get(release.key);
    if (teams !== undefined) applyRelease(teams, release);
  }

  async snapshot(key: string, now: number, windowMs: number): Promise<QuotaSnapshot> {
    const teams = this.quotas.get(key);
    return teams === undefined ? { teams: [] } : snapshotOf(teams, now, windowMs);
  }
}
