import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { invalid } from '../api/validate.js';
import { errors } from '../errors.js';
import { stateScope, targetPaths, targetStateKey } from '../routing/resolve.js';
import { invalidRoute, parseRoute, type Route } from '../routing/route.js';
import type { RoutingStateStore } from '../routing/state.js';
import type { TargetHealth } from '../routing/health.js';
import { DuplicateRouteNameError, type RouteStore } from '../routing/store.js';
import type { VaultService } from '../vault/service.js';
import type { AdminGuard } from './guard.js';
import { requestJson } from './json-body.js';
import { requireRecordName } from './virtual-keys-input.js';
import { Access } from '../org/access.js';
import { type OwnershipLookups, ownershipOf, usableBy, visible } from './ownership.js';
import { accessOf, noteAudit } from './guard.js';
import type { StoredRoute } from '../routing/sources.js';
import { type KeyLookups, shownRoute, storedKeyReferences, withShownRoute } from './route-keys.js';

export interface RouteActionDependencies {
  readonly service: VaultService;
  /** Registered provider ids. */
  readonly providerIds: () => readonly string[];
  /** The breakers and balancer statistics, and the routes and aliases of the configuration (read-only). */
  readonly routing?: {
    readonly state: RoutingStateStore;
    readonly routes: ReadonlyMap<string, Route>;
    readonly models: ReadonlyMap<string, Route>;
    /** The health checks' last results by breaker key (with Redis, every instance's). */
    readonly health?: () => Promise<ReadonlyMap<string, TargetHealth>>;
  };
  /** Teams, for the owner of new routes; absent (the CLI): the team named, else `default`. */
  readonly ownership?: OwnershipLookups;
}

/** One target's breaker as the admin API shows it (`GET /admin/routes/:id/state`). */
export interface TargetStateListing {
  readonly path: string;
  readonly name: string;
  readonly kind: 'provider' | 'virtual_key' | 'route';
  readonly provider?: string;
  /** False while this instance has not tried it yet (then closed, with zero counts). */
  readonly tried: boolean;
  readonly state: 'closed' | 'open' | 'half_open';
  readonly consecutive_failures: number;
  readonly window_requests: number;
  readonly window_failures: number;
  readonly opened_at: string | null;
  readonly retry_at: string | null;
  readonly in_flight: number;
  readonly latency_ms: number | null;
  /** The target's active health check and its last result; null when the target has none. */
  readonly health_check: HealthCheckListing | null;
}

/** A target's health check as the admin API shows it. */
export interface HealthCheckListing {
  readonly status: 'unknown' | 'healthy' | 'unhealthy';
  readonly interval_ms: number;
  readonly last_probe_at: string | null;
  readonly last_status: number | null;
  readonly last_latency_ms: number | null;
  readonly last_error: string | null;
  readonly consecutive_failures: number;
  readonly consecutive_successes: number;
}

function healthListing(target: Route['targets'][number], health: TargetHealth | undefined): HealthCheckListing | null {
  if (target.health_check === undefined || target.route !== undefined) return null;
  return {
    status: health?.status ?? 'unknown',
    interval_ms: target.health_check.interval_ms,
    last_probe_at: isoOrNull(health?.lastProbeAt),
    last_status: health?.lastStatus ?? null,
    last_latency_ms: health?.lastLatencyMs ?? null,
    last_error: health?.lastError ?? null,
    consecutive_failures: health?.consecutiveFailures ?? 0,
    consecutive_successes: health?.consecutiveSuccesses ?? 0,
  };
}

const isoOrNull = (epochMs: number | undefined) => (epochMs === undefined ? null : new Date(epochMs).toISOString());

