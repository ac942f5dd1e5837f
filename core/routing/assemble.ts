import type { Logger } from 'pino';
import { type Container, GatewaySettings, provide } from '../container.js';
import { PluginRegistry } from '../registry.js';
import { VaultService } from '../vault/service.js';
import type { ExecutorDependencies } from './executor.js';
import { checkRouteProviders, type RouteCatalog } from './resolve.js';
import { refusedPatterns } from './safe-regex.js';
import type { TargetCredentials } from './sources.js';
import { MemoryRoutingState, type RoutingStateStore } from './state.js';
import { SharedRoutingState } from './state-redis.js';
import type { RouteStore } from './store.js';

/** What routing hands the gateway: the routes the auth stage looks up, the executor's dependencies, the breakers' state. */
export class Routing {
  constructor(
    /** The config's routes and model aliases, and the stored ones (the vault's state store unless a test supplies its own). */
    readonly catalog: RouteCatalog,
    /** Opens the stored credentials and virtual keys that targets name. */
    readonly targetCredentials: TargetCredentials,
    /** What the forward stage's route executor is given. */
    readonly executor: Partial<ExecutorDependencies> & { readonly state: RoutingStateStore },
    /** Resolves once the breakers are shared through the vault's Redis state (at once when they are not shared). */
    readonly shared: Promise<void>,
  ) {}

  close(): void {
    if (this.executor.state instanceof SharedRoutingState) this.executor.state.close();
  }
}

/** Registers routing; its factory refuses (at boot) a configured route that names an unknown provider. */
export function registerRouting(container: Container): void {
  provide(container, Routing, (c) => {
    const { config, options, clock } = c.resolve(GatewaySettings);
    const registry = c.resolve(PluginRegistry);
    const known = (id: string): boolean => registry.provider(id) !== undefined;
    checkRouteProviders(config.routes, 'routes', known);
    checkRouteProviders(config.models, 'models', known);
    const vault = c.resolve(VaultService);
    // With REDIS_URL, breakers are shared through the vault's Redis state once it is open.
    const state =
      options.routing?.state ??
      (config.redisUrl
        ? new SharedRoutingState(config.routing.breaker, () => clock.now(), config.routing.retry)
        : new MemoryRoutingState(config.routing.breaker, () => clock.now(), undefined, config.routing.retry));
    const shared = state instanceof SharedRoutingState ? vault.start().then(() => state.attach(vault.parts.state)) : Promise.resolve();
    shared.catch(() => {});
    const { random, sleep } = options.routing ?? {};
    return new Routing(
      { routes: config.routes, models: config.models, source: options.routing?.source ?? vault.routes },
      options.routing?.targetCredentials ?? vault.targets,
      { state, retry: config.routing.retry, ...(random ? { random } : {}), ...(sleep ? { sleep } : {}) },
      shared,
    );
  });
}

/**
 * Warns of stored routes and model aliases whose `$regex` RE2 refuses (stored before patterns were
 * checked): such a condition never matches until the route is saved again (docs/routing.md).
 */
export async function warnUnmatchablePatterns(routes: RouteStore, logger: Logger): Promise<void> {
  const stored = [
    ...(await routes.list()).map((route) => ({ where: `route ${route.id}${route.name ? ` (${route.name})` : ''}`, route: route.route })),
    ...(await routes.listAliases()).filter((alias) => alias.route !== undefined).map((alias) => ({ where: `model alias ${alias.alias}`, route: alias.route })),
  ];
  for (const { where, route } of stored) {
    for (const { param, problem } of refusedPatterns(route)) {
      logger.warn({ param, problem }, `${where}: its ${param} is not a pattern the gateway can match in linear time (RE2); that condition never matches until the route is saved again`);
    }
  }
}
