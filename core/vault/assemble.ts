import { type Container, GatewaySettings, provide } from '../container.js';
import { ControlPlane } from '../http/assemble.js';
import { VaultService } from './service.js';
import { Organization } from '../org/organization.js';

import { Readiness } from './readiness.js';
import { ClusterMembership } from '../cluster/assemble.js';
import type { Router } from '../http/router.js';

export { Readiness };

/** Registers the vault: credentials, virtual keys, their limits and alerts (its worker starts with `vault.start()`), and readiness. */
export function registerVault(container: Container): void {
  provide(container, VaultService, (c) => {
    const { config, options, logger } = c.resolve(GatewaySettings);
    const controlPlane = c.resolve(ControlPlane);
    return new VaultService({
      dataDir: config.dataDir,
      redisUrl: config.redisUrl,
      redisPrefix: config.vault.redisPrefix,
      environment: options.environment ?? process.env,
      credentialCacheMs: config.vault.credentialCacheMs,
      pricing: config.pricing,
      outputTokenEstimate: config.vault.outputTokenEstimate,
      reservationLeaseMs: config.vault.reservationLeaseMs,
      // Resolved on first use: the organization keeps its records in this vault's state.
      teams: (id) => c.resolve(Organization).teams.get(id),
      principals: {
        team: (id) => c.resolve(Organization).teams.get(id),
        user: (id) => c.resolve(Organization).users.get(id),
        serviceAccount: (id) => c.resolve(Organization).serviceAccounts.get(id),
        organization: () => c.resolve(Organization).organizationLimits(),
        ...(config.vault.endUserHeader ? { endUserHeader: config.vault.endUserHeader } : {}),
      },
      alerts: {
        ...config.alerts,
        get http() {
          return controlPlane.http();
        },
        logger,
      },
    });
  });
  provide(container, Readiness, (c) => new Readiness(c.resolve(VaultService)));
}

/** Mounts the probes: liveness (`GET /health`, reads nothing) and readiness (`GET /ready`: the vault's state store answers, the gateway is not draining). */
export function mountProbes(router: Router, container: Container): void {
  const { health } = container.resolve(ClusterMembership);
  router.get('/health', (koa) => void (koa.body = health));
  router.get('/ready', async (koa) => {
    const answer = await container.resolve(Readiness).check();
    koa.status = answer.status;
    koa.body = answer.body;
  });
}