/** Every target of a route with its breaker under `scope` (see `stateScope`); a nested route's own entry has no breaker of its own. */
function targetStates(route: Route, scope: string, state: RoutingStateStore | undefined, health?: ReadonlyMap<string, TargetHealth>): TargetStateListing[] {
  return targetPaths(route).map(({ path, target, name }) => {
    const snapshot = target.route ? undefined : state?.inspect(targetStateKey(scope, path));
    const probed = health?.get(targetStateKey(scope, path));
    return {
      path,
      name,
      kind: target.route ? 'route' : target.virtual_key !== undefined ? 'virtual_key' : 'provider',
      ...(target.provider !== undefined ? { provider: target.provider } : {}),
      tried: snapshot !== undefined,
      state: snapshot?.state ?? 'closed',
      consecutive_failures: snapshot?.consecutiveFailures ?? 0,
      window_requests: snapshot?.windowRequests ?? 0,
      window_failures: snapshot?.windowFailures ?? 0,
      opened_at: isoOrNull(snapshot?.openedAt),
      retry_at: isoOrNull(snapshot?.retryAt),
      in_flight: snapshot?.inFlight ?? 0,
      latency_ms: snapshot?.latencyMs === undefined ? null : Math.round(snapshot.latencyMs * 10) / 10,
      health_check: healthListing(target, probed),
    };
  });
}

const routeNotFound = (id: string) => errors.notFound(`No stored route with id "${id}".`, { code: 'route_not_found' });
const aliasNotFound = (alias: string) => errors.notFound(`No model alias "${alias}".`, { code: 'model_alias_not_found' });

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const field of Object.keys(body)) if (!allowed.includes(field)) throw invalid(`unknown field; expected one of ${allowed.join(', ')}.`, { param: field });
}

/** A route name: like a record name, and never shaped like an id (`route_…`), so id and name lookups cannot collide. */
function parseRouteName(value: unknown): string {
  const name = requireRecordName(value);
  if (name.startsWith('route_')) throw invalid('must not start with "route_" (ids do).', { param: 'name' });
  return name;
}

/**
 * The admin API's stored routes (`/admin/routes`, every change a new version) and model aliases
 * (`/admin/models/:alias`). Routes are checked with `parseRoute` and their references against
 * what exists: 400 with `param` naming the field.
 */
export class RouteActions {
  constructor(private readonly dependencies: RouteActionDependencies) {}

  private get store(): RouteStore {
    return this.dependencies.service.parts.routes;
  }

  /** The virtual keys routes name (by id, or by value in a config route), for storing and showing references. */
  private get keys(): KeyLookups {
    return this.dependencies.service.parts.keys;
  }

  /** A record holding a route, as answers show it: virtual keys by id and hint, never a value. */
  private shown<T extends { readonly route?: Route }>(record: T): Promise<T> {
    return withShownRoute(record, this.keys);
  }

  async create(body: Record<string, unknown>, access: Access = Access.owner) {
    onlyFields(body, ['name', 'route', 'team_id']);
    const name = body.name === undefined ? undefined : parseRouteName(body.name);
    const lookups = this.dependencies.ownership;
    const team = lookups ? (await ownershipOf(access, body, 'routes.write', lookups)).team_id : body.team_id === undefined ? 'default' : (body.team_id as string | null);
    const route = await this.checked(body.route, 'route', team, access);
    try {
      return await this.shown(await this.store.create(route, name, team));
    } catch (error) {
      throw error instanceof DuplicateRouteNameError ? errors.conflict(error.message, { code: 'duplicate_name', param: 'name' }) : error;
    }
  }

  async list(access: Access = Access.owner) {
    return Promise.all((await this.store.list()).filter((stored) => access.mayRead('routes.read', stored)).map((stored) => this.shown(stored)));
  }

  async get(id: string, access: Access = Access.owner) {
    return this.shown(await this.visible(id, access, 'routes.read'));
  }

  /** A stored route the caller may read (404 otherwise) and, for `routes.write`, change (403). */
  private async visible(id: string, access: Access, permission: 'routes.read' | 'routes.write'): Promise<StoredRoute> {
    return visible(access, await this.store.get(id), permission, () => routeNotFound(id));
  }

  async versions(id: string, access: Access = Access.owner) {
    await this.visible(id, access, 'routes.read');
    const versions = await this.store.versions(id);
    if (versions.length === 0) throw routeNotFound(id);
    return Promise.all(versions.map((version) => this.shown(version)));
  }

