/** Circuit breaker settings (`routing.breaker` in the config). */
export interface BreakerSettings {
  /** Consecutive failures that open a target's breaker (default 5). */
  readonly failures: number;
  /** A failure ratio within the window that opens it, once `minRequests` were seen (default 0.5). */
  readonly failureRatio: number;
  /** Fewest requests in the window before the ratio counts (default 20). */
  readonly minRequests: number;
  /** The window of the ratio, in milliseconds (default 60 000). */
  readonly windowMs: number;
  /** How long an open breaker skips its target before one half-open probe (default 30 000 ms). */
  readonly cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { failures: 5, failureRatio: 0.5, minRequests: 20, windowMs: 60_000, cooldownMs: 30_000 };

export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * Retry limits of routed requests (`routing.retry` in the config), so that an outage is not
 * multiplied by the gateway: a floor under every wait before a retry (`Retry-After: 0` included),
 * a cap on the upstream attempts of one request, and a retry budget per target.
 */
export interface RetrySettings {
  /** Least wait before a retry of the same target, in ms; the wait is jittered up to twice it (default 50). */
  readonly floorMs: number;
  /** Most upstream attempts of one request, every target and retry counted (default 32). */
  readonly maxAttempts: number;
  /**
   * The retry budget: the retries of a target within the window are at most this fraction of its
   * first attempts within it (default 0.2), or `budgetMinRetries`, whichever is more.
   */
  readonly budgetRatio: number;
  /** Retries of a target always allowed within the window, however few its requests (default 5). */
  readonly budgetMinRetries: number;
  /** The budget's sliding window, in ms (default 10 000). */
  readonly budgetWindowMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { floorMs: 50, maxAttempts: 32, budgetRatio: 0.2, budgetMinRetries: 5, budgetWindowMs: 10_000 };

/** A target's first attempts and retries in the current budget window and the one before it. */
interface RetryBudget {
  windowStart: number;
  requests: number;
  retries: number;
  previousRequests: number;
  previousRetries: number;
}

interface Breaker {
  state: BreakerState;
  consecutive: number;
  windowStart: number;
  requests: number;
  failed: number;
  openedAt: number;
  probing: boolean;
}

/** In-flight count and latency average of one target, for the load balancer's policies. */
export interface TargetLoad {
  readonly inFlight: number;
  /** EWMA of the latency to response headers, ms; undefined until one answer. */
  readonly latencyMs?: number;
}

/**
 * Where breakers and balancer statistics live. The memory implementation keeps them per instance;
 * its methods are synchronous so that the hot path does not wait on anything.
 */
export interface RoutingStateStore {
  /** Whether the target may be tried now (an open breaker past its cooldown lets one probe through). */
  allow(target: string): boolean;
  /** Milliseconds until an open breaker lets a probe through (0 when it is not open). */
  retryInMs(target: string): number;
  success(target: string, latencyMs: number): void;
  failure(target: string): void;
  /** Marks an attempt started; the returned function marks it finished. */
  begin(target: string): () => void;
  load(target: string): TargetLoad;
  /** Every breaker's state, for the metrics gauge. */
  breakers(): Array<{ target: string; state: BreakerState }>;
  /** One target's breaker and load as this instance sees them, for the admin API; undefined when it was never tried. */
  inspect(target: string): TargetSnapshot | undefined;
  /** Counts a request's first attempt on the target, which the target's retry budget grows with. */
  countRequest(target: string): void;
  /** Whether the target's retry budget allows one more retry now; when it does, the retry is counted. */
  takeRetry(target: string): boolean;
  /** Opens the target's breaker now (its cooldown starts again): failed health checks. */
  trip(target: string): void;
  /** Closes the target's breaker if it is not closed: passed health checks. */
  reset(target: string): void;
}

/** One target's breaker and load, as `GET /admin/routes/:id/state` shows them. */
export interface TargetSnapshot {
  /** `half_open` once an open breaker's cooldown has passed (the next attempt is a probe). */
  readonly state: BreakerState;
  /** Failures in a row since the last success. */
  readonly consecutiveFailures: number;
  /** Attempts and failures in the current ratio window, and when it started (epoch ms). */
  readonly windowRequests: number;
  readonly windowFailures: number;
  readonly windowStartedAt: number;
  /** When the breaker last opened (epoch ms), while it is open or half-open. */
  readonly openedAt?: number;
  /** When an open breaker lets a probe through (epoch ms), while it is open. */
  readonly retryAt?: number;
  readonly inFlight: number;
  readonly latencyMs?: number;
}

/** A breaker's move to open (at `openedAt`, epoch ms on the state's clock) or to closed: what instances share. */
export interface BreakerTransition {
  readonly target: string;
  readonly state: 'open' | 'closed';
  readonly openedAt: number;
}

/** Weight of the newest latency in the EWMA. */
const EWMA_ALPHA = 0.3;
/** Most targets whose state is kept (routes can only name 32 targets each, but routes are many). */
const MAX_TARGETS = 10_000;

/** {@link RoutingStateStore} in memory, per instance, with an injectable clock (tests). */
export class MemoryRoutingState implements RoutingStateStore {
  private readonly breakerMap = new Map<string, Breaker>();
  private readonly loads = new Map<string, { inFlight: number; latencyMs?: number }>();
  private readonly budgets = new Map<string, RetryBudget>();

