import { AdminAccess } from '../admin/assemble.js';
import { AuditTrail } from '../audit/assemble.js';
import { type Container, GatewaySettings } from '../container.js';
import type { Router } from '../http/router.js';
import { VaultService } from '../vault/service.js';
import { mountDashboard } from './index.js';
import { Organization } from '../org/organization.js';

/** Mounts the dashboard: its sessions are kept in the vault's state store once the vault started. */
export function mountDashboardOf(router: Router, container: Container): void {
  const { config, clock, logger } = container.resolve(GatewaySettings);
  const trail = container.resolve(AuditTrail);
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
    // The sign-in stands when the trail cannot be written: the failure is logged, loudly.
    audit: (input) => trail.record(input).catch((error: Error) => logger.error({ err: { message: error.message }, action: input.action }, 'audit event not recorded')),
  });
}
