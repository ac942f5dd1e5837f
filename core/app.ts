import 'reflect-metadata';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Router } from './http/router.js';
import Koa from 'koa';
import { pino, type DestinationStream, type Logger } from 'pino';
import { type DependencyContainer, container as rootContainer, instanceCachingFactory } from 'tsyringe';
import { type GatewayConfig, type ResolvedConfig, resolveConfig } from '../config/index.js';
import { AccountKey } from './account-key.js';
import { AdminGuard } from './admin/guard.js';
import { virtualKeyAdminRouter } from './admin/virtual-keys.js';
import { mountLogsApi } from './admin/logs.js';
import { mountPricesApi } from './admin/prices.js';
import { chatCompletions } from './api/chat-completions.js';
import { completions } from './api/completions.js';
import { embeddings } from './api/embeddings.js';
import { type GatewayRoute, gatewayHandler, gatewayRoute, operationListener } from './api/handler.js';
import { audioTranscriptions, audioTranslations, imageEdits, imageVariations } from './api/multipart-operations.js';
import { imagesGenerate } from './api/images-generate.js';
import { models } from './api/models.js';
import { messages, messagesCountTokens } from './api/protocols/messages/handler.js';
import type { OperationHandler } from './api/operation.js';
import { createPassthrough } from './api/passthrough.js';
import { createResponsesProtocol } from './api/protocols/responses/responses-operation.js';
import { mountResponsesRoutes } from './api/protocols/responses/responses-routes.js';
import type { ResponseStore } from './api/protocols/responses/responses-store.js';
import { createResponseStore } from './api/protocols/responses/responses-store-factory.js';
import { mountDashboard } from './dashboard/index.js';
import { speech } from './api/speech.js';
import { errors, toGatewayError } from './errors.js';
import { FailedAuthLimiter } from './failed-auth.js';
import { lazyControlPlaneHttp } from './http/control-plane.js';
import { workerId } from './cluster/worker.js';
import { authHook, callerIdentifier, targetOpener } from './hooks/auth.js';
import { mountCacheAdmin } from './cache/admin.js';
import { createEmbedder } from './cache/embedder.js';
import { cacheHook } from './cache/hook.js';
import { ResponseCache } from './cache/response-cache.js';
import { openCacheStore } from './cache/store.js';
import { costOf, tokenCounts } from './vault/pricing.js';
import { forwardHook } from './hooks/forward.js';
import { PolicyRegistry } from './guardrails/registry.js';
import type { GuardrailFactory, GuardrailManifest, GuardrailRegistration } from './spec/guardrail.js';
import { guardrailHook } from './hooks/guardrail.js';
import { logHook } from './hooks/log.js';
import { transformHook } from './hooks/transform.js';
import { CustomHostGuard } from './http/custom-host.js';
import { MemoryBudget } from './http/memory-budget.js';
import { canonicalPath, rawPathOf } from './http/request-path.js';
import { createGatewayServer } from './http/server.js';
import { UpstreamClient } from './http/upstream.js';
import { bodyCaptureHook } from './logs/capture.js';
import type { LogSink } from './logs/entry.js';
import { createRequestLog, type RequestLog } from './logs/index.js';
import { type HeldLines, loggerWithHeldLines, PinoLogSink } from './logs/pino-sink.js';
import type { LogStore } from './logs/store.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { MemoryRoutingState, type RoutingStateStore } from './routing/state.js';
import { SharedRoutingState } from './routing/state-redis.js';
import { refusedPatterns } from './routing/safe-regex.js';
import type { RouteStore } from './routing/store.js';
import { mountPolicyAdmin } from './admin/policies.js';
import { checkRouteProviders } from './routing/resolve.js';
import type { RouteSource, TargetCredentials } from './routing/sources.js';
import { Pipeline } from './pipeline/runner.js';
import { PluginRegistry } from './registry.js';
import type { Clock, ControlPlaneHttp, PluginDependencies, PluginManifest } from './spec/manifest.js';
import { OtlpExporter } from './telemetry/otlp-exporter.js';
import { Tracer } from './telemetry/tracer.js';
import { VaultService } from './vault/service.js';