  constructor(
    private readonly settings: BreakerSettings = DEFAULT_BREAKER,
    private readonly now: () => number = Date.now,
    /** Told of every breaker that opens or closes here (not of those {@link apply} sets). */
    private readonly onTransition?: (transition: BreakerTransition) => void,
    private readonly retry: RetrySettings = DEFAULT_RETRY,
  ) {}

  /** The target's budget with its window moved on to now (a window ago becomes the previous one). */
  private budget(target: string): RetryBudget {
    const now = this.now();
    let budget = this.budgets.get(target);
    if (budget === undefined) {
      if (this.budgets.size >= MAX_TARGETS) this.budgets.delete(this.budgets.keys().next().value as string);
      budget = { windowStart: now, requests: 0, retries: 0, previousRequests: 0, previousRetries: 0 };
      this.budgets.set(target, budget);
    }
    const elapsed = now - budget.windowStart;
    if (elapsed >= this.retry.budgetWindowMs) {
      const adjacent = elapsed < 2 * this.retry.budgetWindowMs;
      budget.previousRequests = adjacent ? budget.requests : 0;
      budget.previousRetries = adjacent ? budget.retries : 0;
      budget.requests = 0;
      budget.retries = 0;
      budget.windowStart = adjacent ? budget.windowStart + this.retry.budgetWindowMs : now;
    }
    return budget;
  }

  countRequest(target: string): void {
    this.budget(target).requests++;
  }

  takeRetry(target: string): boolean {
    const budget = this.budget(target);
    // A sliding window: the previous window counts for the part of it still within one window of now.
    const previousShare = Math.max(0, 1 - (this.now() - budget.windowStart) / this.retry.budgetWindowMs);
    const requests = budget.requests + budget.previousRequests * previousShare;
    const retries = budget.retries + budget.previousRetries * previousShare;
    if (retries + 1 > Math.max(this.retry.budgetMinRetries, this.retry.budgetRatio * requests)) return false;
    budget.retries++;
    return true;
  }

  /**
   * Sets a breaker as another instance reports it: open since `openedAt` (kept when this one opened
   * later), or closed. Counts are left as they are, so each instance still counts its own attempts.
   */
  apply(transition: BreakerTransition): void {
    const breaker = this.breaker(transition.target);
    if (transition.state === 'closed') {
      if (breaker.state === 'closed') return;
      breaker.state = 'closed';
      breaker.consecutive = 0;
      breaker.probing = false;
      return;
    }
    if (breaker.state !== 'closed' && breaker.openedAt >= transition.openedAt) return;
    breaker.state = 'open';
    breaker.openedAt = transition.openedAt;
    breaker.probing = false;
  }

  private breaker(target: string): Breaker {
    let breaker = this.breakerMap.get(target);
    if (breaker === undefined) {
      if (this.breakerMap.size >= MAX_TARGETS) this.breakerMap.delete(this.breakerMap.keys().next().value as string);
      breaker = { state: 'closed', consecutive: 0, windowStart: this.now(), requests: 0, failed: 0, openedAt: 0, probing: false };
      this.breakerMap.set(target, breaker);
    }
    return breaker;
  }

  allow(target: string): boolean {
    const breaker = this.breakerMap.get(target);
    if (breaker === undefined || breaker.state === 'closed') return true;
    if (breaker.state === 'open' && this.now() - breaker.openedAt >= this.settings.cooldownMs) {
      breaker.state = 'half_open';
      breaker.probing = false;
    }
    if (breaker.state === 'half_open' && !breaker.probing) {
      breaker.probing = true;
      return true;
    }
    return false;
  }

