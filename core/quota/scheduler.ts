import { errors, type GatewayError } from '../errors.js';
import { type QuotaGrant, type QuotaStore, WINDOW_BUCKETS } from '../store/quota-state.js';
import { DEFAULT_MAX_WAIT_MS, type PriorityClass, type ProviderQuota } from './settings.js';

/**
 * The time the scheduler reads and its one timer per quota. The system's by default; a test gives
 * a simulated one (GatewayOptions.quota.clock) so that a minute of traffic takes no minute, and its
 * fake provider enforces its own window on the same clock.
 */
export interface QuotaClock {
  now(): number;
  /** Calls `callback` in `ms`; a simulated clock may wait for the promise it returns (the queue's pass) before moving on. */
  setTimeout(callback: () => unknown, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemQuotaClock: QuotaClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A quota that applies to an attempt: its key in the store, its limits, and what metrics call it. */
export interface QuotaBinding {
  /** `cred:<credential id>` or `route:<route>/<target>`. */
  readonly key: string;
  readonly quota: ProviderQuota;
}

/** Who asks and for how much. */
export interface QuotaTicket {
  readonly team: string;
  readonly weight: number;
  readonly priority: PriorityClass;
  readonly tokens: number;
  /** The client leaving takes the request out of the queue. */
  readonly signal: AbortSignal;
}

/** What the metrics are told (core/metrics wires it). */
export interface QuotaObserver {
  /** The number of requests waiting for the quota changed. */
  depth(key: string, depth: number): void;
  /** A request that waited left the queue: `granted`, `timeout` (429) or `abort` (the client left). */
  waited(key: string, seconds: number, outcome: 'granted' | 'timeout' | 'abort'): void;
  /** A request was refused: `wait_exceeded` or `queue_full`. */
  refused(key: string, reason: 'wait_exceeded' | 'queue_full'): void;
}

/** One quota as this instance saw it (see {@link QuotaScheduler.stats}). */
export interface QuotaStats {
  readonly key: string;
  /** Requests waiting now. */
  depth: number;
  /** Leases given (at once or after a wait). */
  granted: number;
  /** Requests that queued and left the queue (granted, timed out, or gone), and their total wait. */
  waits: number;
  waitSeconds: number;
  /** 429s: `quota_wait_exceeded` and `quota_queue_full`. */
  refused: number;
}

export interface SchedulerOptions {
  readonly store: () => QuotaStore;
  readonly clock?: QuotaClock;
  /** The window's length (default 60 000 ms). */
  readonly windowMs?: number;
  /** A team idle this long lends its share (default 5000 ms). */
  readonly idleMs?: number;
  /** Most requests waiting for one quota on this instance (default 1000); past it: 429 `quota_queue_full`. */
  readonly maxQueue?: number;
  readonly observer?: QuotaObserver;
}

interface Waiter {
  readonly binding: QuotaBinding;
  readonly ticket: QuotaTicket;
  readonly since: number;
  readonly deadline: number;
  readonly resolve: (lease: QuotaLease) => void;
  readonly reject: (error: GatewayError) => void;
  readonly abort: () => void;
}

/** The requests waiting for one quota on this instance: interactive first, each class first come first served. */
interface Queue {
  readonly key: string;
  readonly interactive: Waiter[];
  readonly batch: Waiter[];
  timer?: unknown;
  timerAt?: number;
  passing: boolean;
  again: boolean;
  /** When the store last said the window slides enough to change its answer (epoch ms on the clock; undefined: only a release can). */
  retryAt?: number;
}

/**
 * One request's hold on a quota: its concurrency slot until {@link endFlight}, its tokens until
 * {@link settle} corrects them. Both at most once; both safe to call on any path.
 */
export class QuotaLease {
  private flying = true;
  private settled = false;

  constructor(
    private readonly scheduler: QuotaScheduler,
    readonly binding: QuotaBinding,
    readonly team: string,
    readonly bucket: number,
    readonly tokens: number,
    /** How long the request waited for it (ms; 0 when it did not queue). */
    readonly waitedMs: number,
  ) {}

  /** The attempt's answer ended (or failed): its concurrency slot is free. */
  endFlight(): void {
    if (!this.flying) return;
    this.flying = false;
    this.scheduler.release(this, 0, true);
  }

  /** The usage is known (`actualTokens`; undefined keeps the estimate): what was not used is given back. */
  settle(actualTokens: number | undefined): void {
    if (this.settled) return;
    this.settled = true;
    const delta = actualTokens === undefined ? 0 : Math.ceil(actualTokens) - this.tokens;
    const flying = this.flying;
    this.flying = false;
    if (delta !== 0 || flying) this.scheduler.release(this, delta, flying);
  }
}

/**
 * Shares providers' quotas between teams (docs/limits.md, "A provider's quota, shared fairly").
 * The counting and the fair-share decision are the store's (one atomic step, shared by every
 * instance); this keeps the instance's queue of requests over their team's share. A waiting request
 * is a promise and costs nothing: the queue is looked at again when this instance releases capacity
 * or when the window slides (one timer per quota, at the store's `retryAfterMs` or the earliest
 * deadline), never by a loop per request.
 */
export class QuotaScheduler {
  readonly clock: QuotaClock;
  readonly windowMs: number;
  readonly idleMs: number;
  private readonly maxQueue: number;
  private readonly queues = new Map<string, Queue>();
  /** What this instance saw per quota since it started (the admin API and the dashboard show it); bounded like the metrics' labels. */
  private readonly seen = new Map<string, QuotaStats>();

  constructor(private readonly options: SchedulerOptions) {
    this.clock = options.clock ?? systemQuotaClock;
    this.windowMs = options.windowMs ?? 60_000;
    this.idleMs = options.idleMs ?? 5000;
    this.maxQueue = options.maxQueue ?? 1000;
  }

  /** Per quota this instance used: requests waiting now, and since start the waits (count, seconds) and refusals. */
  stats(): QuotaStats[] {
    return [...this.seen.values()].map((stats) => ({ ...stats, depth: this.depthOf(stats.key) }));
  }

  private depthOf(key: string): number {
    const queue = this.queues.get(key);
    return queue === undefined ? 0 : queue.interactive.length + queue.batch.length;
  }

  private statsOf(key: string): QuotaStats {
    let stats = this.seen.get(key);
    if (stats === undefined) {
      if (this.seen.size >= 1000) this.seen.clear();
      this.seen.set(key, (stats = { key, depth: 0, granted: 0, waits: 0, waitSeconds: 0, refused: 0 }));
    }
    return stats;
  }

  /**
   * A lease on the quota: at once when the team is within its share (or may borrow), else after
   * waiting; 429 `quota_wait_exceeded` with Retry-After past `max_wait_ms`, 429 `quota_queue_full`
   * when the queue is full, 499 when the client leaves while waiting.
   */
  async acquire(binding: QuotaBinding, ticket: QuotaTicket): Promise<QuotaLease> {
    const queue = this.queues.get(binding.key);
    // A team's requests keep their order: one behind a waiting request of its own team waits too.
    const stats = this.statsOf(binding.key);
    const tokensPerMinute = binding.quota.tokens_per_minute;
    if (tokensPerMinute !== undefined && ticket.tokens > tokensPerMinute) {
      // It could never fit: no wait would help.
      stats.refused += 1;
      this.options.observer?.refused(binding.key, 'wait_exceeded');
      throw errors.rateLimited(
        `This request alone is estimated at ${ticket.tokens} tokens (its prompt's bound plus max_tokens), more than the provider quota's ${tokensPerMinute} tokens per minute: lower max_tokens or split the request.`,
        { code: 'quota_wait_exceeded', headers: { 'retry-after': String(retrySeconds(this.windowMs)) } },
      );
    }
    if (queue === undefined || !queued(queue, ticket.team)) {
      const grant = await this.tryAcquire(binding, ticket);
      if (grant.granted) {
        stats.granted += 1;
        return new QuotaLease(this, binding, ticket.team, grant.bucket, ticket.tokens, 0);
      }
      const maxWait = binding.quota.max_wait_ms ?? DEFAULT_MAX_WAIT_MS;
      if (maxWait === 0) {
        stats.refused += 1;
        this.options.observer?.refused(binding.key, 'wait_exceeded');
        throw waitExceeded(binding, grant.retryAfterMs);
      }
      return this.enqueue(binding, ticket, retryAtOf(this.clock.now(), grant.retryAfterMs));
    }
    return this.enqueue(binding, ticket, queue.retryAt);
  }

  private tryAcquire(binding: QuotaBinding, ticket: QuotaTicket, probe = false): Promise<QuotaGrant> {
    const { quota } = binding;
    return this.options.store().acquire({
      key: binding.key,
      team: ticket.team,
      weight: ticket.weight,
      now: this.clock.now(),
      windowMs: this.windowMs,
      idleMs: this.idleMs,
      requestsPerMinute: quota.requests_per_minute,
      tokensPerMinute: quota.tokens_per_minute,
      maxConcurrent: quota.max_concurrent,
      tokens: ticket.tokens,
      ...(probe ? { probe } : {}),
    });
  }

  private enqueue(binding: QuotaBinding, ticket: QuotaTicket, retryAt: number | undefined): Promise<QuotaLease> {
    let queue = this.queues.get(binding.key);
    if (queue === undefined) this.queues.set(binding.key, (queue = { key: binding.key, interactive: [], batch: [], passing: false, again: false, retryAt }));
    if (queue.interactive.length + queue.batch.length >= this.maxQueue) {
      this.statsOf(binding.key).refused += 1;
      this.options.observer?.refused(binding.key, 'queue_full');
      throw errors.rateLimited(`The provider's quota is in use and ${this.maxQueue} requests already wait for it on this instance; retry later.`, {
        code: 'quota_queue_full',
        headers: { 'retry-after': String(retrySeconds(this.msUntil(retryAt))) },
      });
    }
    if (ticket.signal.aborted) throw clientClosed();
    const now = this.clock.now();
    const target = queue;
    return new Promise<QuotaLease>((resolve, reject) => {
      const waiter: Waiter = {
        binding,
        ticket,
        since: now,
        deadline: now + (binding.quota.max_wait_ms ?? DEFAULT_MAX_WAIT_MS),
        resolve,
        reject,
        abort: () => {
          if (!remove(target, waiter)) return;
          this.observe(target, waiter, 'abort');
          reject(clientClosed());
          this.settleQueue(target);
        },
      };
      ticket.signal.addEventListener('abort', waiter.abort, { once: true });
      (ticket.priority === 'batch' ? target.batch : target.interactive).push(waiter);
      this.options.observer?.depth(target.key, target.interactive.length + target.batch.length);
      this.schedule(target, retryAt);
    });
  }

  /** Milliseconds from now until `at` (-1 when unknown). */
  private msUntil(at: number | undefined): number {
    return at === undefined ? -1 : Math.max(0, at - this.clock.now());
  }

  /** Releases capacity in the store, then looks at this quota's queue again. */
  release(lease: QuotaLease, tokensDelta: number, concurrent: boolean): void {
    const key = lease.binding.key;
    this.options
      .store()
      .release({ key, team: lease.team, bucket: lease.bucket, now: this.clock.now(), windowMs: this.windowMs, tokensDelta, concurrent })
      .catch(() => {})
      .finally(() => {
        const queue = this.queues.get(key);
        if (queue !== undefined) void this.pass(queue);
      });
  }

  /** Sets the quota's one timer for when the window slides (or, for concurrency, a bucket's time as a fallback) or the earliest deadline. */
  private schedule(queue: Queue, retryAt: number | undefined): void {
    const now = this.clock.now();
    queue.retryAt = retryAt;
    // Concurrency frees on a release: this instance's wake at once; another instance's within a bucket.
    // And at least every half idle time, so that a team whose requests wait stays active (not idle).
    let wakeAt = Math.min(retryAt ?? now + this.windowMs / WINDOW_BUCKETS, now + this.idleMs / 2);
    for (const waiter of queue.interactive) wakeAt = Math.min(wakeAt, waiter.deadline);
    for (const waiter of queue.batch) wakeAt = Math.min(wakeAt, waiter.deadline);
    if (queue.timer !== undefined && queue.timerAt! <= wakeAt) return;
    if (queue.timer !== undefined) this.clock.clearTimeout(queue.timer);
    queue.timerAt = wakeAt;
    queue.timer = this.clock.setTimeout(() => {
      queue.timer = undefined;
      return this.pass(queue);
    }, Math.max(0, wakeAt - now));
  }

  /**
   * Looks at the queue once: refuses waiters past their deadline, then offers the quota to the
   * waiters in order (interactive, then batch; first come first served), skipping a team once it
   * was refused for its share and stopping at the first refusal for the whole quota. One pass at a
   * time per quota; a wake during a pass runs another after it.
   */
  private async pass(queue: Queue): Promise<void> {
    if (queue.passing) {
      queue.again = true;
      return;
    }
    queue.passing = true;
    let retryAt = queue.retryAt;
    try {
      do {
        queue.again = false;
        this.expire(queue);
        const refusedTeams = new Set<string>();
        let nextRetry = Infinity;
        let full = false;
        let decidedAt = this.clock.now();
        for (const waiter of [...queue.interactive, ...queue.batch]) {
          if (refusedTeams.has(waiter.ticket.team)) continue;
          let grant: QuotaGrant;
          decidedAt = this.clock.now();
          try {
            // Past a refusal for the whole quota, later waiters are not served before earlier ones;
            // their teams are only marked active (they have requests waiting, so they are not idle).
            grant = await this.tryAcquire(waiter.binding, waiter.ticket, full);
            if (full) {
              refusedTeams.add(waiter.ticket.team);
              continue;
            }
          } catch {
            nextRetry = Math.min(nextRetry, decidedAt + this.windowMs / WINDOW_BUCKETS);
            break;
          }
          if (grant.granted) {
            if (!remove(queue, waiter)) {
              // It left (deadline, client) while the store answered: give the slot back.
              new QuotaLease(this, waiter.binding, waiter.ticket.team, grant.bucket, waiter.ticket.tokens, 0).settle(0);
              continue;
            }
            const waitedMs = this.clock.now() - waiter.since;
            this.observe(queue, waiter, 'granted');
            waiter.resolve(new QuotaLease(this, waiter.binding, waiter.ticket.team, grant.bucket, waiter.ticket.tokens, waitedMs));
            continue;
          }
          nextRetry = Math.min(nextRetry, decidedAt + (grant.retryAfterMs < 0 ? this.windowMs / WINDOW_BUCKETS : grant.retryAfterMs));
          if (grant.scope === 'quota') full = true;
          refusedTeams.add(waiter.ticket.team);
        }
        if (nextRetry !== Infinity) retryAt = nextRetry;
      } while (queue.again);
    } finally {
      queue.passing = false;
    }
    this.settleQueue(queue, retryAt);
  }

  /** Answers 429 to the waiters whose deadline passed. */
  private expire(queue: Queue): void {
    const now = this.clock.now();
    for (const waiter of [...queue.interactive, ...queue.batch]) {
      if (waiter.deadline > now || !remove(queue, waiter)) continue;
      this.observe(queue, waiter, 'timeout');
      this.statsOf(queue.key).refused += 1;
      this.options.observer?.refused(queue.key, 'wait_exceeded');
      waiter.reject(waitExceeded(waiter.binding, this.msUntil(queue.retryAt)));
    }
  }

  /** Drops an empty queue (and its timer), or sets its timer again. */
  private settleQueue(queue: Queue, retryAt = queue.retryAt): void {
    if (queue.interactive.length + queue.batch.length > 0) {
      this.schedule(queue, retryAt);
      return;
    }
    if (queue.timer !== undefined) this.clock.clearTimeout(queue.timer);
    queue.timer = undefined;
    if (!queue.passing && this.queues.get(queue.key) === queue) this.queues.delete(queue.key);
  }

  private observe(queue: Queue, waiter: Waiter, outcome: 'granted' | 'timeout' | 'abort'): void {
    waiter.ticket.signal.removeEventListener('abort', waiter.abort);
    const seconds = Math.max(0, this.clock.now() - waiter.since) / 1000;
    const stats = this.statsOf(queue.key);
    stats.waits += 1;
    stats.waitSeconds += seconds;
    if (outcome === 'granted') stats.granted += 1;
    this.options.observer?.waited(queue.key, seconds, outcome);
    this.options.observer?.depth(queue.key, queue.interactive.length + queue.batch.length);
  }
}

const queued = (queue: Queue, team: string): boolean => queue.interactive.some((waiter) => waiter.ticket.team === team) || queue.batch.some((waiter) => waiter.ticket.team === team);

function remove(queue: Queue, waiter: Waiter): boolean {
  for (const line of [queue.interactive, queue.batch]) {
    const index = line.indexOf(waiter);
    if (index >= 0) {
      line.splice(index, 1);
      return true;
    }
  }
  return false;
}

/** The clock time `retryAfterMs` (from the store, -1: unknown) after `now`. */
const retryAtOf = (now: number, retryAfterMs: number): number | undefined => (retryAfterMs < 0 ? undefined : now + retryAfterMs);

const retrySeconds = (ms: number): number => Math.max(1, Math.ceil((ms < 0 ? 1000 : ms) / 1000));

const clientClosed = (): GatewayError => errors.clientClosed('The client closed the request while it waited for the provider quota.', { code: 'client_closed' });

/** 429 `quota_wait_exceeded`: the request waited `max_wait_ms` for its team's share. */
function waitExceeded(binding: QuotaBinding, retryMs: number): GatewayError {
  const seconds = retrySeconds(retryMs);
  return errors.rateLimited(
    `The provider's quota is fully used by this team's share (and what other teams hold); the request waited ${binding.quota.max_wait_ms ?? DEFAULT_MAX_WAIT_MS} ms (max_wait_ms) without room. Retry after ${seconds} s.`,
    { code: 'quota_wait_exceeded', headers: { 'retry-after': String(seconds) } },
  );
}