/** Options for building a gateway beyond its configuration (used by tests, the bench and main). */
export interface GatewayOptions {
  /** Where pino writes (default: stdout, asynchronously). */
  logDestination?: DestinationStream;
  /** Environment to resolve the configuration against (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /** Extra log sinks. */
  sinks?: LogSink[];
  /** The clock the gateway and its plugins read (default: the system's). */
  clock?: Clock;
  /** Routing: where stored routes and the targets' credentials come from, and (tests) the randomness, waits and state. */
  routing?: RoutingOptions;
}

/** What the route executor and the auth stage's route lookup are given besides the configuration. */
export interface RoutingOptions {
  /** Stored routes and admin aliases; absent: only the config's `routes` and `models`. */
  readonly source?: RouteSource;
  /** Opens stored credentials and virtual keys that targets name; absent: such targets are refused (400). */
  readonly targetCredentials?: TargetCredentials;
  /** Breakers and balancer statistics (default: in memory, per instance, on the gateway's clock). */
  readonly state?: RoutingStateStore;
  /** Numbers in [0, 1) for weighted picks and jitter (default `Math.random`). */
  readonly random?: () => number;
  /** Waits between attempts (default a timer cancelled when the client leaves). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

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
  /** Set when the account key was generated on this start: shown once; only its hash is stored, by the first successful `listen`. */
  readonly generatedAccountKey?: string;
  listen(port?: number, host?: string): Promise<{ url: string; server: Server }>;
  /** Stops accepting; requests in flight get up to `graceMs` (default 0) to finish. */
  close(graceMs?: number): Promise<void>;
}

/** Reported in traces (`service.version`). */
const GATEWAY_VERSION = '0.1.0';

/**
 * What the container holds, one token per service (the resolved configuration is not one: every
 * factory reads it). Every token is registered once, in `registerServices`, and resolved where it
 * is needed: by the factories of the services that depend on it, or by `createGateway` for what the
 * app and `close()` use.
 */
const TOKENS = {
  logger: Symbol('logger'),
  logLines: Symbol('logLines'),
  clock: Symbol('clock'),
  controlPlaneHttp: Symbol('controlPlaneHttp'),
  pluginDependencies: Symbol('pluginDependencies'),
  accountKey: Symbol('accountKey'),
  generatedAccountKey: Symbol('generatedAccountKey'),
  memoryBudget: Symbol('memoryBudget'),
  failedAuth: Symbol('failedAuth'),
  vault: Symbol('vault'),
  metrics: Symbol('metrics'),
  routingState: Symbol('routingState'),
  requestLog: Symbol('requestLog'),
  traceExporter: Symbol('traceExporter'),
  tracer: Symbol('tracer'),
  customHosts: Symbol('customHosts'),
  upstream: Symbol('upstream'),
  policies: Symbol('policies'),
  registry: Symbol('registry'),
  pipeline: Symbol('pipeline'),
  adminGuard: Symbol('adminGuard'),
  responseCache: Symbol('responseCache'),
  responseStore: Symbol('responseStore'),
  responses: Symbol('responses'),
} as const;

/** The real clock. */
const systemClock: Clock = { now: () => Date.now() };

/** How often stored responses past their retention are deleted (besides start-up). */
const RESPONSES_PRUNE_INTERVAL_MS = 60 * 60_000;

