import { AdminAccess } from '../admin/assemble.js';
import { type Container, GatewaySettings } from '../container.js';
import type { Router } from '../http/router.js';
import { VaultService } from '../vault/service.js';
import { mountDashboard } from './index.js';
import { Organization } from '../org/organization.js';

/** Mounts the dashboard: its sessions are kept in the vault's state store once the vault started. */
export function mountDashboardOf(router: Router, container: Container): void {
  const { config, clock } = container.resolve(GatewaySettings);
  const { guard, accountKey, failedAuth } = container.resolve(AdminAccess);
  const vault = container.resolve(VaultService);
  const organization = container.resolve(Organization);
  mountDashboard(router, {
    adminGuard: guard,
    accountKey,
    failedAuth,
    trustProxy: config.server.trustProxy,
    clock,
    records: () => (vault.isStarted ? vault.parts.state.records : undefined),
    organization: organization.store,
    accountKeyDisabled: organization.accountKeyDisabled,
  });
}
