import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyResolversOf } from '../../identity/assemble.js';
import { AdminAccess } from '../../admin/assemble.js';
import { type Container, GatewaySettings, provide } from '../../container.js';
import { callerIdentifier } from '../../identity/caller.js';
import type { Middleware } from 'koa';
import { canonicalPath, rawPathOf } from '../../http/request-path.js';
import type { Router } from '../../http/router.js';
import type { Hook } from '../../pipeline/hook.js';
import { chatCompletions } from '../chat-completions.js';
import { completions } from '../completions.js';
import { embeddings } from '../embeddings.js';
import { type GatewayRoute, gatewayRoute, type HandlerOptions } from '../handler.js';
import { imagesGenerate } from '../images-generate.js';
import { ModelCatalogue } from '../model-catalogue.js';
import { models } from '../models.js';
import { modelListRoute } from '../models-catalogue.js';
import { PluginRegistry } from '../../registry.js';
import { Routing } from '../../routing/assemble.js';
import { audioTranscriptions, audioTranslations, imageEdits, imageVariations } from '../multipart-operations.js';
import type { OperationHandler } from '../operation.js';
import { createPassthrough } from '../passthrough.js';
import { withBatches } from '../batches/batch-routes.js';
import { BatchService } from '../batches/batch-service.js';
import { BatchStore } from '../batches/batch-store.js';
import { UpstreamClient } from '../../http/upstream.js';
import { RequestLogging } from '../../logs/assemble.js';
import { rerank } from '../rerank.js';
import { speech } from '../speech.js';
import { errors } from '../../errors.js';
import { renderGoogleError } from './gemini/errors.js';
import { GEMINI_OPERATIONS, geminiOperationOf, withoutKey } from './gemini/routes.js';
import { messages, messagesCountTokens } from './messages/handler.js';
import { realtime } from './realtime/handler.js';
import { type RealtimeOptions, type RealtimeUpgrade, realtimeUpgrade } from './realtime/upgrade.js';
import { createResponsesProtocol } from './responses/responses-operation.js';
import { mountResponsesRoutes } from './responses/responses-routes.js';
import type { ResponseStore } from './responses/responses-store.js';
import { createResponseStore } from './responses/responses-store-factory.js';
import { McpGateway, mountMcp } from '../../mcp/assemble.js';
import { Pipeline } from '../../pipeline/runner.js';
import { VaultService } from '../../vault/service.js';
import { PolicyRegistry } from '../../guardrails/registry.js';
import { CustomHostGuard } from '../../http/custom-host.js';

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
  ['/v1/rerank', rerank],
  ['/v1/images/generations', imagesGenerate],
  ['/v1/audio/speech', speech],
  ['/v1/models', models],
  ['/v1/messages', messages],
  ['/v1/messages/count_tokens', messagesCountTokens],
];

/** The operations the gateway serves, the Responses API's stored responses, and the hook that keeps them. */
export class Protocols {
  /** Every operation by name (the pass-through included), for the stages that look an operation up. */
  readonly byName: ReadonlyMap<string, OperationHandler>;
  private pruning?: NodeJS.Timeout;

  constructor(
    /** The unified operations by path. */
    readonly operations: ReadonlyArray<[path: string, handler: OperationHandler]>,
    /** Every other path under /v1/. */
    readonly passthrough: OperationHandler,
    /** Stores the answers of `/v1/responses`. */
    readonly hook: Hook,
    readonly store: ResponseStore,
    private readonly settings: GatewaySettings,
    /** The model catalogue (`GET /v1/models` without a provider, `GET /admin/models/catalogue`). */
    readonly catalogue?: ModelCatalogue,
    /** `GET /v1/models` without `x-gateway-provider`: the caller's list from the catalogue. */
    private readonly modelList?: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
    /** What the Realtime API's sessions need (absent: upgrade requests are refused). */
    private readonly realtimeOptions?: RealtimeOptions,
  ) {
    this.byName = new Map([...operations.map(([, handler]) => handler), ...GEMINI_OPERATIONS, realtime, passthrough].map((handler) => [handler.name, handler]));
  }