  /**
   * The breaker of every target of a stored route, as this instance sees it: under the route's id
   * (requests naming it in `x-gateway-config` or through a virtual key), and under each model
   * alias naming it (an alias keeps breakers of its own).
   */
  async state(id: string, access: Access = Access.owner) {
    const current = await this.get(id, access);
    const routeState = this.dependencies.routing?.state;
    const health = await this.dependencies.routing?.health?.();
    const aliases = (await this.store.listAliases()).filter((alias) => alias.route_id === id);
    return {
      object: 'route_state',
      id: current.id,
      ...(current.name !== undefined ? { name: current.name } : {}),
      version: current.version,
      targets: targetStates(current.route, current.id, routeState, health),
      aliases: aliases.map((alias) => ({ alias: alias.alias, targets: targetStates(current.route, stateScope({ name: alias.alias, source: 'alias' })!, routeState, health) })),
    };
  }

  /**
   * The routes and model aliases declared in the configuration (read-only), each target with its
   * breaker; a virtual key the file gives by value is shown by id and hint, as stored routes are.
   */
  async configRoutes() {
    const routing = this.dependencies.routing;
    if (!routing) return [];
    const health = await routing.health?.();
    const listed = (kind: 'route' | 'model', entries: ReadonlyMap<string, Route>) =>
      [...entries].map(async ([name, route]) => ({
        kind,
        name,
        route: await shownRoute(route, this.keys),
        targets: targetStates(route, stateScope({ name, source: kind === 'model' ? 'alias' : 'header' })!, routing.state, health),
      }));
    return Promise.all([...listed('route', routing.routes), ...listed('model', routing.models)]);
  }

  /** Replaces the route (and its name when given; `null` removes the name): a new version. */
  async replace(id: string, body: Record<string, unknown>, access: Access = Access.owner) {
    onlyFields(body, ['name', 'route']);
    const current = await this.visible(id, access, 'routes.write');
    const name = body.name === undefined || body.name === null ? (body.name as undefined | null) : parseRouteName(body.name);
    const route = await this.checked(body.route, 'route', current.team_id === undefined ? 'default' : current.team_id, access);
    try {
      const replaced = await this.store.replace(id, route, name);
      if (!replaced) throw routeNotFound(id);
      return await this.shown(replaced);
    } catch (error) {
      throw error instanceof DuplicateRouteNameError ? errors.conflict(error.message, { code: 'duplicate_name', param: 'name' }) : error;
    }
  }

  /** Deletes a route and its versions; refused (409) while a virtual key names it (as its route or in `allowed_routes`) or a model alias does. */
  async delete(id: string, access: Access = Access.owner): Promise<void> {
    await this.visible(id, access, 'routes.write');
    const keys = (await this.dependencies.service.keys.list()).filter((record) => record.route === id || record.allowed_routes?.includes(id) === true);
    if (keys.length > 0) {
      throw errors.conflict(`The route is used by ${keys.length} virtual key(s), as their route or in their allowed_routes: ${keys.map((record) => record.name).join(', ')}.`, { code: 'route_in_use' });
    }
    const aliases = (await this.store.listAliases()).filter((alias) => alias.route_id === id);
    if (aliases.length > 0) throw errors.conflict(`The route is named by the model alias(es) ${aliases.map((alias) => alias.alias).join(', ')}.`, { code: 'route_in_use' });
    await this.store.delete(id);
  }

  /** Sets a model alias to an inline route (`{ route }`) or a stored route (`{ route_id }`, by id or name). */
  async setAlias(alias: string, body: Record<string, unknown>) {
    if (!/^[A-Za-z0-9._:/-]{1,128}$/.test(alias)) throw invalid('expected 1 to 128 letters, digits or . _ : / -', { param: 'alias' });
    onlyFields(body, ['route', 'route_id']);
    if ((body.route === undefined) === (body.route_id === undefined)) throw invalid('give route or route_id, not both.', { param: 'route' });
    if (body.route !== undefined) return this.shown(await this.store.setAlias(alias, { route: await this.checked(body.route, 'route') }));
    if (typeof body.route_id !== 'string') throw invalid('expected a stored route id or name.', { param: 'route_id' });
    const stored = await this.store.route(body.route_id);
    if (!stored) throw invalid(`no stored route with id or name "${body.route_id}".`, { param: 'route_id' });
    return this.store.setAlias(alias, { route_id: stored.id });
  }

