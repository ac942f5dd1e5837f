import 'reflect-metadata';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Logger } from 'pino';
import { container as rootContainer } from 'tsyringe';
import { type GatewayConfig, type ResolvedConfig, resolveConfig } from '../config/index.js';
import { AdminAccess, mountAdmin, registerAdmin, virtualKeyAdmin } from './admin/assemble.js';
import type { AdminGuard } from './admin/guard.js';
import { type DeclaredRoute, declaredRoutes } from './admin/declarations.js';
import { type GatewayRoute, gatewayHandler, operationListener } from './api/handler.js';
import { mountProtocols, Protocols, registerProtocols } from './api/protocols/assemble.js';
import { AuditTrail, registerAudit } from './audit/assemble.js';
import { registerCache } from './cache/assemble.js';
import { ResponseCache } from './cache/response-cache.js';
import { registerCluster } from './cluster/assemble.js';
import { type Container, type GatewayOptions, GatewaySettings } from './container.js';
import { mountDashboardOf } from './dashboard/assemble.js';
import { errors, toGatewayError } from './errors.js';
import { PolicyRegistry } from './guardrails/registry.js';
import { registerPipeline } from './hooks/assemble.js';
import { registerHttp } from './http/assemble.js';
import { registerIdentity } from './identity/assemble.js';
import { MemoryBudget } from './http/memory-budget.js';
import { Router } from './http/router.js';
import { closeGatewayServer, createGatewayServer, type UpgradeListener } from './http/server.js';
import { UpstreamClient } from './http/upstream.js';
import { registerLogs, RequestLogging } from './logs/assemble.js';
import type { LogStore } from './logs/store.js';
import { McpGateway, registerMcp } from './mcp/assemble.js';
import { registerMetrics } from './metrics/assemble.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { Pipeline } from './pipeline/runner.js';
import { registerPlugins } from './plugins.js';
import { AccountKey } from './identity/account-key.js';
import { PluginRegistry } from './registry.js';
import { registerRouting, Routing } from './routing/assemble.js';
import type { RouteSource } from './routing/sources.js';
import { registerTelemetry, Telemetry } from './telemetry/assemble.js';
import { mountProbes, Readiness, registerVault } from './vault/assemble.js';
import { registerOrganization } from './org/assemble.js';
import { VaultService } from './vault/service.js';

export type { GatewayOptions, RoutingOptions } from './container.js';
export interface Gateway {
  readonly app: Koa;
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  readonly registry: PluginRegistry;
  readonly pipeline: Pipeline;
  /** The configured guardrail policies (`has(name)` checks a virtual key's `guardrail_policy`). */
  readonly policies: PolicyRegistry;
  /** Guards every admin route; features add credential kinds (dashboard sessions) and key recognisers. */
  readonly adminGuard: AdminGuard;
  /** Every admin route with the permission it declares (the permission matrix is made from these). */
  readonly adminRoutes: readonly DeclaredRoute[];
  /** Credentials, virtual keys and their limits; opened by `listen` (or `vault.start()`). */
  readonly vault: VaultService;
  /** Stored routes and model aliases of the admin API (the vault's state store); usable once the vault started. */
  readonly routes: RouteSource;
  /** The durable request log (SQLite, or PostgreSQL with `DATABASE_URL`). */
  readonly logStore: LogStore;
  /** Resolves once every request logged so far is in the log store (waits through a store outage). */
  flushLogs(): Promise<void>;
  /** Prometheus metrics (`GET /metrics`). */
  readonly metrics: GatewayMetrics;
  /** Bytes held in memory by requests in flight (bodies read, answers read whole), bounded. */
  readonly memoryBudget: MemoryBudget;
  /** The response cache (docs/cache.md): embedded, or shared through Redis with `REDIS_URL`. */
  readonly cache: ResponseCache;
  /** The tamper-evident audit trail (docs/audit.md): SQLite under the data dir, or the log's PostgreSQL. */
  readonly audit: AuditTrail;
  /** Set when the account key was generated on this start: shown once; only its hash is stored, by the first successful `listen`. */
  readonly generatedAccountKey?: string;
  listen(port?: number, host?: string): Promise<{ url: string; server: Server }>;
  /** Stops accepting; requests in flight get up to `graceMs` (default 0) to finish. */
  close(graceMs?: number): Promise<void>;
}

/**
 * The composition root: resolves the configuration, has every subsystem register its parts in a
 * container of this gateway's own (a child of tsyringe's root, so several gateways live in one
 * process), in dependency order, validates every plugin and hook at boot, and builds the Koa app.
 */
