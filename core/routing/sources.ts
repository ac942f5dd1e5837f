import type { KeyResolution } from '../spec/key-resolver.js';
import type { ProviderCredentials } from '../spec/provider.js';
import type { Route } from './route.js';

/** A route kept in the state store (`/admin/routes`): every change is a new version. */
export interface StoredRoute {
  /** `route_…`, assigned when created. */
  readonly id: string;
  /** Unique when set; `x-gateway-config` may name a route by id or by name. */
  readonly name?: string;
  /** 1 for the first, one more for each change. */
  readonly version: number;
  readonly route: Route;
  readonly updated_at: string;
  /** The team that owns it (absent: the `default` team; null: the organization, shared). */
  readonly team_id?: string | null;
}

/**
 * Where routes come from besides the configuration file: the stored routes and the model aliases
 * of the admin API (SQLite embedded, Redis shared; a change on one instance is seen by the others
 * within a second). The auth stage asks it; the vault's state store implements it.
 */
export interface RouteSource {
  /** The current version of a stored route, by id or name. */
  route(idOrName: string): Promise<StoredRoute | undefined>;
  /** The route a model alias set through the admin API names, if any. */
  alias(model: string): Promise<Route | undefined>;
  /**
   * What `alias(model)` would give, when this instance has it cached: the route, or undefined when
   * the model is known to be no alias; null when it is not cached (then `alias` must be asked).
   * Lets the auth stage skip the route lookup synchronously for a plain model.
   */
  cachedAlias?(model: string): Route | undefined | null;
}

/**
 * What a route's targets name, opened on demand by the route executor: stored credentials by id
 * and virtual keys by id (`vk_…`, what stored routes hold) or by value (`vk-…`, in a config file or
 * an account key's inline route): their provider, credential, custom host. The vault implements it.
 */
export interface TargetCredentials {
  /** A stored credential (decrypted), or undefined when there is none with that id. */
  credential(id: string): Promise<ProviderCredentials | undefined>;
  /** A virtual key's binding by id or value, or undefined when the key is unknown (an expired key throws 401). */
  virtualKey(reference: string): Promise<KeyResolution | undefined>;
}
