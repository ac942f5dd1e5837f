import { randomUUID } from 'node:crypto';
import type { RedisChannel, RedisState } from '../store/redis-state.js';
import type { SharedState } from '../store/state.js';
import type { ProbeSharing, TargetHealth } from './health.js';
import {
  type BreakerSettings,
  type BreakerState,
  type BreakerTransition,
  DEFAULT_BREAKER,
  DEFAULT_RETRY,
  MemoryRoutingState,
  type RetrySettings,
  type RoutingStateStore,
  type TargetLoad,
  type TargetSnapshot,
} from './state.js';

/** How long transitions are gathered before they are sent as one message (ms). */
const BATCH_MS = 10;
/** The channel and hash under the Redis prefix: `<prefix>:routing:breakers`. */
const CHANNEL = 'routing:breakers';
/** The hash of health-check results (and the prefix of their leases): `<prefix>:routing:probes`. */
const PROBES = 'routing:probes';

/** One message: the sender and its transitions, each `[target, 'open' | 'closed', openedAt]`. */
interface BreakerMessage {
  readonly from: string;
  readonly breakers: ReadonlyArray<readonly [string, 'open' | 'closed', number]>;
}

/**
 * {@link RoutingStateStore} shared over Redis (`REDIS_URL`). Every decision is taken on a local
 * {@link MemoryRoutingState}, synchronously; what is shared is each breaker's opening (with the
 * time it opened) and closing, sent in batches over pub/sub and kept in a hash so that an instance
 * that starts reads the breakers open now. Failure counts, half-open probes, attempts in flight,
 * latency averages and retry budgets stay per instance.
 */
export class SharedRoutingState implements RoutingStateStore {
  private readonly local: MemoryRoutingState;
  private readonly instance = randomUUID();
  private readonly pending = new Map<string, BreakerTransition>();
  private channel?: RedisChannel;
  private probes?: RedisChannel;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(settings: BreakerSettings = DEFAULT_BREAKER, now: () => number = Date.now, retry: RetrySettings = DEFAULT_RETRY) {
    this.local = new MemoryRoutingState(settings, now, (transition) => this.share(transition), retry);
  }

  /** Starts sharing through the vault's Redis state (its connections and prefix): reads the open breakers, then follows the others' transitions. */
  async attach(state: SharedState): Promise<void> {
    if (state.kind !== 'redis' || this.closed) return;
    const channel = await (state as RedisState).openChannel(CHANNEL, (message) => this.receive(message));
    for (const [target, value] of Object.entries(await channel.all())) {
      const openedAt = Number(value);
      if (Number.isFinite(openedAt)) this.local.apply({ target, state: 'open', openedAt });
    }
    this.channel = channel;
    this.probes = await (state as RedisState).openChannel(PROBES, () => {});
    if (this.pending.size > 0) this.schedule();
  }

  /** Health checks' leases and results in Redis, once attached: one instance probes each target, every instance shows the results. */
  probeSharing(): ProbeSharing | undefined {
    const probes = this.probes;
    if (probes === undefined) return undefined;
    return {
      lease: (key, owner, ttlMs) => probes.lease(key, owner, ttlMs),
      publish: (key, health) => probes.set({ [key]: JSON.stringify(health) }),
      all: async () => {
        const results: Record<string, TargetHealth> = {};
        for (const [key, text] of Object.entries(await probes.all())) {
          try {
            results[key] = JSON.parse(text) as TargetHealth;
          } catch {
            // A field another version wrote: skipped.
          }
        }
        return results;
      },
    };
  }

  /** Stops sending (the connections are the vault's, closed with it). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  allow(target: string): boolean {
    return this.local.allow(target);
  }

  retryInMs(target: string): number {
    return this.local.retryInMs(target);
  }

  success(target: string, latencyMs: number): void {
    this.local.success(target, latencyMs);
  }

  failure(target: string): void {
    this.local.failure(target);
  }

  begin(target: string): () => void {
    return this.local.begin(target);
  }

  load(target: string): TargetLoad {
    return this.local.load(target);
  }

  breakers(): Array<{ target: string; state: BreakerState }> {
    return this.local.breakers();
  }

  inspect(target: string): TargetSnapshot | undefined {
    return this.local.inspect(target);
  }

  /**
   * The retry budget is kept per instance, as Envoy keeps its per host: a ratio of each instance's
   * own requests bounds the fleet's retries by the same ratio of the fleet's requests, with no
   * round trip on the hot path; only the small `budgetMinRetries` floor adds up per instance.
   */
  countRequest(target: string): void {
    this.local.countRequest(target);
  }

  takeRetry(target: string): boolean {
    return this.local.takeRetry(target);
  }

  trip(target: string): void {
    this.local.trip(target);
  }

  reset(target: string): void {
    this.local.reset(target);
  }

  private share(transition: BreakerTransition): void {
    this.pending.set(transition.target, transition);
    if (this.channel) this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => {});
    }, BATCH_MS);
    this.timer.unref();
  }

  /** Sends the gathered transitions as one message and updates the hash (best effort: Redis down leaves each instance on its own). */
  private async flush(): Promise<void> {
    const channel = this.channel;
    if (!channel || this.pending.size === 0) return;
    const transitions = [...this.pending.values()];
    this.pending.clear();
    const message: BreakerMessage = { from: this.instance, breakers: transitions.map((transition) => [transition.target, transition.state, transition.openedAt]) };
    const open = transitions.filter((transition) => transition.state === 'open');
    const closed = transitions.filter((transition) => transition.state === 'closed');
    await Promise.all([
      channel.publish(JSON.stringify(message)),
      channel.set(Object.fromEntries(open.map((transition) => [transition.target, String(transition.openedAt)]))),
      channel.remove(closed.map((transition) => transition.target)),
    ]);
  }

  private receive(text: string): void {
    let message: BreakerMessage;
    try {
      message = JSON.parse(text) as BreakerMessage;
    } catch {
      return;
    }
    if (message.from === this.instance || !Array.isArray(message.breakers)) return;
    for (const entry of message.breakers) {
      const [target, state, openedAt] = entry;
      if (typeof target !== 'string' || (state !== 'open' && state !== 'closed') || typeof openedAt !== 'number') continue;
      this.local.apply({ target, state, openedAt });
    }
  }
}
