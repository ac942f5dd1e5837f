import { randomUUID } from 'node:crypto';
import type { SharedState } from '../store/state.js';
import type { Route, Target } from './route.js';
import type { RouteSource, StoredRoute } from './sources.js';

const ROUTES = 'routes';
const ALIASES = 'model-aliases';
const currentKey = (id: string) => `route:${id}`;
const versionKey = (id: string, version: number) => `routever:${id}:${version}`;
const byNameKey = (name: string) => `routename:${name}`;
const nameClaim = (name: string) => `routename:${name}`;
const versionClaim = (id: string, version: number) => `routever:${id}:${version}`;
const aliasKey = (alias: string) => `alias:${alias}`;

/** How long a route read is trusted without an invalidation event (a guard against a lost one). */
const CACHE_TTL_MS = 30_000;

/** A model alias set through the admin API: an inline route, or a stored route by id. */
export interface ModelAlias {
  readonly alias: string;
  readonly route?: Route;
  readonly route_id?: string;
  readonly updated_at: string;
}

/** Every target of a route, nested routes' included, and its cache's embeddings target (which names a credential or a key the same way). */
export function allTargets(route: Route): Target[] {
  const embedding = route.cache?.embedding;
  const targets = route.targets.flatMap((target): Target[] => [target, ...(target.route ? allTargets(target.route) : [])]);
  if (embedding === undefined) return targets;
  const { model: _model, ...target } = embedding;
  return [...targets, target];
}

/** How a {@link RouteStore} rewrites what it reads. */
export interface RouteStoreOptions {
  /**
   * A stored route's targets in today's form, or undefined when it is already: routes stored
   * before virtual keys were referenced by id hold a key's value, which the vault turns into the
   * key's id. A rewritten route is written back in place (every version of it, as it is read), so
   * the value leaves the store; the meaning of the route is unchanged, so no version is added.
   */
  readonly migrate?: (route: Route) => Promise<Route | undefined>;
}

export class DuplicateRouteNameError extends Error {
  override readonly name = 'DuplicateRouteNameError';
}

/**
 * Stored routes and model aliases in the shared state (SQLite embedded, Redis shared). Every change
 * of a route is kept as a new version; reads are cached per instance and every instance's cache is
 * emptied by the state's invalidation events (Redis pub/sub across instances).
 */
export class RouteStore implements RouteSource {
  private readonly routes = new Map<string, { value: StoredRoute | undefined; until: number }>();
  private readonly aliases = new Map<string, { value: Route | undefined; until: number }>();
  /** Bumped by every invalidation, so a read that raced one does not cache what it read before it. */
  private generation = 0;

  constructor(
    private readonly state: SharedState,
    private readonly options: RouteStoreOptions = {},
  ) {
    state.subscribe((event) => {
      if (event.kind === 'route') {
        // A route is cached under its id and its name, and an alias may name it: drop them all.
        this.generation += 1;
        this.routes.clear();
        this.aliases.clear();
      } else if (event.kind === 'model-alias') {
        this.generation += 1;
        this.aliases.delete(event.id);
      }
    });
  }

  /** Stores a new route as version 1; throws DuplicateRouteNameError when the name is taken. */
  async create(route: Route, name?: string, team?: string | null): Promise<StoredRoute> {
    const id = `route_${randomUUID().replaceAll('-', '')}`;
    if (name !== undefined && !(await this.state.claim(nameClaim(name), id))) throw new DuplicateRouteNameError(`A route named "${name}" exists.`);
    await this.state.claim(versionClaim(id, 1), id);
    const stored: StoredRoute = { id, ...(name !== undefined ? { name } : {}), version: 1, route, updated_at: new Date().toISOString(), ...(team !== undefined ? { team_id: team } : {}) };
    await this.write(stored);
    if (name !== undefined) await this.state.records.set(byNameKey(name), id);
    await this.state.addToSet(ROUTES, id);
    await this.state.publish({ kind: 'route', id });
    return stored;
  }

