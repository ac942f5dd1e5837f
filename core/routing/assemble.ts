import type { Logger } from 'pino';
import { type Container, GatewaySettings, provide } from '../container.js';
import { CustomHostGuard } from '../http/custom-host.js';
import { UpstreamClient } from '../http/upstream.js';
import { PluginRegistry } from '../registry.js';
import { VaultService } from '../vault/service.js';
import type { ExecutorDependencies } from './executor.js';
import { HealthChecker, type ProbedRoute } from './health.js';
import { createProbeSender } from './probe.js';
import { checkRouteProviders, type RouteCatalog, stateScope } from './resolve.js';
import type { Route } from './route.js';
import { targetOpener } from './targets.js';
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
    /** The routes' active health checks (started by {@link ready}). */
    readonly health: HealthChecker,
    /** Run once, by the first {@link ready}: warns of stored routes whose patterns never match. */
    private readonly onFirstReady: () => void = () => {},
  ) {}

  private started = false;

  /** Resolves once the breakers are shared; the first call (the gateway's first `listen`) starts the health checks. */
  async ready(): Promise<void> {
    await this.shared;
    if (this.started) return;
    this.started = true;
    this.health.start();
    this.onFirstReady();
  }

  close(): void {
    this.health.stop();
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
    const targetCredentials = options.routing?.targetCredentials ?? vault.targets;
    // Probes open their targets as a request with no headers of its own would: stored credentials and virtual keys only.
    const open = targetOpener({ registry, customHosts: c.resolve(CustomHostGuard), targetCredentials, isGatewayKey: () => false });
    const probeContext = { incoming: { headers: {} }, strict: false } as unknown as Parameters<typeof open>[0];
    const health = new HealthChecker({
      state,
      send: createProbeSender({ open: (target) => open(probeContext, { caller: { type: 'account' } } as Parameters<typeof open>[1], target, 'health_check'), upstream: c.resolve(UpstreamClient) }),
      routes: () => probedRoutes(config.routes, config.models, vault),
      sharing: () => (state instanceof SharedRoutingState ? state.probeSharing() : undefined),
      now: () => clock.now(),
      logger: c.resolve(GatewaySettings).logger,
    });
    return new Routing(
      { routes: config.routes, models: config.models, source: options.routing?.source ?? vault.routes },
      targetCredentials,
      { state, retry: config.routing.retry, ...(random ? { random } : {}), ...(sleep ? { sleep } : {}) },
      shared,
      health,
      () => void warnUnmatchablePatterns(vault.parts.routes, c.resolve(GatewaySettings).logger).catch(() => {}),
    );
  });
}

/** Every route under the scope of its breakers: the config's routes and aliases, the stored routes and aliases (an alias keeps breakers of its own). */
async function probedRoutes(routes: ReadonlyMap<string, Route>, models: ReadonlyMap<string, Route>, vault: VaultService): Promise<ProbedRoute[]> {
  const found: ProbedRoute[] = [];
  for (const [name, route] of routes) found.push({ scope: stateScope({ name, source: 'header' })!, route });
  for (const [name, route] of models) found.push({ scope: stateScope({ name, source: 'alias' })!, route });
  if (!vault.isStarted) return found;
  const stored = await vault.parts.routes.list();
  const byId = new Map(stored.map((entry) => [entry.id, entry.route]));
  for (const entry of stored) found.push({ scope: entry.id, route: entry.route });
  for (const alias of await vault.parts.routes.listAliases()) {
    const route = alias.route ?? (alias.route_id !== undefined ? byId.get(alias.route_id) : undefined);
    if (route !== undefined) found.push({ scope: stateScope({ name: alias.alias, source: 'alias' })!, route });
  }
  return found;
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
