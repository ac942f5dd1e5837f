import { levelUsage, subjectLevel } from '../vault/level-usage.js';
import type { Context } from 'koa';
import { AccountKey } from '../identity/account-key.js';
import { type Container, GatewaySettings, provide } from '../container.js';
import { FailedAuthLimiter } from '../identity/failed-auth.js';
import { PolicyRegistry } from '../guardrails/registry.js';
import { CustomHostGuard } from '../http/custom-host.js';
import type { Router } from '../http/router.js';
import { RequestLogging } from '../logs/assemble.js';
import { GatewayMetrics } from '../metrics/metrics.js';
import { PluginRegistry } from '../registry.js';
import { Routing } from '../routing/assemble.js';
import type { GuardrailFactory, GuardrailManifest } from '../spec/guardrail.js';
import { VaultService } from '../vault/service.js';
import { AdminGuard } from './guard.js';
import { mountLogsApi } from './logs.js';
import { mountPolicyAdmin } from './policies.js';
import { mountPricesApi } from './prices.js';
import { Organization } from '../org/organization.js';
import { mountOrganizationAdmin } from './org-routes.js';
import { mountScim } from './scim.js';
import { mountCacheAdmin } from '../cache/admin.js';
import { ResponseCache } from '../cache/response-cache.js';
import { mountAuditOf } from '../audit/assemble.js';
import type { OwnershipLookups } from './ownership.js';
import { mountModelCatalogueApi } from './models-catalogue.js';
import { ModelCatalogue } from '../api/model-catalogue.js';
import { virtualKeyAdminRouter } from './virtual-keys.js';
import { mountQuotaAdmin } from './quotas.js';
import { QuotaGate } from '../quota/gate.js';

/** Who may call the gateway's admin routes: the account key, wrong keys counted per address, the guard in front of every admin route. */
export class AdminAccess {
  constructor(
    readonly accountKey: AccountKey,
    /** Set when the account key was generated on this start (shown once by the caller of listen). */
    readonly generated: string | undefined,
    readonly failedAuth: FailedAuthLimiter,
    readonly guard: AdminGuard,
  ) {}
}

/** Teams, users and service accounts as the ownership checks read them. */
export function ownershipLookups(organization: Organization): OwnershipLookups {
  const { store } = organization;
  return {
    // The `default` team exists once the organization is ready (created on first use).
    team: async (id) => {
      await organization.ready();
      return store.team(id);
    },
    userExists: async (id) => (await store.user(id)) !== undefined,
    serviceAccountTeam: async (id) => (await store.serviceAccount(id))?.team_id,
  };
}

/** Registers the admin access; the account key is read (or generated) now. */
export function registerAdmin(container: Container): void {
  const { config, clock } = container.resolve(GatewaySettings);
  const { accountKey, generated } = AccountKey.load(config.dataDir, config.accountKey);
  provide(container, AdminAccess, () => {
    const failedAuth = new FailedAuthLimiter({ ...config.server.failedAuth, maxAddresses: 10_000 }, () => clock.now());
    const organization = container.resolve(Organization);
    const guard = new AdminGuard(accountKey, { failedAuth, trustProxy: config.server.trustProxy }, { store: organization.store, accountKeyDisabled: organization.accountKeyDisabled, isScimToken: organization.isScimToken });
    return new AdminAccess(accountKey, generated, failedAuth, guard);
  });
}

/** Mounts the admin API on the app's router: plugins, policies, logs, prices, the model catalogue, the organization, SCIM, the cache, the providers' quotas, the audit trail and the metrics. */
export function mountAdmin(router: Router, container: Container): void {
  const { config, clock } = container.resolve(GatewaySettings);
  const { guard } = container.resolve(AdminAccess);
  const registry = container.resolve(PluginRegistry);
  const vault = container.resolve(VaultService);
  const logStore = container.resolve(RequestLogging).log.store;
  // Guardrail factories registered without params are listed from their manifests.
  const catalog = config.guardrails.filter((entry): entry is GuardrailFactory => typeof entry === 'function').map((factory) => factory.manifest);
  router.get('/admin/plugins', guard.require('plugins.read'), (koa) => {
    const listing = registry.list();
    const listed = new Set(listing.guardrails.map((manifest) => manifest.id));
    const unlisted = catalog.filter((manifest: GuardrailManifest) => !listed.has(manifest.id) && listed.add(manifest.id));
    koa.body = { ...listing, guardrails: [...listing.guardrails, ...unlisted.map((manifest) => ({ ...manifest }))] };
  });
  const policies = container.resolve(PolicyRegistry);
  mountPolicyAdmin(router, { guard, policies, defaultPolicy: config.defaultPolicy, service: vault, logStore, clock });
  const organization = container.resolve(Organization);
  mountLogsApi(router, {
    guard,
    store: logStore,
    keysOf: async (teams) => (await vault.keys.list()).filter((key) => teams(key)).map((key) => key.id),
    owners: async () => (await vault.keys.list()).map((key) => ({ id: key.id, team_id: key.team_id === undefined ? 'default' : key.team_id, user_id: key.user_id ?? key.service_account_id })),
  });
  mountOrganizationAdmin(router, {
    guard,
    organization,
    providerIds: () => registry.providerIds(),
    policyExists: (name) => policies.has(name),
    routeId: async (idOrName) => (await vault.parts.routes.route(idOrName))?.id,
    ownedBy: async (team) => {
      const owned = (object: { team_id?: string | null }) => (object.team_id === undefined ? 'default' : object.team_id) === team;
      const [keys, credentials, routes] = await Promise.all([vault.keys.list(), vault.credentials.list(), vault.parts.routes.list()]);
      return keys.filter(owned).length + credentials.filter(owned).length + routes.filter(owned).length;
    },
    ...(config.auth.publicUrl ? { publicUrl: config.auth.publicUrl } : {}),
    limitsUsage: (subject, limits) => levelUsage(vault.parts.state, subjectLevel(subject.level, subject.id, limits, subject.serviceAccount)),
  });
  mountScim(router, { guard, organization });
  mountCacheAdmin(router, { guard, cache: container.resolve(ResponseCache) });
  mountQuotaAdmin(router, { guard, service: vault, gate: container.resolve(QuotaGate) });
  mountAuditOf(router, container);
  mountPricesApi(router, { guard, prices: vault.prices, provider: (id) => registry.provider(id) });
  mountModelCatalogueApi(router, { guard, catalogue: container.resolve(ModelCatalogue), providers: () => registry.providerIds().map((id) => registry.provider(id)!) });
  const metrics = container.resolve(GatewayMetrics);
  const metricsRoute = async (koa: Context) => {
    koa.type = metrics.contentType;
    koa.body = await metrics.render();
  };
  if (config.metricsPublic) router.get('/metrics', metricsRoute);
  else router.get('/metrics', guard.require('metrics.read'), metricsRoute);
}

/** The admin API of credentials, virtual keys, stored routes and model aliases (its own router). */
export function virtualKeyAdmin(container: Container): Router {
  const { config } = container.resolve(GatewaySettings);
  const policies = container.resolve(PolicyRegistry);
  const registry = container.resolve(PluginRegistry);
  return virtualKeyAdminRouter({
    guard: container.resolve(AdminAccess).guard,
    ownership: ownershipLookups(container.resolve(Organization)),
    service: container.resolve(VaultService),
    customHosts: container.resolve(CustomHostGuard),
    providerIds: () => registry.providerIds(),
    policyExists: (name) => policies.has(name),
    routing: { state: container.resolve(Routing).executor.state, routes: config.routes, models: config.models, health: () => container.resolve(Routing).health.snapshot() },
  });
}
