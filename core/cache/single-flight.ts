import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Leases } from './leases.js';
import { type Found, type ResponseCache, within } from './response-cache.js';

export interface SingleFlightOptions {
  /** A lease's time to live; its holder renews it every third of that while it works. */
  readonly leaseMs: number;
  /** Longest a follower waits for the leader's answer before asking upstream itself (0: off). */
  readonly waitMs: number;
  /** Longest a lease read or write may take (`cache.timeoutMs`); past it the request goes on alone. */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

/**
 * A miss's part in its key's flight: the `leader` (it took the lease: it asks upstream, stores the
 * answer, then releases), a `follower` (someone else holds it: wait for the answer), or undefined
 * (single flight off, or the store failed: the request goes on as a plain miss).
 */
export type Flight = { readonly role: 'leader'; release(): Promise<void> } | { readonly role: 'follower' } | undefined;

/** A wait for a key's release, or for a poll interval to pass. */
interface Wake {
  readonly promise: Promise<void>;
  cancel(): void;
}

/**
 * One upstream call for identical concurrent misses (issue 39), across the workers and instances
 * that share the cache's store. The first miss of a key takes a short lease on it (the store's
 * `Leases`), asks upstream, stores the answer, then releases the lease; the misses that find the
 * lease held wait for the answer instead: they are woken by the release (in this process, or
 * through Redis pub/sub) or look every `pollMs`, and stop waiting when the answer is stored, the
 * lease is released or expires without one (the leader failed, or its answer was not storable),
 * or `waitMs` has passed. A follower that stops without an answer asks upstream itself. The
 * followers of one key in one process share one wait.
 */
export class SingleFlight {
  private readonly waits = new Map<string, Promise<Found | undefined>>();
  private readonly wakers = new Map<string, Set<() => void>>();

  constructor(
    private readonly cache: ResponseCache,
    private readonly options: SingleFlightOptions,
  ) {}

  /** Takes the lease on `key`, or says someone holds it; undefined when off or the store failed. */
  async claim(key: string): Promise<Flight> {
    const { leaseMs, waitMs } = this.options;
    if (waitMs <= 0) return undefined;
    const leases = await this.leases();
    const token = randomUUID();
    const taken = leases && (await this.guarded(() => leases.acquire(key, token, leaseMs)));
    if (taken === undefined || leases === undefined) return undefined;
    if (!taken) return { role: 'follower' };
    const started = Date.now();
    // Renewed while the leader works, for at most waitMs: no follower waits longer than that.
    const renewal = setInterval(
      () => {
        if (Date.now() - started > waitMs) clearInterval(renewal);
        else leases.renew(key, token, leaseMs).catch(() => {});
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    renewal.unref();
    let released: Promise<void> | undefined;
    const release = () => {
      clearInterval(renewal);
      released ??= this.guarded(() => leases.release(key, token)).then(() => this.wake(key));
      return released;
    };
    return { role: 'leader', release };
  }

  /** The answer stored under `key` once its leader has it; undefined when it stopped without one or `waitMs` passed. */
  wait(key: string, maxAgeMs: number): Promise<Found | undefined> {
    let shared = this.waits.get(key);
    if (shared === undefined) {
      shared = this.follow(key, maxAgeMs).finally(() => this.waits.delete(key));
      this.waits.set(key, shared);
    }
    return shared;
  }

  private async follow(key: string, maxAgeMs: number): Promise<Found | undefined> {
    const leases = await this.leases();
    if (leases === undefined) return undefined;
    if (leases.subscribe) await this.guarded(() => leases.subscribe!((released) => this.wake(released)));
    const deadline = Date.now() + this.options.waitMs;
    for (;;) {
      // Listen before looking, so that a release between the look and the wait is not missed.
      const wake = this.nextWake(key, Math.max(1, Math.min(leases.pollMs, deadline - Date.now())));
      const found = await this.cache.get(key, maxAgeMs);
      if (found) {
        wake.cancel();
        return found;
      }
      const held = await this.guarded(() => leases.held(key));
      if (!held) {
        wake.cancel();
        // Released (or expired) since the look above: its answer may have been stored in between.
        return held === undefined ? undefined : this.cache.get(key, maxAgeMs);
      }
      if (Date.now() >= deadline) {
        wake.cancel();
        return undefined;
      }
      await wake.promise;
    }
  }

  private nextWake(key: string, ms: number): Wake {
    let wakers = this.wakers.get(key);
    if (wakers === undefined) this.wakers.set(key, (wakers = new Set()));
    let done: () => void = () => {};
    const promise = new Promise<void>((resolve) => (done = resolve));
    const timer = setTimeout(() => cancel(), ms);
    const cancel = () => {
      clearTimeout(timer);
      wakers.delete(done);
      if (wakers.size === 0 && this.wakers.get(key) === wakers) this.wakers.delete(key);
      done();
    };
    wakers.add(cancel);
    return { promise, cancel };
  }

  private wake(key: string): void {
    for (const cancel of [...(this.wakers.get(key) ?? [])]) cancel();
  }

  private async leases(): Promise<Leases | undefined> {
    return this.guarded(async () => (await this.cache.store()).leases);
  }

  /** A lease operation within `timeoutMs`; undefined (and a warning) when it fails or lags. */
  private async guarded<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await within(work(), this.options.timeoutMs);
    } catch (error) {
      this.options.logger.warn({ cache: { operation: 'lease', reason: typeof error === 'symbol' ? `took over ${this.options.timeoutMs} ms` : (error as Error)?.message } }, 'response cache skipped');
      return undefined;
    }
  }
}