/** The unified operations, by path; `responses` is built with its store. Everything else under /v1/ is pass-through. */
const operationsWith = (responses: OperationHandler): ReadonlyArray<[path: string, handler: OperationHandler]> => [
  ['/v1/chat/completions', chatCompletions],
  ['/v1/responses', responses],
  ['/v1/images/edits', imageEdits],
  ['/v1/images/variations', imageVariations],
  ['/v1/audio/transcriptions', audioTranscriptions],
  ['/v1/audio/translations', audioTranslations],
  ['/v1/completions', completions],
  ['/v1/embeddings', embeddings],
  ['/v1/images/generations', imagesGenerate],
  ['/v1/audio/speech', speech],
  ['/v1/models', models],
  ['/v1/messages', messages],
  ['/v1/messages/count_tokens', messagesCountTokens],
];

/**
 * Registers every service of a gateway in `container`, each once: a value, or a factory that
 * resolves what the service depends on (so this function is the one place that says what depends
 * on what). Factories run on first resolution and their instance is kept.
 */
function registerServices(container: DependencyContainer, config: ResolvedConfig, options: GatewayOptions): void {
  // tsyringe takes a value provider only for a value that is neither null nor undefined.
  const value = (token: symbol, useValue: NonNullable<unknown>) => container.register(token, { useValue });
  const factory = <T>(token: symbol, build: (c: DependencyContainer) => T) => container.register(token, { useFactory: instanceCachingFactory(build) });

  const { logger, lines } = loggerWithHeldLines(
    // No pino `redact`: log entries are built without headers, bodies or credentials (and error
    // messages are scrubbed in buildLogEntry); wildcard redaction measured 30-80 µs per line.
    { level: config.logLevel, base: undefined },
    options.logDestination ?? pino.destination({ dest: 1, sync: false }),
  );
  value(TOKENS.logger, logger);
  value(TOKENS.logLines, lines);
  value(TOKENS.clock, options.clock ?? systemClock);
  // Control-plane calls only (webhook guardrails); model calls go through the undici UpstreamClient.
  value(TOKENS.controlPlaneHttp, lazyControlPlaneHttp());
  factory(TOKENS.pluginDependencies, (c) => {
    const logger = c.resolve<Logger>(TOKENS.logger);
    const http = c.resolve<() => ControlPlaneHttp>(TOKENS.controlPlaneHttp);
    const clock = c.resolve<Clock>(TOKENS.clock);
    return (manifest: PluginManifest): PluginDependencies => ({
      logger: logger.child({ plugin: manifest.id }),
      get http() {
        return http();
      },
      clock,
    });
  });
  const { accountKey, generated } = AccountKey.load(config.dataDir, config.accountKey);
  value(TOKENS.accountKey, accountKey);
  // Set when the account key was generated on this start (shown once by the caller of listen).
  factory(TOKENS.generatedAccountKey, () => generated);
  factory(TOKENS.memoryBudget, () => new MemoryBudget(config.memoryBudgetBytes));
  factory(TOKENS.failedAuth, (c) => {
    const clock = c.resolve<Clock>(TOKENS.clock);
    return new FailedAuthLimiter({ ...config.server.failedAuth, maxAddresses: 10_000 }, () => clock.now());
  });
  factory(
    TOKENS.vault,
    (c) =>
      new VaultService({
        dataDir: config.dataDir,
        redisUrl: config.redisUrl,
        redisPrefix: config.vault.redisPrefix,
        environment: options.environment ?? process.env,
        credentialCacheMs: config.vault.credentialCacheMs,
        pricing: config.pricing,
        outputTokenEstimate: config.vault.outputTokenEstimate,
        alerts: {
          ...config.alerts,
          get http() {
            return c.resolve<() => ControlPlaneHttp>(TOKENS.controlPlaneHttp)();
          },
          logger: c.resolve<Logger>(TOKENS.logger),
        },
      }),
  );
  factory(
    TOKENS.metrics,
    (c) =>
      new GatewayMetrics({
        // Read on scrape: the request log and the upstream client are built after the metrics.
        logQueue: () => {
          const { queue } = c.resolve<RequestLog>(TOKENS.requestLog);
          return { depth: queue.depth, spillBytes: queue.spillBytes, storeUp: queue.storeUp };
        },
        upstreamPools: () => c.resolve<UpstreamClient>(TOKENS.upstream).stats(),
        breakers: () => c.resolve<RoutingStateStore>(TOKENS.routingState).breakers(),
      }),
  );
  factory(TOKENS.routingState, (c) => {
    const clock = c.resolve<Clock>(TOKENS.clock);
    if (options.routing?.state) return options.routing.state;
    // With REDIS_URL, breakers are shared through the vault's Redis state once it is open (see createGateway).
    return config.redisUrl
      ? new SharedRoutingState(config.routing.breaker, () => clock.now(), config.routing.retry)
      : new MemoryRoutingState(config.routing.breaker, () => clock.now(), undefined, config.routing.retry);
  });
  factory(TOKENS.requestLog, (c) => createRequestLog(config, c.resolve(TOKENS.logger), c.resolve<GatewayMetrics>(TOKENS.metrics).logQueueObserver));
  factory(TOKENS.traceExporter, (c) => {
    if (!config.telemetry) return null;
    const logger = c.resolve<Logger>(TOKENS.logger);
    return new OtlpExporter({
      url: config.telemetry.tracesUrl,
      headers: config.telemetry.headers,
      serviceName: config.telemetry.serviceName,
      version: GATEWAY_VERSION,
      onError: (error) => logger.debug({ err: { message: (error as Error)?.message } }, 'trace export failed'),
    });
  });
  factory(TOKENS.tracer, (c) => new Tracer(c.resolve<OtlpExporter | null>(TOKENS.traceExporter) ?? undefined));
  factory(TOKENS.customHosts, () => new CustomHostGuard(config.customHosts));
  factory(TOKENS.upstream, (c) => new UpstreamClient({ ...config.upstream, guardedLookup: c.resolve<CustomHostGuard>(TOKENS.customHosts).lookup }));
  factory(TOKENS.policies, (c) => new PolicyRegistry(config.policies, c.resolve(TOKENS.pluginDependencies)));
  factory(TOKENS.registry, (c) => {
    // Guardrails the policies use are listed too, once per plugin id.
    const configured = config.guardrails.filter((entry): entry is GuardrailRegistration => typeof entry !== 'function');
    const listed = new Set(configured.map((registration) => registration.manifest?.id));
    const used = c
      .resolve<PolicyRegistry>(TOKENS.policies)
      .registrations()
      .filter((registration) => !listed.has(registration.manifest.id) && listed.add(registration.manifest.id));
    return new PluginRegistry(config.providers, [...configured, ...used], c.resolve(TOKENS.pluginDependencies));
  });
  factory(
    TOKENS.responseCache,
    (c) =>
      new ResponseCache({
        open: () =>
          openCacheStore({
            dataDir: config.dataDir,
            redisUrl: config.redisUrl,
            redisPrefix: config.vault.redisPrefix,
            maxBytes: config.cache.maxBytes,
            onEvict: (count) => c.resolve<GatewayMetrics>(TOKENS.metrics).cacheObserver.evicted(count),
            // The workers of GATEWAY_WORKERS share cache.sqlite: an answer is visible to all once stored.
            writeThrough: workerId() !== undefined,
          }),
        clock: c.resolve<Clock>(TOKENS.clock),
        logger: c.resolve<Logger>(TOKENS.logger),
        timeoutMs: config.cache.timeoutMs,
        maxEntryBytes: config.cache.maxEntryBytes,
        semanticMaxEntries: config.cache.semanticMaxEntries,
        observer: c.resolve<GatewayMetrics>(TOKENS.metrics).cacheObserver,
      }),
  );
  factory(TOKENS.responseStore, () => createResponseStore(config));
  factory(TOKENS.responses, (c) => {
    const logger = c.resolve<Logger>(TOKENS.logger);
    return createResponsesProtocol({
      store: c.resolve<ResponseStore>(TOKENS.responseStore),
      builtInTools: config.responses.builtInTools,
      onStoreError: (error) => logger.warn({ err: { message: (error as Error)?.message } }, 'a response could not be stored'),
    });
  });
  factory(TOKENS.adminGuard, (c) => new AdminGuard(c.resolve<AccountKey>(TOKENS.accountKey), { failedAuth: c.resolve(TOKENS.failedAuth), trustProxy: config.server.trustProxy }));
  factory(TOKENS.pipeline, (c) => {
    const logger = c.resolve<Logger>(TOKENS.logger);
    const vault = c.resolve<VaultService>(TOKENS.vault);
    const metrics = c.resolve<GatewayMetrics>(TOKENS.metrics);
    const tracer = c.resolve<Tracer>(TOKENS.tracer);
    const memoryBudget = c.resolve<MemoryBudget>(TOKENS.memoryBudget);
    const failedAuth = c.resolve<FailedAuthLimiter>(TOKENS.failedAuth);
    const responses = c.resolve<ReturnType<typeof createResponsesProtocol>>(TOKENS.responses);
    const operations = new Map([...operationsWith(responses.handler).map(([, handler]) => handler), createPassthrough(config.passthrough)].map((handler) => [handler.name, handler]));
    const sinks: LogSink[] = [
      new PinoLogSink(logger, c.resolve<HeldLines>(TOKENS.logLines)),
      metrics.sink,
      c.resolve<RequestLog>(TOKENS.requestLog).queue,
      ...(tracer.sink ? [tracer.sink] : []),
      ...(options.sinks ?? []),
    ];
    return new Pipeline(
      // The runner orders hooks by stage and by their own before/after, not by position here;
      // the config's hooks, unless they say otherwise, follow the built-in ones of their stage.
      [
        authHook({
          registry: c.resolve(TOKENS.registry),
          accountKey: c.resolve(TOKENS.accountKey),
          customHosts: c.resolve(TOKENS.customHosts),
          keyResolvers: [vault.resolver],
          failedAuth,
          forwardCookies: config.forwardCookies,
          // Stored routes, aliases and targets' credentials come from the vault's state store unless a test supplies its own.
          routes: { routes: config.routes, models: config.models, source: options.routing?.source ?? vault.routes },
          targetCredentials: options.routing?.targetCredentials ?? vault.targets,
        }),
        vault.hooks.admit,
        ...(config.logs.bodies === false ? [] : [bodyCaptureHook({ policy: config.logs.bodies, maxBytes: config.logs.bodyMaxBytes })]),
        guardrailHook({ policies: c.resolve(TOKENS.policies), defaultPolicy: config.defaultPolicy, operations }),
        cacheHook({
          cache: c.resolve(TOKENS.responseCache),
          operations,
          fallback: config.cache.default,
          semanticMaxChars: config.cache.semanticMaxChars,
          embed: createEmbedder({
            open: targetOpener({ registry: c.resolve(TOKENS.registry), customHosts: c.resolve(TOKENS.customHosts), targetCredentials: options.routing?.targetCredentials ?? vault.targets, forwardCookies: config.forwardCookies }),
            upstream: c.resolve(TOKENS.upstream),
          }),
          clock: c.resolve<Clock>(TOKENS.clock),
          logger,
          price: (provider, model, usage, headers) => {
            const price = model === undefined ? undefined : vault.prices.price(provider, model, headers);
            return price && costOf(price, tokenCounts(usage));
          },
        }),
        responses.hook,
        transformHook({ operations }),
        forwardHook({
          operations,
          upstream: c.resolve(TOKENS.upstream),
          memoryBudget,
          maxAnswerBytes: config.upstream.maxAnswerBytes,
          traceHeaders: tracer.traceHeaders,
          routing: {
            state: c.resolve<RoutingStateStore>(TOKENS.routingState),
            retry: config.routing.retry,
            ...(options.routing?.random ? { random: options.routing.random } : {}),
            ...(options.routing?.sleep ? { sleep: options.routing.sleep } : {}),
          },
        }),
        vault.hooks.settle,
        logHook({ sinks, bodies: config.logs.bodies }),
        ...config.hooks,
      ],
      {
        development: config.development,
        onUnexpectedError: (error, context) => logger.error({ err: error, traceId: context.traceId }, 'unexpected error'),
      },
    );
  });
}

