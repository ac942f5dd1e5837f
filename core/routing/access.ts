/**
 * Which named routes a caller may take through `x-gateway-config`: the one place that decides it,
 * so that what extends access later (teams owning routes) changes this function and nothing else.
 *
 * - The account key takes every route.
 * - A virtual key takes its own route (`route` on the key), the routes an admin granted it
 *   (`allowed_routes` on the key: stored routes by id, config routes by name), and model aliases
 *   (an alias is chosen by `model`, which `allowed_models` already limits; it never reaches here).
 *
 * Anything else is 403 `route_not_allowed` (see `findRoute`).
 */

/** What the caller holds, as far as routes go. */
export interface RouteAccess {
  /** The account key (takes every route). */
  readonly account: boolean;
  /** The virtual key's own route: a stored route's id (or name), or a config route's name. */
  readonly keyRoute?: string;
  /** Routes granted to the key (`allowed_routes`): stored routes by id, config routes by name. */
  readonly allowedRoutes?: readonly string[];
}

/** The route asked for: a config route (by name), or a stored route (by id, with its current name). */
export interface RouteIdentity {
  readonly kind: 'config' | 'stored';
  /** A stored route's id (`route_…`). */
  readonly id?: string;
  /** A config route's name, or a stored route's current name. */
  readonly name?: string;
}

/**
 * Whether the caller may take the route. A grant names a stored route by id only (renaming a
 * route never moves a grant to another one) and a config route by name. The key's own route
 * matches by id or name, as the key's `route` resolves either way.
 */
export function mayTakeRoute(access: RouteAccess, route: RouteIdentity): boolean {
  if (access.account) return true;
  const own = access.keyRoute;
  if (own !== undefined && (route.kind === 'stored' ? own === route.id || own === route.name : own === route.name)) return true;
  const granted = access.allowedRoutes;
  if (granted === undefined || granted.length === 0) return false;
  const reference = route.kind === 'stored' ? route.id : route.name;
  return reference !== undefined && granted.includes(reference);
}
