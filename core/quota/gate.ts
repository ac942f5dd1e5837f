import type { AuthSlice, Caller, ForwardSlice, GatewayContext, RequestSlice } from '../pipeline/context.js';
import type { Hook } from '../pipeline/hook.js';
import type { ProviderCredentials } from '../spec/provider.js';
import type { QuotaBinding, QuotaLease, QuotaScheduler } from './scheduler.js';
import { type PriorityClass, type ProviderQuota, requestPriority } from './settings.js';

/** The team requests without one are counted in: keys of the organization, the account key. */
export const ORGANIZATION_TEAM = 'organization';

/** Who a caller is for the quota: its team and its key's priority class. */
export interface QuotaCaller {
  readonly team: string;
  readonly priority?: PriorityClass;
}

/** What the gate is built with (core/quota/assemble.ts wires the vault and the organization in). */
export interface QuotaGateDependencies {
  readonly scheduler: QuotaScheduler;
  /** The stored credential these opened credentials come from, and its quota, if it has one. */
  readonly credentialQuota: (credentials: ProviderCredentials) => QuotaBinding | undefined;
  readonly caller: (caller: Caller) => QuotaCaller | Promise<QuotaCaller>;
  /** A team's `quota_weight` (default 1). */
  readonly weight: (team: string) => number | Promise<number>;
  /** The request's tokens as admitted: the prompt's bound plus `max_tokens` (or the configured output estimate). */
  readonly estimate: (operation: GatewayContext['operation'], request: RequestSlice) => number;
}

/**
 * Where the forward stage meets the quota: before each upstream attempt whose credential or route
 * target has a `quota`, {@link enter} waits for a lease; the lease's concurrency slot ends with the
 * attempt's answer (its body closing: a stream's end, an error, the client leaving), and its tokens
 * are corrected by the log stage's {@link settleHook} once the usage is known.
 */
export class QuotaGate {
  private readonly leases = new WeakMap<GatewayContext, Array<{ lease: QuotaLease; forward?: ForwardSlice }>>();

  constructor(private readonly dependencies: QuotaGateDependencies) {}

  /** The scheduler (its per-quota statistics, its window and clock for the admin API's snapshot). */
  get scheduler(): QuotaScheduler {
    return this.dependencies.scheduler;
  }

  /** The quota that applies to an attempt: the route target's own, else its credential's. */
  bindingOf(auth: AuthSlice, target?: { readonly key: string; readonly quota?: ProviderQuota }): QuotaBinding | undefined {
    if (target?.quota !== undefined) return { key: `route:${target.key}`, quota: target.quota };
    return this.dependencies.credentialQuota(auth.target.credentials);
  }

  /** `x-gateway-priority`, checked on every request that reaches the forward stage (400 `invalid_header`). */
  checkHeader(context: GatewayContext): void {
    if (context.incoming.headers['x-gateway-priority'] !== undefined) requestPriority(context.incoming.headers['x-gateway-priority'], undefined);
  }

  /** Waits for the attempt's lease (see {@link QuotaScheduler.acquire}); undefined (no promise, nothing awaited) when no quota applies. */
  enter(context: GatewayContext, auth: AuthSlice, request: RequestSlice, target?: { readonly key: string; readonly quota?: ProviderQuota }): Promise<QuotaLease> | undefined {
    const binding = this.bindingOf(auth, target);
    return binding === undefined ? undefined : this.lease(context, auth, request, binding);
  }

  private async lease(context: GatewayContext, auth: AuthSlice, request: RequestSlice, binding: QuotaBinding): Promise<QuotaLease> {
    const { team, priority } = await this.dependencies.caller(auth.caller);
    const lease = await this.dependencies.scheduler.acquire(binding, {
      team,
      weight: await this.dependencies.weight(team),
      priority: requestPriority(context.incoming.headers['x-gateway-priority'], priority),
      tokens: Math.max(1, Math.ceil(this.dependencies.estimate(context.operation, request))),
      signal: context.signal,
    });
    const held = this.leases.get(context);
    if (held) held.push({ lease });
    else this.leases.set(context, [{ lease }]);
    return lease;
  }

  /** The attempt ended without an answer (refused, timed out, the client left): its slot is free and its tokens are given back. */
  failed(lease: QuotaLease | undefined): void {
    lease?.settle(0);
  }

  /** The attempt answered: its slot is held until the answer's body closes (for a stream, its end). */
  answered(context: GatewayContext, lease: QuotaLease | undefined, forward: ForwardSlice): void {
    if (lease === undefined) return;
    const entry = this.leases.get(context)?.find((held) => held.lease === lease);
    if (entry) entry.forward = forward;
    if (forward.body.closed || forward.body.destroyed) lease.endFlight();
    else forward.body.once('close', () => lease.endFlight());
  }

  /**
   * The log stage's hook: the answer the client got is charged its reported usage (or keeps its
   * estimate when none was read, as a stream cut short); an attempt that failed gives its tokens
   * back. Every slot still held is freed.
   */
  settleHook(): Hook {
    return {
      name: 'quota-settle',
      stage: 'log',
      before: ['gateway-log'],
      run: async (context, next) => {
        const held = this.leases.get(context);
        if (held !== undefined) {
          this.leases.delete(context);
          for (const { lease, forward } of held) {
            const served = forward !== undefined && forward === context.forward;
            const usage = served ? context.transform?.usage : undefined;
            const tokens = usage ? usage.total_tokens || usage.prompt_tokens + usage.completion_tokens : undefined;
            // A failed attempt's tokens are given back: a refused or failed request uses next to none of a provider's quota.
            lease.settle(tokens ?? (served && forward.status < 400 ? undefined : 0));
          }
        }
        await next();
      },
    };
  }
}

