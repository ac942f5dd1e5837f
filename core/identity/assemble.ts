import { type Container, GatewaySettings, provide } from '../container.js';
import type { KeyResolver } from '../spec/key-resolver.js';
import { VaultService } from '../vault/service.js';
import { Organization } from '../org/organization.js';
import { organizationClaims } from '../org/sign-in.js';
import { jwtKeyResolver, JwtIssuers } from './jwt.js';
import { OidcSignIn } from './oidc.js';

/**
 * Who may sign in and call besides the account key and virtual keys: the OpenID Connect providers
 * of the dashboard (`auth.sso`) and the resolver of JWT callers (`auth.jwt`), each absent when
 * nothing is configured. The sign-in handler and the claims mapper come from `GatewayOptions.identity`.
 */
export class IdentityProviders {
  constructor(
    readonly oidc: OidcSignIn | undefined,
    readonly jwt: KeyResolver | undefined,
  ) {}
}

/** Registers the identity providers; a sign-in in progress is kept in the vault's state store once it is open. */
export function registerIdentity(container: Container): void {
  provide(container, IdentityProviders, (c) => {
    const { config, clock, options } = c.resolve(GatewaySettings);
    const vault = c.resolve(VaultService);
    const now = () => clock.now();
    const oidc =
      config.auth.sso.length === 0 ? undefined : new OidcSignIn(config.auth.sso, { now, records: () => (vault.isStarted ? vault.parts.state.records : undefined) });
    // Who a verified JWT is: the organization's service accounts and claims rules, unless the embedder decides.
    const mapClaims = options.identity?.mapClaims ?? organizationClaims(c.resolve(Organization), async (idOrName) => (await vault.parts.routes.route(idOrName))?.id);
    const jwt = config.auth.jwt.length === 0 ? undefined : jwtKeyResolver(new JwtIssuers(config.auth.jwt, { now }), mapClaims);
    return new IdentityProviders(oidc, jwt);
  });
}

/** The auth stage's key resolvers: the vault's (virtual keys), admin tokens (refused there), then JWT callers when configured. */
export function keyResolversOf(container: Container): KeyResolver[] {
  const { jwt } = container.resolve(IdentityProviders);
  const resolvers = [container.resolve(VaultService).resolver, container.resolve(Organization).adminTokenRefusal];
  return jwt === undefined ? resolvers : [...resolvers, jwt];
}
