import type Router from '@koa/router';
import { invalid } from '../api/validate.js';
import type { PolicyRegistry } from '../guardrails/registry.js';
import type { LogStore, VerdictCounts } from '../logs/store.js';
import type { Clock } from '../spec/manifest.js';
import type { VaultService } from '../vault/service.js';
import type { AdminGuard } from './guard.js';

/** The default window of `GET /admin/policies/verdicts`, and its longest. */
export const DEFAULT_VERDICT_HOURS = 24;
const MAX_VERDICT_HOURS = 24 * 90;

export interface PolicyAdminDependencies {
  readonly guard: AdminGuard;
  readonly policies: PolicyRegistry;
  readonly defaultPolicy?: string;
  readonly service: VaultService;
  readonly logStore: LogStore;
  readonly clock: Clock;
}

/** The virtual keys naming each policy (`guardrail_policy`), by policy name; the default policy also covers keys naming none. */
async function keysByPolicy(service: VaultService): Promise<Map<string | undefined, Array<{ id: string; name: string }>>> {
  const byPolicy = new Map<string | undefined, Array<{ id: string; name: string }>>();
  if (!service.isStarted) return byPolicy;
  for (const record of await service.keys.list()) {
    const list = byPolicy.get(record.guardrail_policy) ?? [];
    list.push({ id: record.id, name: record.name });
    byPolicy.set(record.guardrail_policy, list);
  }
  for (const list of byPolicy.values()) list.sort((a, b) => a.name.localeCompare(b.name));
  return byPolicy;
}

function hoursOf(value: unknown): number {
  if (value === undefined) return DEFAULT_VERDICT_HOURS;
  const hours = typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_VERDICT_HOURS) throw invalid(`expected a whole number of hours from 1 to ${MAX_VERDICT_HOURS}.`, { param: 'hours' });
  return hours;
}

/**
 * `GET /admin/policies`: the configured policies (chains, params with write-only ones hidden) with
 * the virtual keys that use each; `GET /admin/policies/verdicts?hours=24`: the guardrail verdicts
 * of the last `hours` from the log store, by policy, guardrail, side and action.
 */
export function mountPolicyAdmin(router: Router, dependencies: PolicyAdminDependencies): void {
  const { guard, policies, defaultPolicy, service, logStore, clock } = dependencies;
  router.get('/admin/policies', guard.require('policies.read'), async (koa) => {
    const keys = await keysByPolicy(service);
    koa.body = {
      policies: policies.list().map((policy) => ({
        ...policy,
        default: policy.name === defaultPolicy,
        keys: keys.get(policy.name) ?? [],
        // Keys naming no policy take the default one (and so does the account key).
        ...(policy.name === defaultPolicy ? { default_keys: keys.get(undefined) ?? [] } : {}),
      })),
      defaultPolicy: defaultPolicy ?? null,
    };
  });
  router.get('/admin/policies/verdicts', guard.require('policies.read'), async (koa) => {
    const hours = hoursOf(koa.query.hours);
    const to = clock.now();
    const from = to - hours * 3_600_000;
    const counts: VerdictCounts = await logStore.verdicts({ from, to });
    koa.body = {
      object: 'policy_verdicts',
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      hours,
      data: policies.list().map((policy) => {
        const requests = counts.requests.find((entry) => entry.policy === policy.name);
        return {
          policy: policy.name,
          requests: requests?.requests ?? 0,
          denied: requests?.denied ?? 0,
          transformed: requests?.transformed ?? 0,
          verdicts: counts.verdicts
            .filter((entry) => entry.policy === policy.name)
            .map(({ guardrail, side, action, count }) => ({ guardrail, side, action, count })),
        };
      }),
    };
  });
}
