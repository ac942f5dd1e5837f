import { invalid } from '../api/validate.js';
import { errors, GatewayError } from '../errors.js';
import type { CustomHostGuard } from '../http/custom-host.js';
import { allTargets } from '../routing/store.js';
import { type BudgetAlert, budgetPeriodAt } from '../vault/alerts.js';
import { fromNanos, periodsOf, toNanos } from '../vault/limits.js';
import { type CredentialRecord, publicCredential, publicVirtualKey, type VirtualKeyRecord } from '../vault/records.js';
import type { VaultService } from '../vault/service.js';
import { DuplicateNameError, hashKeyValue, VIRTUAL_KEY_PREFIX, type VirtualKeyInput, type VirtualKeyPatch } from '../vault/virtual-keys.js';
import { checkVirtualKeyShape, parseCredentialBody, parseCredentialPatch, parseCredentialRotation } from './virtual-keys-input.js';
import { Access } from '../org/access.js';
import { type OwnershipLookups, ownershipOf, usableBy, visible } from './ownership.js';

export interface VirtualKeyActionDependencies {
  readonly service: VaultService;
  readonly customHosts: CustomHostGuard;
  /** Registered provider ids. */
  readonly providerIds: () => readonly string[];
  /** True when a guardrail policy of that name is configured. */
  readonly policyExists: (name: string) => boolean;
  /** The configuration's named routes (`routes`), which `allowed_routes` may grant by name; absent: none. */
  readonly configRoutes?: ReadonlyMap<string, unknown>;
  /** Teams and users, for the owner of new objects; absent (the CLI without the organization): objects go to the team named, else `default`. */
  readonly ownership?: OwnershipLookups;
}

const notFound = (what: 'credential' | 'virtual key', id: string) =>
  errors.notFound(`No ${what} with id "${id}".`, { code: `${what.replace(' ', '_')}_not_found` });

/**
 * A key naming a credential or a route that does not exist, or that belongs to a team the caller
 * cannot see (answered the same, so its existence does not leak): 404 with `param`.
 */
const credentialNotFound = (id: string) => errors.notFound(`No credential with id "${id}".`, { code: 'credential_not_found', param: 'credential_id' });
const routeNotFound = (idOrName: string, param: string, more = '') => errors.notFound(`No stored route with id or name "${idOrName}"${more}.`, { code: 'route_not_found', param });


function withoutSecret(body: Record<string, unknown>): Record<string, unknown> {
  const { provider_key: _secret, ...rest } = body;
  return rest;
}

/** The virtual keys that use a credential, by id and name. */
function usersOf(keys: readonly VirtualKeyRecord[], credentialId: string): Array<{ id: string; name: string }> {
  return keys.filter((key) => key.credential_id === credentialId).map((key) => ({ id: key.id, name: key.name }));
}

function conflictOf(error: unknown): unknown {
  return error instanceof DuplicateNameError ? errors.conflict(error.message, { code: 'duplicate_name', param: 'name' }) : error;
}

/** A PATCH keeps a key's kind: a key naming a route cannot be given a provider, nor a provider key a route. */
function checkSameKind(current: VirtualKeyRecord, body: Record<string, unknown>): void {
  if (current.route !== undefined) {
    for (const field of ['provider', 'credential_id', 'provider_key', 'custom_host'] as const) {
      if (body[field] !== undefined && body[field] !== null) throw invalid('this key names a route; create a new key to bind one provider.', { param: field });
    }
  } else if (body.route !== undefined) {
    throw invalid('this key is bound to a provider; create a new key to name a route.', { param: 'route' });
  }
}

/**
 * What the admin API and the CLI can do with credentials and virtual keys, validated (400 with
 * `param`, 404, 409) and answered without secrets. Shared so both paths check the same things.
 */
export class VirtualKeyActions {
  constructor(private readonly dependencies: VirtualKeyActionDependencies) {}

  private get service(): VaultService {
    return this.dependencies.service;
  }

  async createCredential(body: Record<string, unknown>, access: Access = Access.owner) {
    const input = parseCredentialBody(body);
    if (input.provider !== undefined) this.checkProvider(input.provider);
    const { team_id } = await this.ownerOf(access, body, 'credentials.write');
    return publicCredential(await this.service.credentials.create({ ...input, team_id }));
  }