/**
 * The composition root: resolves the configuration, registers every service in a container (the
 * only place tsyringe is used), validates every plugin and hook at boot, and builds the Koa app.
 */
export function createGateway(gatewayConfig: GatewayConfig, options: GatewayOptions = {}): Gateway {
  const config = resolveConfig(gatewayConfig, options.environment);
  const container = rootContainer.createChildContainer();
  registerServices(container, config, options);
  const known = (id: string): boolean => container.resolve<PluginRegistry>(TOKENS.registry).provider(id) !== undefined;
  checkRouteProviders(config.routes, 'routes', known);
  checkRouteProviders(config.models, 'models', known);
  const vault = container.resolve<VaultService>(TOKENS.vault);
  // The vault's worker thread takes ~50-75 ms to boot: it starts now, in parallel with the rest of
  // the construction, rather than in listen(). A failure is reported by listen() (or
  // vault.start()), which awaits the same promise.
  vault.start().catch(() => {});
  const routingState = container.resolve<RoutingStateStore>(TOKENS.routingState);
  const sharingBreakers = routingState instanceof SharedRoutingState ? vault.start().then(() => routingState.attach(vault.parts.state)) : Promise.resolve();
  sharingBreakers.catch(() => {});
  const logger = container.resolve<Logger>(TOKENS.logger);
  const accountKey = container.resolve<AccountKey>(TOKENS.accountKey);
  const generated = container.resolve<string | undefined>(TOKENS.generatedAccountKey);
  const policies = container.resolve<PolicyRegistry>(TOKENS.policies);
  const registry = container.resolve<PluginRegistry>(TOKENS.registry);
  const pipeline = container.resolve<Pipeline>(TOKENS.pipeline);
  const upstream = container.resolve<UpstreamClient>(TOKENS.upstream);
  const logs = container.resolve<RequestLog>(TOKENS.requestLog);
  const exporter = container.resolve<OtlpExporter | null>(TOKENS.traceExporter);
  const metrics = container.resolve<GatewayMetrics>(TOKENS.metrics);
  const memoryBudget = container.resolve<MemoryBudget>(TOKENS.memoryBudget);
  const adminGuard = container.resolve<AdminGuard>(TOKENS.adminGuard);
  const cache = container.resolve<ResponseCache>(TOKENS.responseCache);
  const responseStore = container.resolve<ResponseStore>(TOKENS.responseStore);
  const responsesHandler = container.resolve<ReturnType<typeof createResponsesProtocol>>(TOKENS.responses).handler;
  let pruneResponses: NodeJS.Timeout | undefined;
  const { app, operationRoutes } = buildApp({
    pipeline,
    registry,
    policies,
    adminGuard,
    accountKey,
    config,
    logger,
    vault,
    customHosts: container.resolve<CustomHostGuard>(TOKENS.customHosts),
    logStore: logs.store,
    metrics,
    memoryBudget,
    failedAuth: container.resolve<FailedAuthLimiter>(TOKENS.failedAuth),
    clock: container.resolve<Clock>(TOKENS.clock),
    cache,
    operations: operationsWith(responsesHandler),
    responseStore,
    identifyCaller: callerIdentifier({ accountKey, keyResolvers: [vault.resolver], failedAuth: container.resolve<FailedAuthLimiter>(TOKENS.failedAuth) }),
    routingState,
  });
  const servers: Server[] = [];

  return {
    app,
    config,
    logger,
    registry,
    pipeline,
    policies,
    adminGuard,
    vault,
    routes: vault.routes,
    generatedAccountKey: generated,
    logStore: logs.store,
    metrics,
    memoryBudget,
    cache,
    flushLogs: () => logs.queue.flush(),
    async listen(port = config.port, host = config.host) {
      await vault.start();
      await sharingBreakers;
      if (servers.length === 0) warnUnmatchablePatterns(vault.parts.routes, logger).catch(() => {});
      // The embedded cache opens on first use; a shared one connects now, so the first request does not wait for it.
      if (config.redisUrl) await cache.start();
      if (!pruneResponses) {
        // A store that does not open (a database down) fails no start: it is opened again on first use.
        await responseStore
          .init()
          .then(() => responseStore.prune())
          .catch((error: Error) => logger.warn({ err: { message: error.message } }, `the Responses store (${responseStore.kind}) did not open; it is retried on first use`));
        pruneResponses = setInterval(() => responseStore.prune().catch((error: Error) => logger.warn({ err: { message: error.message } }, 'responses retention failed')), RESPONSES_PRUNE_INTERVAL_MS);
        pruneResponses.unref();
      }
      // The operations are dispatched before Koa, which serves every other route (and the operations when given app.callback()).
      const listener = operationListener(operationRoutes, app.callback(), (error) => logger.error({ err: error }, 'unexpected error'));
      const server = createGatewayServer(listener, config.server);
      server.listen(port, host);
      await once(server, 'listening');
      servers.push(server);
      // A generated account key is stored only now that the gateway serves (the caller shows it):
      // a start that failed before this point leaves the data dir as it was.
      if (generated && servers.length === 1) AccountKey.store(config.dataDir, generated);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return { url: `http://${shownHost}:${address.port}`, server };
    },
    async close(graceMs = 0) {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              // Stop accepting, close idle keep-alive sockets, let requests in flight (streams
              // included) finish for up to graceMs, then cut what is left.
              const timer = setTimeout(() => server.closeAllConnections(), graceMs);
              server.close(() => {
                clearTimeout(timer);
                resolve();
              });
              server.closeIdleConnections();
            }),
        ),
      );
      await upstream.close();
      clearInterval(pruneResponses);
      await responseStore.close();
      if (routingState instanceof SharedRoutingState) routingState.close();
      await vault.close();
      await cache.close();
      await logs.close();
      await exporter?.flush();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    },
  };
}