  retryInMs(target: string): number {
    const breaker = this.breakerMap.get(target);
    if (breaker === undefined || breaker.state === 'closed') return 0;
    return Math.max(0, breaker.openedAt + this.settings.cooldownMs - this.now());
  }

  private count(breaker: Breaker, failed: boolean): void {
    const now = this.now();
    if (now - breaker.windowStart > this.settings.windowMs) {
      breaker.windowStart = now;
      breaker.requests = 0;
      breaker.failed = 0;
    }
    breaker.requests++;
    if (failed) breaker.failed++;
  }

  success(target: string, latencyMs: number): void {
    const load = this.loads.get(target);
    if (load) load.latencyMs = load.latencyMs === undefined ? latencyMs : EWMA_ALPHA * latencyMs + (1 - EWMA_ALPHA) * load.latencyMs;
    else this.loads.set(target, { inFlight: 0, latencyMs });
    const breaker = this.breaker(target);
    this.count(breaker, false);
    breaker.consecutive = 0;
    if (breaker.state !== 'closed') {
      breaker.state = 'closed';
      breaker.probing = false;
      breaker.requests = 0;
      breaker.failed = 0;
      this.onTransition?.({ target, state: 'closed', openedAt: breaker.openedAt });
    }
  }

  failure(target: string): void {
    const breaker = this.breaker(target);
    this.count(breaker, true);
    breaker.consecutive++;
    const ratioTripped = breaker.requests >= this.settings.minRequests && breaker.failed / breaker.requests >= this.settings.failureRatio;
    if (breaker.state === 'half_open' || breaker.consecutive >= this.settings.failures || ratioTripped) {
      breaker.state = 'open';
      breaker.openedAt = this.now();
      breaker.probing = false;
      this.onTransition?.({ target, state: 'open', openedAt: breaker.openedAt });
    }
  }

  trip(target: string): void {
    const breaker = this.breaker(target);
    breaker.state = 'open';
    breaker.openedAt = this.now();
    breaker.probing = false;
    this.onTransition?.({ target, state: 'open', openedAt: breaker.openedAt });
  }

  reset(target: string): void {
    const breaker = this.breakerMap.get(target);
    if (breaker === undefined || breaker.state === 'closed') return;
    breaker.state = 'closed';
    breaker.consecutive = 0;
    breaker.probing = false;
    breaker.requests = 0;
    breaker.failed = 0;
    this.onTransition?.({ target, state: 'closed', openedAt: breaker.openedAt });
  }

  begin(target: string): () => void {
    let load = this.loads.get(target);
    if (load === undefined) {
      if (this.loads.size >= MAX_TARGETS) this.loads.delete(this.loads.keys().next().value as string);
      load = { inFlight: 0 };
      this.loads.set(target, load);
    }
    const counted = load;
    counted.inFlight++;
    return () => {
      counted.inFlight--;
    };
  }

  load(target: string): TargetLoad {
    return this.loads.get(target) ?? { inFlight: 0 };
  }

  breakers(): Array<{ target: string; state: BreakerState }> {
    return [...this.breakerMap].map(([target, breaker]) => ({ target, state: this.allowState(breaker) }));
  }

  inspect(target: string): TargetSnapshot | undefined {
    const breaker = this.breakerMap.get(target);
    const load = this.loads.get(target);
    if (breaker === undefined && load === undefined) return undefined;
    const state = breaker ? this.allowState(breaker) : 'closed';
    return {
      state,
      consecutiveFailures: breaker?.consecutive ?? 0,
      windowRequests: breaker?.requests ?? 0,
      windowFailures: breaker?.failed ?? 0,
      windowStartedAt: breaker?.windowStart ?? this.now(),
      ...(breaker && state !== 'closed' ? { openedAt: breaker.openedAt } : {}),
      ...(breaker && state === 'open' ? { retryAt: breaker.openedAt + this.settings.cooldownMs } : {}),
      inFlight: load?.inFlight ?? 0,
      ...(load?.latencyMs !== undefined ? { latencyMs: load.latencyMs } : {}),
    };
  }

  private allowState(breaker: Breaker): BreakerState {
    return breaker.state === 'open' && this.now() - breaker.openedAt >= this.settings.cooldownMs ? 'half_open' : breaker.state;
  }
}

/** A seeded pseudo-random generator (mulberry32) returning numbers in [0, 1): for reproducible load balancing in tests. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