  /**
   * The unified operations as routes through `pipeline`, by `METHOD path` (for the server's request
   * listener, which runs them without Koa), and the Koa middleware that routes them the same way.
   */
  routes(pipeline: Pipeline, options: HandlerOptions): { byRoute: ReadonlyMap<string, GatewayRoute>; dispatch: Middleware; upgrade: RealtimeUpgrade | undefined } {
    // The unified operations are found with one map lookup before the router, whose layer matching
    // (a regular expression per route) is the larger cost on the path every model call takes.
    const byRoute = new Map(this.operations.map(([path, handler]) => [`${handler.method ?? 'POST'} ${path}`, gatewayRoute(pipeline, handler, options)]));
    // The Gemini API names the model in the path (`/v1beta/models/{model}:generateContent`): its routes are matched by pattern.
    const geminiRoutes = new Map(GEMINI_OPERATIONS.map((handler) => [handler, gatewayRoute(pipeline, handler, options)]));
    const providerList = byRoute.get('GET /v1/models');
    const modelList = this.modelList;
    // Without x-gateway-provider the gateway lists, from its catalogue, what the caller's key may reach.
    if (providerList && modelList) {
      byRoute.set('GET /v1/models', (request, response, path, query) => (request.headers['x-gateway-provider'] === undefined ? modelList(request, response) : providerList(request, response, path, query)));
    }
    const dispatch: Middleware = (koa, next) => {
      const gemini = geminiOperationOf(koa.method, koa.url);
      if (gemini) {
        koa.respond = false;
        // Google's `?key=` moves to its header before the request is read or recorded (see withoutKey).
        const { query, key } = withoutKey(koa.querystring);
        if (key !== undefined || query !== koa.querystring) {
          if (key !== undefined && koa.req.headers['x-goog-api-key'] === undefined) koa.req.headers['x-goog-api-key'] = key;
          koa.req.url = `${rawPathOf(koa.req.url)}${query ? `?${query}` : ''}`;
        }
        return geminiRoutes.get(gemini)!(koa.req, koa.res, rawPathOf(koa.req.url), query);
      }
      if (koa.path.startsWith('/v1beta/')) {
        // Google's API version prefix: an unknown method is answered in Google's error shape.
        koa.status = 404;
        koa.body = renderGoogleError(errors.notFound(`No route for ${koa.method} ${koa.path}.`, { code: 'route_not_found' }));
        return;
      }
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
      const route = byRoute.get(`${koa.method} ${koa.path}`);
      if (!route) return next();
      koa.respond = false;
      return route(koa.req, koa.res, koa.path, koa.querystring);
    };
    // The Realtime API (`GET /v1/realtime` upgraded to a WebSocket) is served on the server's upgrade requests.
    const upgrade = this.realtimeOptions && realtimeUpgrade(pipeline, this.realtimeOptions);
    return { byRoute, dispatch, upgrade };
  }

  /** Opens the store of responses and prunes it now and hourly (once per gateway). */
  async start(): Promise<void> {
    if (this.pruning) return;
    const { logger } = this.settings;
    // A store that does not open (a database down) fails no start: it is opened again on first use.
    await this.store
      .init()
      .then(() => this.store.prune())
      .catch((error: Error) => logger.warn({ err: { message: error.message } }, `the Responses store (${this.store.kind}) did not open; it is retried on first use`));
    this.pruning = setInterval(() => this.store.prune().catch((error: Error) => logger.warn({ err: { message: error.message } }, 'responses retention failed')), RESPONSES_PRUNE_INTERVAL_MS);
    this.pruning.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.pruning);
    await this.store.close();
  }
}