  /**
   * The current version by id (uncached): the highest one written. Concurrent replacements may
   * write the current record out of order, so the versions after it are looked for as well.
   */
  async get(id: string): Promise<StoredRoute | undefined> {
    let current = (await this.state.records.get<StoredRoute>(currentKey(id))) ?? undefined;
    let readFrom = currentKey(id);
    while (current !== undefined) {
      const next = await this.state.records.get<StoredRoute>(versionKey(id, current.version + 1));
      if (!next) break;
      current = next;
      readFrom = versionKey(id, next.version);
    }
    if (current === undefined) return undefined;
    // The current record and its version record are the same version: a rewrite goes to both.
    return this.migrated(current, readFrom, [currentKey(id), versionKey(id, current.version)]);
  }

  /** Every stored route's current version, oldest first. */
  async list(): Promise<StoredRoute[]> {
    const routes = await Promise.all((await this.state.members(ROUTES)).map((id) => this.get(id)));
    return routes.filter((route): route is StoredRoute => route !== undefined).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Every version of a route, oldest first (empty when there is no such route). */
  async versions(id: string): Promise<StoredRoute[]> {
    const current = await this.get(id);
    if (!current) return [];
    const all = await Promise.all(Array.from({ length: current.version }, (_, index) => this.state.records.get<StoredRoute>(versionKey(id, index + 1))));
    const found = all.filter((version): version is StoredRoute => version !== undefined && version !== null);
    return Promise.all(found.map((version) => (version.version === current.version ? current : this.migrated(version, versionKey(id, version.version), [versionKey(id, version.version)]))));
  }

  /**
   * Replaces a route (and its name when `name` is given; null removes it): a new version, the old
   * ones kept. Two concurrent replacements never get the same version number (each claims it).
   */
  async replace(id: string, route: Route, name?: string | null): Promise<StoredRoute | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.get(id);
      if (!current) return undefined;
      const nextName = name === undefined ? current.name : (name ?? undefined);
      if (nextName !== current.name) await this.rename(id, current.name, nextName);
      const version = current.version + 1;
      if (!(await this.state.claim(versionClaim(id, version), `${id}:${randomUUID()}`))) continue;
      const stored: StoredRoute = {
        id,
        ...(nextName !== undefined ? { name: nextName } : {}),
        version,
        route,
        updated_at: new Date().toISOString(),
        ...(current.team_id !== undefined ? { team_id: current.team_id } : {}),
      };
      await this.write(stored);
      await this.state.publish({ kind: 'route', id });
      return stored;
    }
    throw new Error(`route ${id}: too many concurrent changes`);
  }

  /** Deletes a route and every version of it; returns the last version, or undefined. */
  async delete(id: string): Promise<StoredRoute | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    await this.state.records.delete(currentKey(id));
    for (let version = 1; version <= current.version; version++) await this.state.records.delete(versionKey(id, version));
    await this.state.removeFromSet(ROUTES, id);
    if (current.name !== undefined) await this.rename(id, current.name, undefined);
    await this.state.publish({ kind: 'route', id });
    return current;
  }

  /** The current version of a stored route, by id or name, cached on this instance. */
  async route(idOrName: string): Promise<StoredRoute | undefined> {
    const now = Date.now();
    const cached = this.routes.get(idOrName);
    if (cached && cached.until > now) return cached.value;
    const generation = this.generation;
    // Names never start with `route_` (the admin API refuses them), so the value is one or the other.
    const id = idOrName.startsWith('route_') ? idOrName : ((await this.state.records.get<string>(byNameKey(idOrName))) ?? undefined);
    const value = id === undefined ? undefined : await this.get(id);
    if (generation === this.generation) {
      if (this.routes.size >= 10_000) this.routes.clear();
      this.routes.set(idOrName, { value, until: now + CACHE_TTL_MS });
    }
    return value;
  }

  /** Sets a model alias to an inline route or a stored route id. */
  async setAlias(alias: string, target: { route: Route } | { route_id: string }): Promise<ModelAlias> {
    const record: ModelAlias = { alias, ...target, updated_at: new Date().toISOString() };
    await this.state.records.set(aliasKey(alias), record);
    await this.state.addToSet(ALIASES, alias);
    await this.state.publish({ kind: 'model-alias', id: alias });
    return record;
  }

  async getAlias(alias: string): Promise<ModelAlias | undefined> {
    const record = (await this.state.records.get<ModelAlias>(aliasKey(alias))) ?? undefined;
    const migrated = record?.route === undefined ? undefined : await this.options.migrate?.(record.route);
    if (record === undefined || migrated === undefined) return record;
    const rewritten: ModelAlias = { ...record, route: migrated };
    const still = await this.state.records.get<ModelAlias>(aliasKey(alias));
    if (still && JSON.stringify(still) === JSON.stringify(record)) await this.state.records.set(aliasKey(alias), rewritten);
    return rewritten;
  }

  async listAliases(): Promise<ModelAlias[]> {
    const all = await Promise.all((await this.state.members(ALIASES)).map((alias) => this.getAlias(alias)));
    return all.filter((alias): alias is ModelAlias => alias !== undefined);
  }

  /** Deletes an alias; false when there was none. */
  async deleteAlias(alias: string): Promise<boolean> {
    const existed = await this.state.records.delete(aliasKey(alias));
    await this.state.removeFromSet(ALIASES, alias);
    await this.state.publish({ kind: 'model-alias', id: alias });
    return existed;
  }

  cachedAlias(model: string): Route | undefined | null {
    const cached = this.aliases.get(model);
    return cached !== undefined && cached.until > Date.now() ? cached.value : null;
  }

  /** The route a model alias names (a stored route's current version), cached on this instance. */
  async alias(model: string): Promise<Route | undefined> {
    const now = Date.now();
    const cached = this.aliases.get(model);
    if (cached && cached.until > now) return cached.value;
    const generation = this.generation;
    const record = await this.getAlias(model);
    const value = record?.route ?? (record?.route_id !== undefined ? (await this.route(record.route_id))?.route : undefined);
    if (generation === this.generation) {
      if (this.aliases.size >= 10_000) this.aliases.clear();
      this.aliases.set(model, { value, until: now + CACHE_TTL_MS });
    }
    return value;
  }

  /** Names of the stored routes (id when unnamed) and model aliases with a target matching `test`. */
  async users(test: (target: Target) => boolean): Promise<string[]> {
    const routes = (await this.list()).filter((stored) => allTargets(stored.route).some(test)).map((stored) => `route ${stored.name ?? stored.id}`);
    const aliases = (await this.listAliases()).filter((alias) => alias.route !== undefined && allTargets(alias.route).some(test)).map((alias) => `model alias ${alias.alias}`);
    return [...routes, ...aliases];
  }

  /**
   * A version read from the store (under `readFrom`), rewritten when {@link RouteStoreOptions.migrate}
   * changes it: under each of `writeTo`, in place.
   */
  private async migrated(stored: StoredRoute, readFrom: string, writeTo: readonly string[]): Promise<StoredRoute> {
    const route = await this.options.migrate?.(stored.route);
    if (route === undefined) return stored;
    const rewritten: StoredRoute = { ...stored, route };
    // Written back only while the record is still there as it was read, so a route deleted
    // meanwhile is not brought back (the store has no compare-and-set; the window is one read).
    const still = await this.state.records.get<StoredRoute>(readFrom);
    if (still && JSON.stringify(still) === JSON.stringify(stored)) {
      for (const key of writeTo) await this.state.records.set(key, rewritten);
    }
    return rewritten;
  }

  private async write(stored: StoredRoute): Promise<void> {
    await this.state.records.set(versionKey(stored.id, stored.version), stored);
    await this.state.records.set(currentKey(stored.id), stored);
  }

  private async rename(id: string, from: string | undefined, to: string | undefined): Promise<void> {
    if (to !== undefined) {
      if (!(await this.state.claim(nameClaim(to), id))) throw new DuplicateRouteNameError(`A route named "${to}" exists.`);
      await this.state.records.set(byNameKey(to), id);
    }
    if (from !== undefined) {
      await this.state.records.delete(byNameKey(from));
      await this.state.release(nameClaim(from), id);
    }
  }
}
