import { createHash } from 'node:crypto';
import { BootError, errors } from '../errors.js';
import type { AuthSlice } from '../pipeline/context.js';
import { mayTakeRoute, type RouteAccess } from './access.js';
import type { AttemptRecord, ResolvedRoute, ResolvedTarget, RouteLabel } from './plan.js';
import { parseRoute, type Route, type Target } from './route.js';
import type { RouteSource } from './sources.js';

/** The routes a request may name besides the stored ones: the config's `routes` and `models`, validated at boot. */
export interface RouteCatalog {
  readonly routes: ReadonlyMap<string, Route>;
  readonly models: ReadonlyMap<string, Route>;
  /** Stored routes and admin aliases (the state store); absent: only the config's. */
  readonly source?: RouteSource;
}

/** What the auth stage knows when it looks for a route: the header, the model, and what the caller may take. */
export interface RouteQuery extends RouteAccess {
  /** `x-gateway-config`. */
  readonly header?: string;
  /** The virtual key's `route`. */
  readonly keyRoute?: string;
  readonly model?: string;
  /** Whether the caller holds the account key (only it may send an inline route, or name any route). */
  readonly account: boolean;
}

export interface FoundRoute {
  readonly route: Route;
  readonly label: RouteLabel;
}

/**
 * Finds the request's route, in this order: `x-gateway-config` (a config route by name, a stored
 * route by id or name, or inline JSON from the account key: 403 `inline_route_forbidden` for a
 * virtual key), the virtual key's route, a model alias (the config's, then the admin API's).
 * Undefined when none applies; 400 `unknown_route` for a name or id nothing holds. A virtual key
 * naming a route in `x-gateway-config` may take only what `mayTakeRoute` allows (its own route and
 * its `allowed_routes`): anything else, an unknown name included, is 403 `route_not_allowed`.
 */
export async function findRoute(catalog: RouteCatalog, query: RouteQuery): Promise<FoundRoute | undefined> {
  const header = query.header?.trim();
  if (header) {
    if (header.startsWith('{')) {
      if (!query.account) {
        throw errors.permission('Inline routes in x-gateway-config are for the account key; name a stored route instead.', { param: 'x-gateway-config', code: 'inline_route_forbidden' });
      }
      return { route: inlineRoute(header), label: { source: 'inline' } };
    }
    const found = await named(catalog, header, 'header');
    if (found === undefined) {
      // A virtual key gets the answer it gets for a route it may not take: it cannot probe which routes exist.
      if (!query.account) throw routeNotAllowed(header);
      return unknownRoute(header, 'x-gateway-config');
    }
    if (!mayTakeRoute(query, identityOf(found.label))) throw routeNotAllowed(header);
    return found;
  }
  if (query.keyRoute !== undefined) return (await named(catalog, query.keyRoute, 'key')) ?? unknownRoute(query.keyRoute, 'x-gateway-api-key');
  if (query.model !== undefined) {
    const alias = catalog.models.get(query.model);
    if (alias !== undefined) return { route: alias, label: { name: query.model, source: 'alias' } };
    const stored = await catalog.source?.alias(query.model);
    if (stored !== undefined) return { route: stored, label: { name: query.model, source: 'alias' } };
  }
  return undefined;
}

/** Inline routes already parsed, by their header text: a client sends the same few on every request. */
const inlineRoutes = new Map<string, Route>();
/** At most this many are kept (the oldest is dropped first); a refused route is never kept. */
const INLINE_ROUTES_KEPT = 256;

/**
 * An inline route (`x-gateway-config` JSON), parsed and checked once per distinct header text
 * (issue 21: parsing it on every request was ~3 µs and ~3 KB). Routes are immutable, so the
 * requests that send the same text share one.
 */
function inlineRoute(header: string): Route {
  const known = inlineRoutes.get(header);
  if (known !== undefined) return known;
  let value: unknown;
  try {
    value = JSON.parse(header);
  } catch {
    throw errors.invalidRequest('x-gateway-config is neither a route name nor valid JSON.', { param: 'x-gateway-config', code: 'invalid_route' });
  }
  const route = parseRoute(value, 'config');
  if (inlineRoutes.size >= INLINE_ROUTES_KEPT) inlineRoutes.delete(inlineRoutes.keys().next().value!);
  inlineRoutes.set(header, route);
  return route;
}

async function named(catalog: RouteCatalog, idOrName: string, source: 'header' | 'key'): Promise<FoundRoute | undefined> {
  const configured = catalog.routes.get(idOrName);
  if (configured !== undefined) return { route: configured, label: { name: idOrName, source } };
  const stored = await catalog.source?.route(idOrName);
  if (stored === undefined) return undefined;
  return { route: stored.route, label: { id: stored.id, ...(stored.name !== undefined ? { name: stored.name } : {}), version: stored.version, source } };
}

