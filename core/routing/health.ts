import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { targetPaths, targetStateKey } from './resolve.js';
import { HEALTH_CHECK, type HealthCheck, type Route, type Target } from './route.js';
import type { RoutingStateStore } from './state.js';

/** Sends one probe to a target within `timeoutMs` and resolves with the upstream status; throws when nothing answered. */
export type ProbeSender = (target: Target, check: HealthCheck, timeoutMs: number) => Promise<number>;

/** One probed target's health, as the admin API and the dashboard show it. */
export interface TargetHealth {
  /** `unknown` until a probe answered; `unhealthy` from `unhealthy_threshold` failures in a row until `healthy_threshold` successes in a row. */
  readonly status: 'unknown' | 'healthy' | 'unhealthy';
  /** When the last probe ended (epoch ms). */
  readonly lastProbeAt?: number;
  /** The last probe's upstream status; absent when nothing answered. */
  readonly lastStatus?: number;
  readonly lastLatencyMs?: number;
  /** Why the last probe failed: `status_<n>`, or the gateway's error code (`upstream_timeout`, `upstream_unreachable`, …). */
  readonly lastError?: string;
  readonly consecutiveFailures: number;
  readonly consecutiveSuccesses: number;
}

/** A route whose targets may carry health checks, under its breakers' scope (see `stateScope`). */
export interface ProbedRoute {
  readonly scope: string;
  readonly route: Route;
}

/** Where instances sharing Redis share the probing: one lease per target, and the results. */
export interface ProbeSharing {
  /** True when `owner` holds (took or extended) the target's lease for `ttlMs`. */
  lease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  publish(key: string, health: TargetHealth): Promise<void>;
  /** Every target's last shared result. */
  all(): Promise<Record<string, TargetHealth>>;
}

export interface HealthCheckerDependencies {
  /** The breakers: failed probes open them, passed probes close them. */
  readonly state: RoutingStateStore;
  readonly send: ProbeSender;
  /** The routes to look for health checks in (the config's and the stored ones). */
  readonly routes: () => Promise<readonly ProbedRoute[]>;
  /** Leases and results shared between instances; undefined: this instance probes every target itself. */
  readonly sharing?: () => ProbeSharing | undefined;
  readonly now?: () => number;
  readonly logger?: Logger;
  /** How often due probes are looked for (default 250 ms) and the routes read again (default 5 s). */
  readonly tickMs?: number;
  readonly refreshMs?: number;
}

interface Probe {
  readonly key: string;
  readonly target: Target;
  readonly check: HealthCheck;
  /** The check as text: a route saved with other settings gets a new probe. */
  readonly signature: string;
  nextAt: number;
  running: boolean;
  health: TargetHealth;
}

const UNKNOWN: TargetHealth = { status: 'unknown', consecutiveFailures: 0, consecutiveSuccesses: 0 };

/**
 * Runs the routes' active health checks: every target with a `health_check` is sent its cheap
 * request every `interval_ms`; `unhealthy_threshold` failures in a row open its breaker (again at
 * each further failure, so the breaker's cooldown never lets a user request through while probes
 * fail), `healthy_threshold` successes in a row close it. The breakers are the routing state's, so
 * with Redis the transitions reach every instance; and with Redis only the instance holding a
 * target's lease probes it, the others read its results.
 */