  async listAliases() {
    return Promise.all((await this.store.listAliases()).map((alias) => this.shown(alias)));
  }

  async deleteAlias(alias: string): Promise<void> {
    if (!(await this.store.deleteAlias(alias))) throw aliasNotFound(alias);
  }

  /**
   * The route validated, then every provider, credential and virtual key it names checked to exist;
   * returned as it is stored: virtual keys by id, never by value.
   */
  private async checked(value: unknown, param: string, team: string | null = null, access: Access = Access.owner): Promise<Route> {
    if (value === undefined) throw invalid('a route is required.', { param });
    const route = parseRoute(value, param);
    await this.checkReferences(route, param, team, access);
    return storedKeyReferences(route, param, this.keys);
  }

  private async checkReferences(route: Route, param: string, team: string | null, access: Access): Promise<void> {
    const { service, providerIds } = this.dependencies;
    const teamRecord = team === null ? undefined : await this.dependencies.ownership?.team(team);
    for (const [index, target] of route.targets.entries()) {
      const at = `${param}.targets[${index}]`;
      if (target.provider !== undefined && !providerIds().includes(target.provider)) {
        throw invalidRoute(`unknown provider "${target.provider}"; registered: ${providerIds().join(', ')}.`, { param: `${at}.provider` });
      }
      if (target.credential !== undefined) {
        const credential = await service.credentials.get(target.credential);
        // Another team's credential is as if it did not exist.
        if (!credential || !access.mayRead('credentials.read', credential)) {
          throw errors.notFound(`No stored credential with id "${target.credential}".`, { code: 'credential_not_found', param: `${at}.credential` });
        }
        if (!usableBy(team, teamRecord, credential, 'allowed_credentials')) {
          throw errors.permission(`The credential "${target.credential}" is not one this team may use.`, { code: 'permission_denied' });
        }
      }
      if (target.provider !== undefined && teamRecord?.allowed_providers && !teamRecord.allowed_providers.includes(target.provider)) {
        throw errors.permission(`Team ${teamRecord.name} may not use the provider "${target.provider}".`, { code: 'permission_denied' });
      }
      if (target.route !== undefined) await this.checkReferences(target.route, `${at}.route`, team, access);
    }
  }
}


/** Mounts `/admin/routes` and `/admin/models` on the admin router. */
export function mountRouteAdmin(router: Router, dependencies: RouteActionDependencies & { guard: AdminGuard; body: Middleware }): void {
  const { guard, body } = dependencies;
  const actions = new RouteActions(dependencies);
  router.post('/routes', guard.require('routes.write'), body, async (koa) => {
    const created = await actions.create(requestJson(koa), accessOf(koa));
    noteAudit(koa, { target: { type: 'route', id: created.id }, changes: { name: { after: created.name ?? null }, version: { after: created.version } } });
    koa.body = created;
    koa.status = 201;
  });
  router.get('/routes', guard.require('routes.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.list(accessOf(koa)) };
  });
  router.get('/routes/:id', guard.require('routes.read'), async (koa) => {
    koa.body = await actions.get(koa.params.id, accessOf(koa));
  });
  router.get('/routes/:id/versions', guard.require('routes.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.versions(koa.params.id, accessOf(koa)) };
  });
  router.get('/routes/:id/state', guard.require('routes.read'), async (koa) => {
    koa.body = await actions.state(koa.params.id, accessOf(koa));
  });
  router.get('/config-routes', guard.require('routes.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.configRoutes() };
  });
  router.put('/routes/:id', guard.require('routes.write'), body, async (koa) => {
    koa.body = await actions.replace(koa.params.id, requestJson(koa), accessOf(koa));
  });
  router.delete('/routes/:id', guard.require('routes.write'), async (koa) => {
    await actions.delete(koa.params.id, accessOf(koa));
    koa.status = 204;
  });
  router.put('/models/:alias', guard.require('models.write'), body, async (koa) => {
    koa.body = await actions.setAlias(koa.params.alias, requestJson(koa));
  });
  router.get('/models', guard.require('routes.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.listAliases() };
  });
  router.delete('/models/:alias', guard.require('models.write'), async (koa) => {
    await actions.deleteAlias(koa.params.alias);
    koa.status = 204;
  });
}