/** A named route's identity for {@link mayTakeRoute}: stored routes carry their id, config routes only a name. */
const identityOf = (label: RouteLabel) => (label.id !== undefined ? { kind: 'stored' as const, id: label.id, name: label.name } : { kind: 'config' as const, name: label.name });

const routeNotAllowed = (idOrName: string) =>
  errors.routeNotAllowed(
    `This virtual key may not take the route "${idOrName.slice(0, 100)}": a key takes its own route, the routes an admin granted it (allowed_routes) and model aliases.`,
  );

function unknownRoute(idOrName: string, param: string): never {
  throw errors.invalidRequest(`No route is named "${idOrName.slice(0, 100)}".`, { param, code: 'unknown_route' });
}

/** Opens one target (provider, credential or virtual key, base URL) or throws 400 with `param` naming the field. */
export type TargetOpener = (target: Target, param: string) => Promise<AuthSlice>;

/**
 * Opens every target of a route (nested routes included) before anything goes upstream, so that a
 * route naming an unknown provider, credential or key is refused with 400.
 */
export async function resolvePlan(route: Route, label: RouteLabel, open: TargetOpener): Promise<ResolvedRoute> {
  return resolveLevel(route, 'config', stateScope(label), open);
}

/**
 * The scope of a named route's breaker and balancer keys: a stored route's id (taken by
 * `x-gateway-config` or a virtual key), `model:<alias>` for a model alias, `route:<name>` for a
 * config route. Undefined for an inline route (its targets are keyed by what they are).
 */
export function stateScope(label: Pick<RouteLabel, 'id' | 'name' | 'source'>): string | undefined {
  return label.id ?? (label.name !== undefined ? `${label.source === 'alias' ? 'model' : 'route'}:${label.name}` : undefined);
}

/** A named route's target's state key: its scope and its path in the route (`route_…/targets[0].route.targets[1]`). */
export const targetStateKey = (scope: string, path: string): string => `${scope}/${path}`;

/** Every target of a route, nested ones after their parent, with its path (`targets[0]`, `targets[0].route.targets[1]`). */
export function targetPaths(route: Route, prefix = ''): Array<{ path: string; target: Target; name: string }> {
  return route.targets.flatMap((target, index) => {
    const path = `${prefix}targets[${index}]`;
    const own = { path, target, name: target.name ?? target.provider ?? `targets[${index}]` };
    return target.route ? [own, ...targetPaths(target.route, `${path}.route.`)] : [own];
  });
}

async function resolveLevel(route: Route, param: string, scope: string | undefined, open: TargetOpener): Promise<ResolvedRoute> {
  const targets = await Promise.all(
    route.targets.map(async (target, index): Promise<ResolvedTarget> => {
      const at = `${param}.targets[${index}]`;
      const name = target.name ?? target.provider ?? `targets[${index}]`;
      // Inline routes share breakers by what the target is; named routes keep theirs per route.
      const key = scope !== undefined ? targetStateKey(scope, at.slice('config.'.length)) : inlineKey(name, target);
      const base = { name, key, weight: target.weight ?? 1, target };
      if (target.route) return { ...base, route: await resolveLevel(target.route, `${at}.route`, scope === undefined ? undefined : scope, open) };
      return { ...base, auth: await open(target, at) };
    }),
  );
  return { route, targets };
}

/** Inline targets' state keys, per (immutable, cached) target: the digest is made once. */
const inlineKeys = new WeakMap<Target, string>();

/** An inline target's state key: its name and a digest of what it is (never the key or credential id in clear: the key labels metrics). */
function inlineKey(name: string, target: Target): string {
  let key = inlineKeys.get(target);
  if (key === undefined) {
    const identity = [target.provider, target.virtual_key, target.credential, target.custom_host].join('\n');
    key = `inline:${name}:${createHash('sha256').update(identity).digest('hex').slice(0, 8)}`;
    inlineKeys.set(target, key);
  }
  return key;
}

/** The `x-gateway-attempts` and `x-gateway-route-target` response headers of a routed request. */
export function routeHeaders(attempts: readonly AttemptRecord[], target: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'x-gateway-attempts': String(attempts.length) };
  if (target !== undefined) headers['x-gateway-route-target'] = target;
  return headers;
}

/** Checks at boot that the config's routes and aliases name registered providers only (a BootError names the route and field). */
export function checkRouteProviders(routes: ReadonlyMap<string, Route>, field: 'routes' | 'models', known: (id: string) => boolean): void {
  const visit = (route: Route, param: string): void =>
    route.targets.forEach((target, index) => {
      const at = `${param}.targets[${index}]`;
      if (target.provider !== undefined && !known(target.provider)) throw new BootError('INVALID_CONFIG', `${at}.provider names "${target.provider}", which is not a registered provider`);
      if (target.route) visit(target.route, `${at}.route`);
    });
  for (const [name, route] of routes) visit(route, `${field}.${name}`);
}