export class HealthChecker {
  /** This instance, as the holder of leases. */
  readonly instance = randomUUID();
  private readonly probes = new Map<string, Probe>();
  private refreshedAt = -Infinity;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly dependencies: HealthCheckerDependencies) {
    this.now = dependencies.now ?? Date.now;
  }

  /** Starts probing (timers do not keep the process alive). */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    const loop = (): void => {
      this.timer = setTimeout(() => {
        this.tick()
          .catch((error: unknown) => this.dependencies.logger?.warn({ err: error }, 'health checks: a pass failed'))
          .finally(() => {
            if (!this.stopped) loop();
          });
      }, this.dependencies.tickMs ?? 250);
      this.timer.unref();
    };
    loop();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** One pass: reads the routes again when due, then sends every due probe and waits for them. */
  async tick(): Promise<void> {
    const now = this.now();
    if (now - this.refreshedAt >= (this.dependencies.refreshMs ?? 5_000)) {
      await this.refresh();
      this.refreshedAt = now;
    }
    await Promise.all([...this.probes.values()].filter((probe) => !probe.running && probe.nextAt <= now).map((probe) => this.run(probe)));
  }

  /** Every probed target's health by its breaker key: this instance's results, and with Redis the others' (the newest wins). */
  async snapshot(): Promise<ReadonlyMap<string, TargetHealth>> {
    const merged = new Map<string, TargetHealth>();
    for (const probe of this.probes.values()) merged.set(probe.key, probe.health);
    const shared = await this.dependencies
      .sharing?.()
      ?.all()
      .catch(() => undefined);
    for (const [key, health] of Object.entries(shared ?? {})) {
      const mine = merged.get(key);
      if (mine === undefined || (health.lastProbeAt ?? 0) > (mine.lastProbeAt ?? 0)) merged.set(key, health);
    }
    return merged;
  }

  private async refresh(): Promise<void> {
    const seen = new Set<string>();
    for (const { scope, route } of await this.dependencies.routes()) {
      for (const { path, target } of targetPaths(route)) {
        const check = target.health_check;
        if (check === undefined || target.route !== undefined) continue;
        const key = targetStateKey(scope, path);
        const signature = JSON.stringify([target, check]);
        seen.add(key);
        if (this.probes.get(key)?.signature === signature) continue;
        this.probes.set(key, { key, target, check, signature, nextAt: this.now(), running: false, health: UNKNOWN });
      }
    }
    for (const key of this.probes.keys()) if (!seen.has(key)) this.probes.delete(key);
  }

  private async run(probe: Probe): Promise<void> {
    probe.running = true;
    const { check } = probe;
    const timeoutMs = check.timeout_ms ?? HEALTH_CHECK.timeoutMs;
    try {
      const sharing = this.dependencies.sharing?.();
      // The lease outlives a missed beat: a holder that stopped is replaced after two intervals.
      if (sharing && !(await sharing.lease(probe.key, this.instance, 2 * check.interval_ms + timeoutMs).catch(() => true))) return;
      if (this.stopped) return;
      const started = performance.now();
      let status: number | undefined;
      let failure: string | undefined;
      try {
        status = await this.dependencies.send(probe.target, check, timeoutMs);
        if (status >= 400) failure = `status_${status}`;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        failure = error instanceof GatewayError ? (error.body.code ?? `status_${error.status}`) : typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? code : 'probe_failed';
      }
      // The route changed meanwhile, or the gateway is closing (its upstream client with it).
      if (this.stopped || this.probes.get(probe.key) !== probe) return;
      probe.health = this.judge(probe, status, failure, performance.now() - started);
      await sharing?.publish(probe.key, probe.health).catch(() => {});
    } finally {
      probe.running = false;
      probe.nextAt = this.now() + check.interval_ms;
    }
  }

  /** The probe's new health, opening or closing its breaker as its thresholds say. */
  private judge(probe: Probe, status: number | undefined, failure: string | undefined, latencyMs: number): TargetHealth {
    const previous = probe.health;
    const unhealthyAfter = probe.check.unhealthy_threshold ?? HEALTH_CHECK.unhealthyThreshold;
    const healthyAfter = probe.check.healthy_threshold ?? HEALTH_CHECK.healthyThreshold;
    const base = { lastProbeAt: this.now(), ...(status !== undefined ? { lastStatus: status } : {}), lastLatencyMs: Math.round(latencyMs * 10) / 10 };
    if (failure !== undefined) {
      const failures = previous.consecutiveFailures + 1;
      const unhealthy = failures >= unhealthyAfter;
      if (unhealthy) this.dependencies.state.trip(probe.key);
      return { ...base, status: unhealthy ? 'unhealthy' : previous.status, lastError: failure, consecutiveFailures: failures, consecutiveSuccesses: 0 };
    }
    const successes = previous.consecutiveSuccesses + 1;
    const healthy = previous.status !== 'unhealthy' || successes >= healthyAfter;
    if (successes >= healthyAfter) this.dependencies.state.reset(probe.key);
    return { ...base, status: healthy ? 'healthy' : 'unhealthy', consecutiveFailures: 0, consecutiveSuccesses: successes };
  }
}