  /** Credentials sorted by name (then id), each with the virtual keys that use it (`used_by`). */
  async listCredentials(access: Access = Access.owner) {
    const [credentials, keys, routeUsers] = await Promise.all([this.service.credentials.list(), this.service.keys.list(), this.routeUsers()]);
    return credentials
      .filter((credential) => access.mayRead('credentials.read', credential))
      .sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }) || a.id.localeCompare(b.id))
      .map((credential) => ({ ...publicCredential(credential), used_by: usersOf(keys, credential.id), used_by_routes: routeUsers(credential.id) }));
  }

  async getCredential(id: string, access: Access = Access.owner) {
    return this.withUsers(await this.credential(id, access, 'credentials.read'));
  }

  /** A credential the caller may read (404 otherwise) and, for a write permission, change (403). */
  private async credential(id: string, access: Access, permission: 'credentials.read' | 'credentials.write'): Promise<CredentialRecord> {
    return visible(access, await this.service.credentials.get(id), permission, () => notFound('credential', id));
  }

  /** The stored routes and model aliases whose targets name each credential (`route fast`, `model alias cheap`), read once. */
  private async routeUsers(): Promise<(credentialId: string) => string[]> {
    const { routes } = this.service.parts;
    const [stored, aliases] = await Promise.all([routes.list(), routes.listAliases()]);
    const named = [
      ...stored.map((route) => ({ label: `route ${route.name ?? route.id}`, targets: allTargets(route.route) })),
      ...aliases.filter((alias) => alias.route !== undefined).map((alias) => ({ label: `model alias ${alias.alias}`, targets: allTargets(alias.route!) })),
    ];
    return (credentialId) => named.filter((entry) => entry.targets.some((target) => target.credential === credentialId)).map((entry) => entry.label);
  }

  private async withUsers(credential: CredentialRecord) {
    const [keys, routeUsers] = await Promise.all([this.service.keys.list(), this.routeUsers()]);
    return { ...publicCredential(credential), used_by: usersOf(keys, credential.id), used_by_routes: routeUsers(credential.id) };
  }

  /** Replaces a credential's secret under the same id: the keys and routes naming it use the new one from their next request. */
  async rotateCredential(id: string, body: Record<string, unknown>, access: Access = Access.owner) {
    await this.credential(id, access, 'credentials.write');
    const secret = parseCredentialRotation(body);
    const rotated = await this.service.credentials.replaceSecret(id, secret);
    if (!rotated) throw notFound('credential', id);
    return this.withUsers(rotated);
  }

  /** Sets or removes a credential's provider `quota` (docs/limits.md). */
  async updateCredential(id: string, body: Record<string, unknown>, access: Access = Access.owner) {
    await this.credential(id, access, 'credentials.write');
    const { quota } = parseCredentialPatch(body);
    const updated = await this.service.credentials.setQuota(id, quota);
    if (!updated) throw notFound('credential', id);
    return this.withUsers(updated);
  }

  /**
   * Budget alerts of the current periods, newest first: of the keys the caller may read, and of the
   * other levels (teams, users, the organization, rules' end users and tags) to an organization-wide
   * `alerts.read`; a team's alerts also to that team's readers.
   */
  async alerts(access: Access = Access.owner) {
    const visible = (alert: BudgetAlert) =>
      alert.level === 'key' || access.organizationWide('alerts.read') || (alert.level === 'team' && access.holds('alerts.read', alert.key_id.slice('team:'.length)));
    return this.service.alerts.list((await this.service.keys.list()).filter((key) => access.mayRead('keys.read', key)), Date.now(), visible);
  }

  async deleteCredential(id: string, access: Access = Access.owner): Promise<void> {
    await this.credential(id, access, 'credentials.write');
    const users = (await this.service.keys.list()).filter((record) => record.credential_id === id);
    if (users.length > 0) {
      throw errors.conflict(`The credential is used by ${users.length} virtual key(s): ${users.map((record) => record.name).join(', ')}. Delete or re-point them first.`, { code: 'credential_in_use' });
    }
    const routes = await this.service.parts.routes.users((target) => target.credential === id);
    if (routes.length > 0) throw errors.conflict(`The credential is named by ${routes.join(', ')}. Change them first.`, { code: 'credential_in_use' });
    await this.service.credentials.delete(id);
  }

  /** Creates a key; the answer carries its value in `key`, the only time it is shown. */
  async createKey(body: Record<string, unknown>, access: Access = Access.owner) {
    checkVirtualKeyShape(body, true);
    const owner = await this.ownerOf(access, body, 'keys.write', true);
    await this.checkReferences(body, owner.team_id, access);
    const id = `vk_${crypto.randomUUID().replaceAll('-', '')}`;
    const credentialId = body.route === undefined && body.provider !== undefined ? await this.credentialFor(body, id, owner.team_id) : undefined;
    try {
      const input = { ...withoutSecret(body), ...owner, ...(credentialId !== undefined ? { credential_id: credentialId } : {}) };
      const { record, key } = await this.service.keys.create(input as unknown as VirtualKeyInput, id);
      return { ...publicVirtualKey(record), key };
    } catch (error) {
      if (body.provider_key !== undefined && credentialId !== undefined) await this.service.credentials.delete(credentialId);
      throw conflictOf(error);
    }
  }

  async listKeys(access: Access = Access.owner) {
    return (await this.service.keys.list()).filter((key) => access.mayRead('keys.read', key)).map(publicVirtualKey);
  }

  async getKey(id: string, access: Access = Access.owner) {
    return publicVirtualKey(await this.existing(id, access));
  }

  /** The key and its record after the change (for the audit trail's before/after). */
  async updateKey(id: string, body: Record<string, unknown>, access: Access = Access.owner) {
    const current = await this.existing(id, access, 'keys.write');
    checkVirtualKeyShape(body, false);
    checkSameKind(current, body);
    let team = current.team_id === undefined ? 'default' : current.team_id;
    if (body.team_id !== undefined || body.user_id !== undefined || body.service_account_id !== undefined) {
      const owner = await this.ownerOf(access, { team_id: team, user_id: current.user_id, service_account_id: current.service_account_id, ...body }, 'keys.write', true);
      team = owner.team_id;
      Object.assign(body, owner);
    }
    await this.checkReferences(body, team, access);
    // A key moved to another team keeps only what that team may use.
    if (body.team_id !== undefined) await this.checkReferences({ credential_id: current.credential_id, route: current.route, provider: current.provider, ...body }, team, access);
    const patch: Record<string, unknown> = withoutSecret(body);
    if (body.provider_key !== undefined || body.credential_id !== undefined) patch.credential_id = await this.credentialFor(body, current.id, team);
    let record: VirtualKeyRecord | undefined;
    try {
      record = await this.service.keys.update(current.id, patch as VirtualKeyPatch);
    } catch (error) {
      throw conflictOf(error);
    }
    if (!record) throw notFound('virtual key', current.id);
    if (current.credential_id !== undefined && record.credential_id !== current.credential_id) await this.deleteIfOwned(current.credential_id, current.id);
    return publicVirtualKey(record);
  }

  async deleteKey(id: string, access: Access = Access.owner): Promise<void> {
    const current = await this.existing(id, access, 'keys.write');
    // Stored routes name a key by id; one stored before that (not read since) may still hold its value.
    const names = (reference: string) => reference === current.id || (reference.startsWith(VIRTUAL_KEY_PREFIX) && hashKeyValue(reference) === current.key_hash);
    const routes = await this.service.parts.routes.users((target) => target.virtual_key !== undefined && names(target.virtual_key));
    if (routes.length > 0) throw errors.conflict(`The virtual key is a target of ${routes.join(', ')}. Change them first.`, { code: 'virtual_key_in_use' });
    const deleted = await this.service.keys.delete(id);
    if (!deleted) throw notFound('virtual key', id);
    await this.service.refusals.forget(deleted.id);
    if (deleted.credential_id !== undefined) await this.deleteIfOwned(deleted.credential_id, deleted.id);
  }

  async rotateKey(id: string, access: Access = Access.owner) {
    await this.existing(id, access, 'keys.write');
    const rotated = await this.service.keys.rotate(id);
    if (!rotated) throw notFound('virtual key', id);
    return { ...publicVirtualKey(rotated.record), key: rotated.key };
  }

  async usage(id: string, access: Access = Access.owner) {
    const record = await this.existing(id, access);
    const periods = periodsOf(record.id, Date.now());
    const budgetPeriod = record.limits?.budget_period ?? 'total';
    const now = Date.now();
    const budget = record.limits?.budget_usd;
    const budgetNanos = budget === undefined ? undefined : toNanos(budget);
    const [[total, day, week, month, reserved, requestsTotal, requestsDay], requestsMinute, alerts, refused] = await Promise.all([
      this.service.parts.state.read([
        periods.spent.total,
        periods.spent.day,
        periods.spent.week,
        periods.spent.month,
        periods.reserved[budgetPeriod],
        periods.requestsTotal,
        periods.requestsDay,
      ]),
      // The per-minute window is kept only for a key with a per-minute limit.
      record.limits?.requests_per_minute === undefined ? null : this.service.parts.state.minuteCount(periods.minuteWindow, now),
      this.service.alerts.forKey(record, now),
      budgetNanos === undefined ? undefined : this.service.refusals.current(record.id, periods.spent[budgetPeriod], budgetNanos),
    ]);
    const spentInPeriod = { total, day, week, month }[budgetPeriod]!;
    // Exhausted as the gateway enforces it: spend reached the budget, or what is left (in-flight
    // reservations counted, as admission counts them) is less than a request it refused this period.
    const left = budgetNanos === undefined ? 0 : budgetNanos - spentInPeriod - reserved;
    const exhausted = budgetNanos === undefined ? null : spentInPeriod >= budgetNanos || (refused !== undefined && left < refused.estimateNanos);
    const perDay = record.limits?.requests_per_day;
    const perMinute = record.limits?.requests_per_minute;
    const resetsAt = budget === undefined ? null : budgetPeriodAt(budgetPeriod, now).resetsAt;
    return {
      id: record.id,
      name: record.name,
      spend_usd: { total: fromNanos(total!), day: fromNanos(day!), week: fromNanos(week!), month: fromNanos(month!) },
      reserved_usd: fromNanos(reserved),
      requests: { total: requestsTotal, day: requestsDay, minute: requestsMinute },
      budget_usd: budget ?? null,
      budget_period: budget === undefined ? null : budgetPeriod,
      // In nano-USD, like the counters: a difference of dollar floats carries noise (0.000007700000000000004).
      remaining_usd: budget === undefined ? null : fromNanos(Math.max(0, toNanos(budget) - spentInPeriod - reserved)),
      /** Spend in the budget's period over the budget (may pass 1: an answer can cost more than its estimate). */
      budget_used: budget === undefined ? null : toNanos(budget) === 0 ? 1 : spentInPeriod / toNanos(budget),
      budget_exhausted: exhausted,
      /** The smallest estimate of a request refused for the budget in this period (at this budget). */
      refused_estimate_usd: refused === undefined ? null : fromNanos(refused.estimateNanos),
      budget_resets_at: resetsAt === null ? null : new Date(resetsAt).toISOString(),
      requests_per_minute: perMinute ?? null,
      requests_per_day: perDay ?? null,
      remaining_requests_this_minute: perMinute === undefined || requestsMinute === null ? null : Math.max(0, perMinute - requestsMinute),
      remaining_requests_today: perDay === undefined ? null : Math.max(0, perDay - requestsDay),
      // From `now` alone: `now` plus the time left in the day as of another clock reading was off by their difference.
      day_resets_at: new Date(budgetPeriodAt('day', now).resetsAt!).toISOString(),
      alerts: alerts.map((alert) => ({ threshold: alert.threshold, at: alert.at, spent_usd: alert.spent_usd })),
    };
  }

  private checkProvider(provider: string): void {
    const known = this.dependencies.providerIds();
    if (!known.includes(provider)) throw invalid(`unknown provider "${provider}"; registered: ${known.join(', ')}.`, { param: 'provider' });
  }

  /** The owner of a new object (see {@link ownershipOf}); without the organization, the team named or `default`. */
  private async ownerOf(access: Access, body: Record<string, unknown>, permission: 'keys.write' | 'credentials.write', keys = false) {
    const lookups = this.dependencies.ownership;
    if (!lookups) return { team_id: body.team_id === undefined ? 'default' : (body.team_id as string | null) };
    return ownershipOf(access, body, permission, lookups, { keys });
  }

  /**
   * The provider, policy, route(s), credential and custom host a key names exist and, for a key of
   * a team, are the team's to use: another team's credential or route is 404 (invisible), a shared one
   * outside the team's allow list or a provider outside it 403.
   */
  private async checkReferences(body: Record<string, unknown>, team: string | null = null, access: Access = Access.owner): Promise<void> {
    const teamRecord = team === null ? undefined : await this.dependencies.ownership?.team(team);
    if (typeof body.provider === 'string') {
      this.checkProvider(body.provider);
      if (teamRecord?.allowed_providers && !teamRecord.allowed_providers.includes(body.provider)) {
        throw errors.permission(`Team ${teamRecord.name} may not use the provider "${body.provider}" (allowed: ${teamRecord.allowed_providers.join(', ') || 'none'}).`, { code: 'permission_denied' });
      }
    }
    const named = [
      ...(typeof body.route === 'string' ? [[body.route, 'route']] : []),
      ...(Array.isArray(body.allowed_routes) ? (body.allowed_routes as string[]).map((entry, index) => [entry, `allowed_routes[${index}]`]) : []),
    ];
    for (const [routeId, param] of named as Array<[string, string]>) {
      const stored = await this.service.parts.routes.route(routeId);
      if (!stored) continue;
      // Another team's route answers as one that does not exist.
      if (!access.mayRead('routes.read', stored)) throw routeNotFound(routeId, param);
      if (!usableBy(team, teamRecord, stored, 'allowed_routes')) {
        throw errors.permission(`The route "${routeId}" is not one this team's keys may use.`, { code: 'permission_denied' });
      }
    }
    if (typeof body.credential_id === 'string') {
      const credential = await this.service.credentials.get(body.credential_id);
      if (!credential || !access.mayRead('credentials.read', credential)) throw credentialNotFound(body.credential_id);
      if (!usableBy(team, teamRecord, credential, 'allowed_credentials')) {
        throw errors.permission(`The credential "${body.credential_id}" is not one this team's keys may use.`, { code: 'permission_denied' });
      }
    }
    if (typeof body.guardrail_policy === 'string' && !this.dependencies.policyExists(body.guardrail_policy)) {
      throw invalid(`no guardrail policy named "${body.guardrail_policy}" is configured.`, { param: 'guardrail_policy' });
    }
    if (typeof body.route === 'string') {
      // Stored by id, so that renaming the route keeps the key on it.
      const route = await this.service.parts.routes.route(body.route);
      if (!route) throw routeNotFound(body.route, 'route');
      body.route = route.id;
    }
    if (Array.isArray(body.allowed_routes)) body.allowed_routes = await this.grantedRoutes(body.allowed_routes as string[]);
    if (typeof body.custom_host === 'string') {
      try {
        body.custom_host = await this.dependencies.customHosts.check(body.custom_host);
      } catch (error) {
        throw invalid(error instanceof GatewayError ? error.message : 'refused.', { param: 'custom_host' });
      }
    }
  }

  /**
   * `allowed_routes` as stored: a config route by its name (as `x-gateway-config` finds a config
   * route first), a stored route by its id (so that renaming it keeps the grant, and a new route
   * taking its old name is not granted); duplicates dropped. An entry naming no route is 404 with
   * `param` `allowed_routes[i]`.
   */
  private async grantedRoutes(entries: readonly string[]): Promise<string[]> {
    const granted = new Set<string>();
    for (const [index, entry] of entries.entries()) {
      if (this.dependencies.configRoutes?.has(entry)) {
        granted.add(entry);
        continue;
      }
      const stored = await this.service.parts.routes.route(entry);
      if (!stored) throw routeNotFound(entry.slice(0, 100), `allowed_routes[${index}]`, ', and no route of that name in the configuration');
      granted.add(stored.id);
    }
    return [...granted];
  }

  /** The credential the key uses: the one named, or a new one sealed from `provider_key` and owned by the key. */
  private async credentialFor(body: Record<string, unknown>, keyId: string, team: string | null = null): Promise<string> {
    if (typeof body.credential_id === 'string') {
      // A credential sealed from another key's provider_key lives and dies with that key: sharing it would
      // leave this key without a credential once the other one is deleted.
      const owner = (await this.service.credentials.get(body.credential_id))?.owner_key_id;
      if (owner !== undefined && owner !== keyId) {
        throw invalid(`the credential "${body.credential_id}" belongs to another virtual key (it was sealed from its provider_key); store a shared credential with POST /admin/credentials.`, { param: 'credential_id' });
      }
      return body.credential_id;
    }
    const created = await this.service.credentials.create({
      name: `${String(body.name ?? keyId)} (provider key)`,
      ...(typeof body.provider === 'string' ? { provider: body.provider } : {}),
      secret: { api_key: body.provider_key as string },
      ownerKeyId: keyId,
      team_id: team,
    });
    return created.id;
  }

  private async deleteIfOwned(credentialId: string, keyId: string): Promise<void> {
    const credential = await this.service.credentials.get(credentialId);
    if (credential?.owner_key_id === keyId) await this.service.credentials.delete(credentialId);
  }

  /** A key the caller may read (404 otherwise) and, for `keys.write`, change (403). */
  private async existing(id: string, access: Access = Access.owner, permission: 'keys.read' | 'keys.write' = 'keys.read'): Promise<VirtualKeyRecord> {
    return visible(access, await this.service.keys.get(id), permission, () => notFound('virtual key', id));
  }
}