/** Registers the model catalogue and the protocols: the unified operations, the Responses API with its store (SQLite, or PostgreSQL with `DATABASE_URL`). */
export function registerProtocols(container: Container): void {
  provide(container, ModelCatalogue, (c) => {
    const registry = c.resolve(PluginRegistry);
    return new ModelCatalogue(() => registry.providerIds().map((id) => registry.provider(id)!), c.resolve(VaultService).prices);
  });
  provide(container, Protocols, (c) => {
    const settings = c.resolve(GatewaySettings);
    const { config, logger } = settings;
    const store = createResponseStore(config);
    const vault = c.resolve(VaultService);
    const responses = createResponsesProtocol({
      store,
      builtInTools: config.responses.builtInTools,
      onStoreError: (error) => logger.warn({ err: { message: (error as Error)?.message } }, 'a response could not be stored'),
      sealer: { seal: (recordId, plaintext) => vault.sealText(recordId, plaintext), open: (recordId, sealed) => vault.openText(recordId, sealed) },
      // The error's name only: a vault error never holds the plaintext, but nothing of the mapping is risked here.
      onMaskError: (error) => logger.warn({ err: { name: (error as Error)?.name } }, "a conversation's masking map could not be sealed or opened; the turn masks with placeholders of its own"),
      // Resolved on first use: the pipeline is built from these operations, and the MCP gateway after them.
      mcp: { pipeline: () => c.resolve(Pipeline), tools: () => c.resolve(McpGateway).models },
    });
    const registry = c.resolve(PluginRegistry);
    const { accountKey, failedAuth } = c.resolve(AdminAccess);
    const routing = c.resolve(Routing);
    const catalogue = c.resolve(ModelCatalogue);
    const modelList = modelListRoute({
      catalogue,
      provider: (id) => registry.provider(id),
      keys: { accountKey, keyResolvers: keyResolversOf(c), failedAuth },
      allowedModels: async (caller) => (caller.type === 'virtual-key' ? ((vault.keys.cached(caller.id) ?? (await vault.keys.get(caller.id)))?.limits?.allowed_models ?? undefined) : undefined),
      configRoutes: routing.catalog.routes,
      configAliases: routing.catalog.models,
      storedRoutes: async () => (vault.isStarted ? vault.parts.routes.list() : []),
      storedAliases: async () => (vault.isStarted ? vault.parts.routes.listAliases() : []),
      trustProxy: config.server.trustProxy,
    });
    // Files and batches for providers with their own batch API, in the shared state (opened with the vault).
    const batchStore = new BatchStore(() => vault.parts.state);
    const batchService = new BatchService({
      store: batchStore,
      state: () => vault.parts.state,
      prices: vault.prices,
      levels: (context) => vault.hooks.levels(context),
      onCharged: (budget, spentNanos) => vault.alerts.charged(budget, spentNanos),
      outputTokenEstimate: config.vault.outputTokenEstimate,
      upstream: c.resolve(UpstreamClient),
      sinks: () => c.resolve(RequestLogging).sinks,
      maxAnswerBytes: config.upstream.maxAnswerBytes,
    });
    const passthrough = withBatches(createPassthrough(config.passthrough), { store: batchStore, service: batchService, maxFileBytes: config.batches.maxFileBytes });
    const realtimeOptions: RealtimeOptions = {
      bounds: config.realtime,
      handshakeTimeoutMs: config.upstream.connectTimeoutMs,
      trustProxy: config.server.trustProxy,
      policies: c.resolve(PolicyRegistry),
      charge: vault.hooks.charge,
      guardedLookup: c.resolve(CustomHostGuard).lookup,
    };
    return new Protocols(operationsWith(responses.handler), passthrough, responses.hook, store, settings, catalogue, modelList, realtimeOptions);
  });
}

/** Mounts the routes of stored responses; their caller is identified the way the auth stage does it. */
export function mountProtocols(router: Router, container: Container): void {
  // The MCP gateway's endpoint (`/mcp`) is a client protocol of its own.
  mountMcp(router, container);
  const { accountKey, failedAuth } = container.resolve(AdminAccess);
  const identify = callerIdentifier({ accountKey, keyResolvers: keyResolversOf(container), failedAuth });
  mountResponsesRoutes(router, { store: container.resolve(Protocols).store, identify, trustProxy: container.resolve(GatewaySettings).config.server.trustProxy });
}