export function createGateway(gatewayConfig: GatewayConfig, options: GatewayOptions = {}): Gateway {
  const config = resolveConfig(gatewayConfig, options.environment);
  const container = rootContainer.createChildContainer();
  container.register(GatewaySettings, { useValue: new GatewaySettings(config, options) });
  for (const register of [registerAdmin, registerHttp, registerPlugins, registerCluster, registerVault, registerOrganization, registerIdentity, registerRouting, registerTelemetry, registerMetrics, registerLogs, registerAudit, registerMcp, registerCache, registerProtocols, registerPipeline]) register(container);
  const { logger } = container.resolve(GatewaySettings);
  // Boot checks: the plugins and hooks validate, configured routes name known providers.
  const routing = container.resolve(Routing);
  const vault = container.resolve(VaultService);
  vault.start().catch(() => {}); // its worker (~50-75 ms) boots beside the construction; listen() reports a failure
  const { generated } = container.resolve(AdminAccess);
  const pipeline = container.resolve(Pipeline);
  const logs = container.resolve(RequestLogging).log;
  const cache = container.resolve(ResponseCache);
  const protocols = container.resolve(Protocols);
  const { app, operationRoutes, adminRoutes, upgrade } = buildApp(container);
  const servers: Server[] = [];

  return {
    app,
    config,
    logger,
    registry: container.resolve(PluginRegistry),
    pipeline,
    policies: container.resolve(PolicyRegistry),
    adminGuard: container.resolve(AdminAccess).guard,
    adminRoutes,
    vault,
    routes: vault.routes,
    generatedAccountKey: generated,
    logStore: logs.store,
    metrics: container.resolve(GatewayMetrics),
    memoryBudget: container.resolve(MemoryBudget),
    cache,
    audit: container.resolve(AuditTrail),
    flushLogs: () => logs.queue.flush(),
    async listen(port = config.port, host = config.host) {
      await vault.start();
      await routing.ready();
      // The embedded cache opens on first use; a shared one connects now, so the first request does not wait for it.
      if (config.redisUrl) await cache.start();
      await Promise.all([protocols.start(), container.resolve(McpGateway).start()]);
      // The operations are dispatched before Koa, which serves every other route (and the operations when given app.callback()).
      const listener = operationListener(operationRoutes, app.callback(), (error) => logger.error({ err: error }, 'unexpected error'));
      const server = createGatewayServer(listener, config.server, upgrade);
      server.listen(port, host);
      await once(server, 'listening');
      servers.push(server);
      // A generated account key is stored only now that the gateway serves: a failed start leaves the data dir as it was.
      if (generated && servers.length === 1) AccountKey.store(config.dataDir, generated);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return { url: `http://${shownHost}:${address.port}`, server };
    },
    async close(graceMs = 0) {
      container.resolve(Readiness).drain();
      container.resolve(McpGateway).endpoint.closeStreams();
      await Promise.all(servers.map((server) => closeGatewayServer(server, graceMs)));
      await container.resolve(UpstreamClient).close();
      await Promise.all([protocols.close(), container.resolve(McpGateway).close()]);
      routing.close();
      await vault.close();
      await cache.close();
      await logs.close();
      await container.resolve(AuditTrail).close();
      await container.resolve(Telemetry).exporter?.flush();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    },
  };
}

/** The Koa app: errors as OpenAI-shaped bodies, the unified operations, the subsystems' routes, the pass-through. */
function buildApp(container: Container): { app: Koa; operationRoutes: ReadonlyMap<string, GatewayRoute>; adminRoutes: DeclaredRoute[]; upgrade: UpgradeListener | undefined } {
  const { config, logger } = container.resolve(GatewaySettings);
  const pipeline = container.resolve(Pipeline);
  const protocols = container.resolve(Protocols);
  const app = new Koa();
  app.silent = true;
  app.on('error', (error) => logger.debug({ err: error }, 'connection error'));
  app.use(async (koa, next) => {
    try {
      await next();
    } catch (error) {
      const gatewayError = toGatewayError(error);
      if (gatewayError !== error) logger.error({ err: error }, 'unexpected error');
      koa.status = gatewayError.status;
      koa.set(gatewayError.headers);
      koa.body = gatewayError.toJSON();
    }
  });
  const router = new Router();
  // A person who opens the gateway's address in a browser lands on the dashboard.
  router.get('/', (koa) => koa.redirect('/dashboard'));
  mountProbes(router, container);
  router.get('/openapi.json', async (koa) => void (koa.body = (await import('./openapi.js')).gatewayOpenApi));
  mountAdmin(router, container);
  mountDashboardOf(router, container);
  mountProtocols(router, container);
  const handlerOptions = { bodyLimitBytes: config.bodyLimitBytes, memoryBudget: container.resolve(MemoryBudget), bodyTimeoutMs: config.server.bodyTimeoutMs, trustProxy: config.server.trustProxy };
  const { byRoute: operationRoutes, dispatch, upgrade } = protocols.routes(pipeline, handlerOptions);
  app.use(dispatch);
  const adminRouter = virtualKeyAdmin(container);
  const adminRoutes = declaredRoutes([router, adminRouter]); // every admin route declares its permission, or no start
  app.use(router.routes());
  app.use(adminRouter.routes());
  const passthroughHandler = gatewayHandler(pipeline, protocols.passthrough, handlerOptions);
  app.use(async (koa) => {
    if (!koa.path.startsWith('/v1/')) throw errors.notFound(`No route for ${koa.method} ${koa.path}.`, { code: 'route_not_found' });
    await passthroughHandler(koa);
  });
  return { app, operationRoutes, adminRoutes, upgrade };
}
