import { type Container, GatewaySettings, provide } from '../container.js';
import { VaultService } from '../vault/service.js';
import { Organization } from './organization.js';
import { OrganizationStore } from './store.js';

/** Registers the organization: teams, users, service accounts and tokens in the vault's shared state. */
export function registerOrganization(container: Container): void {
  provide(container, Organization, () => {
    const { config, clock } = container.resolve(GatewaySettings);
    const vault = container.resolve(VaultService);
    return new Organization(new OrganizationStore(() => vault.parts.state), { accountKey: config.auth.accountKey, ...config.organization }, () => clock.now());
  });
}