function buildApp(parts: {
  pipeline: Pipeline;
  registry: PluginRegistry;
  policies: PolicyRegistry;
  adminGuard: AdminGuard;
  accountKey: AccountKey;
  config: ResolvedConfig;
  logger: Logger;
  vault: VaultService;
  customHosts: CustomHostGuard;
  logStore: LogStore;
  metrics: GatewayMetrics;
  memoryBudget: MemoryBudget;
  failedAuth: FailedAuthLimiter;
  clock: Clock;
  cache: ResponseCache;
  operations: ReadonlyArray<[path: string, handler: OperationHandler]>;
  responseStore: ResponseStore;
  identifyCaller: ReturnType<typeof callerIdentifier>;
  routingState: RoutingStateStore;
}): { app: Koa; operationRoutes: ReadonlyMap<string, GatewayRoute> } {
  const { pipeline, registry, policies, adminGuard, accountKey, config, logger } = parts;
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
  // A worker of GATEWAY_WORKERS says which one answered.
  const worker = workerId();
  const health = worker === undefined ? { status: 'ok' } : { status: 'ok', worker };
  router.get('/health', (koa) => {
    koa.body = health;
  });
  router.get('/openapi.json', async (koa) => void (koa.body = (await import('./api/openapi.js')).gatewayOpenApi));
  // Guardrail factories registered without params are listed from their manifests.
  const catalog = config.guardrails.filter((entry): entry is GuardrailFactory => typeof entry === 'function').map((factory) => factory.manifest);
  router.get('/admin/plugins', adminGuard.middleware, (koa) => {
    const listing = registry.list();
    const listed = new Set(listing.guardrails.map((manifest) => manifest.id));
    const unlisted = catalog.filter((manifest: GuardrailManifest) => !listed.has(manifest.id) && listed.add(manifest.id));
    koa.body = { ...listing, guardrails: [...listing.guardrails, ...unlisted.map((manifest) => ({ ...manifest }))] };
  });
  mountPolicyAdmin(router, { guard: adminGuard, policies, defaultPolicy: config.defaultPolicy, service: parts.vault, logStore: parts.logStore, clock: parts.clock });
  mountLogsApi(router, { guard: adminGuard, store: parts.logStore });
  mountPricesApi(router, { guard: adminGuard, prices: parts.vault.prices, provider: (id) => registry.provider(id) });
  mountCacheAdmin(router, { guard: adminGuard, cache: parts.cache });
  const metricsRoute = async (koa: Koa.Context) => {
    koa.type = parts.metrics.contentType;
    koa.body = await parts.metrics.render();
  };
  if (config.metricsPublic) router.get('/metrics', metricsRoute);
  else router.get('/metrics', adminGuard.middleware, metricsRoute);
  mountDashboard(router, {
    adminGuard,
    accountKey,
    failedAuth: parts.failedAuth,
    trustProxy: config.server.trustProxy,
    clock: parts.clock,
    records: () => (parts.vault.isStarted ? parts.vault.parts.state.records : undefined),
  });
  const handlerOptions = {
    bodyLimitBytes: config.bodyLimitBytes,
    memoryBudget: parts.memoryBudget,
    bodyTimeoutMs: config.server.bodyTimeoutMs,
    trustProxy: config.server.trustProxy,
  };
  // The unified operations are found with one map lookup before the router, whose layer matching
  // (a regular expression per route) is the larger cost on the path every model call takes.
  mountResponsesRoutes(router, { store: parts.responseStore, identify: parts.identifyCaller, trustProxy: config.server.trustProxy });
  const operationRoutes = new Map(parts.operations.map(([path, handler]) => [`${handler.method ?? 'POST'} ${path}`, gatewayRoute(pipeline, handler, handlerOptions)]));
  app.use((koa, next) => {
    // Route on the path exactly as it will be sent upstream; an unacceptable one falls through to
    // the pass-through handler, which refuses it (400 invalid_path) and logs it.
    if (koa.path.startsWith('/v1/')) {
      try {
        const raw = rawPathOf(koa.url);
        const canonical = canonicalPath(raw);
        if (canonical !== raw) koa.path = canonical;
      } catch {
        // refused by the handler
      }
    }
    const route = operationRoutes.get(`${koa.method} ${koa.path}`);
    if (!route) return next();
    koa.respond = false;
    return route(koa.req, koa.res, koa.path, koa.querystring);
  });
  app.use(router.routes());
  app.use(
    virtualKeyAdminRouter({
      guard: adminGuard,
      service: parts.vault,
      customHosts: parts.customHosts,
      providerIds: () => registry.providerIds(),
      policyExists: (name) => policies.has(name),
      routing: { state: parts.routingState, routes: config.routes, models: config.models },
    }).routes(),
  );

  const passthroughHandler = gatewayHandler(pipeline, createPassthrough(config.passthrough), handlerOptions);
  app.use(async (koa) => {
    if (!koa.path.startsWith('/v1/')) {
      throw errors.notFound(`No route for ${koa.method} ${koa.path}.`, { code: 'route_not_found' });
    }
    await passthroughHandler(koa);
  });
  return { app, operationRoutes };
}

/**
 * Warns of stored routes and model aliases whose `$regex` RE2 refuses (stored before patterns were
 * checked): such a condition never matches until the route is saved again (docs/routing.md).
 */
async function warnUnmatchablePatterns(routes: RouteStore, logger: Logger): Promise<void> {
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
