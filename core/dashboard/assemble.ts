import { AdminAccess } from '../admin/assemble.js';
import { AuditTrail } from '../audit/assemble.js';
import { type Container, GatewaySettings } from '../container.js';
import type { Router } from '../http/router.js';
import { IdentityProviders } from '../identity/assemble.js';
import { VaultService } from '../vault/service.js';
import { mountDashboard } from './index.js';
import { Organization } from '../org/organization.js';
import { organizationSignIn } from '../org/sign-in.js';
import type { AuditInput } from '../audit/event.js';

/** Mounts the dashboard: its sessions are kept in the vault's state store once the vault started; single sign-on when `auth.sso` is configured. */
export function mountDashboardOf(router: Router, container: Container): void {
  const { config, clock, logger, options } = container.resolve(GatewaySettings);
  const trail = container.resolve(AuditTrail);
  const { oidc } = container.resolve(IdentityProviders);
  const { guard, accountKey, failedAuth } = container.resolve(AdminAccess);
  const vault = container.resolve(VaultService);
  const organization = container.resolve(Organization);
  // The sign-in stands when the trail cannot be written: the failure is logged, loudly.
  const audit = (input: AuditInput) => trail.record(input).catch((error: Error) => logger.error({ err: { message: error.message }, action: input.action }, 'audit event not recorded'));
  // Who a single sign-on is: the organization's users and group rules, unless the embedder decides.
  const signIn =
    options.identity?.signIn ??
    organizationSignIn(organization, (event) =>
      void audit({
        actor: event.user ? { type: 'user', id: event.user.id, label: event.user.email } : { type: 'system', label: event.email || 'unknown identity' },
        action: 'dashboard.sso.sign-in',
        outcome: event.outcome,
        target: { type: 'sso-provider', id: event.provider },
      }),
    );
  mountDashboard(router, {
    adminGuard: guard,
    accountKey,
    failedAuth,
    trustProxy: config.server.trustProxy,
    clock,
    records: () => (vault.isStarted ? vault.parts.state.records : undefined),
    organization: organization.store,
    accountKeyDisabled: organization.accountKeyDisabled,
    audit,
    ...(oidc === undefined ? {} : { sso: { oidc, signIn, publicUrl: config.auth.publicUrl, logger } }),
  });
}
