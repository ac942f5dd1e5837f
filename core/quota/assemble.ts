import { type Container, GatewaySettings, provide } from '../container.js';
import { quotaMetrics } from '../metrics/quota-metrics.js';
import { GatewayMetrics } from '../metrics/metrics.js';
import { Organization } from '../org/organization.js';
import { SecondCache } from '../org/team-directory.js';
import type { Caller } from '../pipeline/context.js';
import { expectedOutputTokens, promptTokensBound } from '../vault/estimate.js';
import { VaultService } from '../vault/service.js';
import { teamIdOf } from '../vault/team-access.js';
import { ORGANIZATION_TEAM, QuotaGate, type QuotaCaller } from './gate.js';
import { QuotaScheduler } from './scheduler.js';

/** Operations whose answer is generated text, whose output tokens count against a quota. */
const GENERATING = new Set(['chat', 'completion', 'passthrough']);

/**
 * Registers the providers' quotas: the scheduler (its clock and window from GatewayOptions.quota,
 * for tests), on the shared state's quota store, and the gate the forward stage asks, which finds a
 * request's team (its virtual key's, its service account's, else the organization) and weight.
 */
export function registerQuota(container: Container): void {
  provide(container, QuotaGate, (c) => {
    const { config, options } = c.resolve(GatewaySettings);
    const vault = c.resolve(VaultService);
    const organization = c.resolve(Organization);
    const scheduler = new QuotaScheduler({
      store: () => vault.parts.state.quota,
      ...(options.quota?.clock ? { clock: options.quota.clock } : {}),
      ...(options.quota?.windowMs ? { windowMs: options.quota.windowMs } : {}),
      ...(options.quota?.idleMs ? { idleMs: options.quota.idleMs } : {}),
      maxQueue: config.quota.maxQueue,
      observer: quotaMetrics(c.resolve(GatewayMetrics).registry),
    });
    const accounts = new SecondCache((id: string) => organization.store.serviceAccount(id));
    const callerOf = async (caller: Caller): Promise<QuotaCaller> => {
      if (caller.type === 'virtual-key') {
        const record = vault.keys.cached(caller.id) ?? (await vault.keys.get(caller.id));
        return { team: (record && teamIdOf(record)) ?? ORGANIZATION_TEAM, ...(record?.priority ? { priority: record.priority } : {}) };
      }
      if (caller.type === 'service-account') {
        // A JWT mapped by a claims rule is `jwt:<team>:<subject>`.
        if (caller.id.startsWith('jwt:')) return { team: caller.id.split(':')[1] };
        return { team: (await accounts.get(caller.id))?.team_id ?? ORGANIZATION_TEAM };
      }
      return { team: ORGANIZATION_TEAM };
    };
    return new QuotaGate({
      scheduler,
      credentialQuota: (credentials) => (vault.isStarted ? vault.parts.credentials.quotaOf(credentials) : undefined),
      caller: callerOf,
      weight: async (team) => (team === ORGANIZATION_TEAM ? 1 : ((await organization.teams.get(team))?.quota_weight ?? 1)),
      estimate: (operation, request) =>
        promptTokensBound(request.body) + (GENERATING.has(operation) ? expectedOutputTokens(request.body, config.vault.outputTokenEstimate).tokens : 0),
    });
  });
}
