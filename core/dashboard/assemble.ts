import { AdminAccess } from '../admin/assemble.js';
import { type Container, GatewaySettings } from '../container.js';
import type { Router } from '../http/router.js';
import { IdentityProviders } from '../identity/assemble.js';
import { VaultService } from '../vault/service.js';
import { mountDashboard } from './index.js';

/** Mounts the dashboard: its sessions are kept in the vault's state store once the vault started; single sign-on when `auth.sso` is configured. */
export function mountDashboardOf(router: Router, container: Container): void {
  const { config, clock, logger, options } = container.resolve(GatewaySettings);
  const { oidc } = container.resolve(IdentityProviders);
  const { guard, accountKey, failedAuth } = container.resolve(AdminAccess);
  const vault = container.resolve(VaultService);
  mountDashboard(router, {
    adminGuard: guard,
    accountKey,
    failedAuth,
    trustProxy: config.server.trustProxy,
    clock,
    records: () => (vault.isStarted ? vault.parts.state.records : undefined),
    ...(oidc === undefined
      ? {}
      : { sso: { oidc, signIn: options.identity?.signIn, publicUrl: config.auth.publicUrl, logger } }),
  });
}
