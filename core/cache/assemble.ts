import { keyResolversOf } from '../identity/assemble.js';
import type { OperationHandler } from '../api/operation.js';
import { ClusterMembership } from '../cluster/assemble.js';
import { type Container, GatewaySettings, provide } from '../container.js';
import { gatewayKeyTest } from '../identity/caller.js';
import { targetOpener } from '../routing/targets.js';
import { AdminAccess } from '../admin/assemble.js';
import { CustomHostGuard } from '../http/custom-host.js';
import { UpstreamClient } from '../http/upstream.js';
import { GatewayMetrics } from '../metrics/metrics.js';
import type { Hook } from '../pipeline/hook.js';
import { PluginRegistry } from '../registry.js';
import { Routing } from '../routing/assemble.js';
import { costOf, tokenCounts } from '../vault/pricing.js';
import { VaultService } from '../vault/service.js';
import { createEmbedder } from './embedder.js';
import { cacheHook } from './hook.js';
import { ResponseCache } from './response-cache.js';
import { SingleFlight } from './single-flight.js';
import { openCacheStore } from './store.js';

/** Registers the response cache: embedded (SQLite, opened on first use), or shared through Redis with `REDIS_URL`. */
export function registerCache(container: Container): void {
  provide(container, ResponseCache, (c) => {
    const { config, clock, logger } = c.resolve(GatewaySettings);
    const metrics = c.resolve(GatewayMetrics);
    const { sharesDataDir } = c.resolve(ClusterMembership);
    return new ResponseCache({
      open: () =>
        openCacheStore({
          dataDir: config.dataDir,
          redisUrl: config.redisUrl,
          redisPrefix: config.vault.redisPrefix,
          maxBytes: config.cache.maxBytes,
          onEvict: (count) => metrics.cacheObserver.evicted(count),
          // The workers of GATEWAY_WORKERS share cache.sqlite: an answer is visible to all once stored.
          writeThrough: sharesDataDir,
        }),
      clock,
      logger,
      timeoutMs: config.cache.timeoutMs,
      maxEntryBytes: config.cache.maxEntryBytes,
      semanticMaxEntries: config.cache.semanticMaxEntries,
      observer: metrics.cacheObserver,
    });
  });
}

/** The cache's hook: answers from the cache, embeds for the semantic cache through a route target, prices what a hit saved. */
export function cachingHook(container: Container, operations: ReadonlyMap<string, OperationHandler>): Hook {
  const { config, clock, logger } = container.resolve(GatewaySettings);
  const vault = container.resolve(VaultService);
  const upstream = container.resolve(UpstreamClient);
  const open = targetOpener({
    registry: container.resolve(PluginRegistry),
    customHosts: container.resolve(CustomHostGuard),
    targetCredentials: container.resolve(Routing).targetCredentials,
    forwardCookies: config.forwardCookies,
    isGatewayKey: gatewayKeyTest(container.resolve(AdminAccess).accountKey, keyResolversOf(container)),
  });
  const cache = container.resolve(ResponseCache);
  const { singleFlightWaitMs: waitMs, singleFlightLeaseMs: leaseMs, timeoutMs } = config.cache;
  return cacheHook({
    cache,
    flights: new SingleFlight(cache, { waitMs, leaseMs, timeoutMs, logger }),
    operations,
    fallback: config.cache.default,
    semanticMaxChars: config.cache.semanticMaxChars,
    embed: createEmbedder({ open, upstream }),
    clock,
    logger,
    price: (provider, model, usage, headers) => {
      const price = model === undefined ? undefined : vault.prices.price(provider, model, headers);
      return price && costOf(price, tokenCounts(usage));
    },
  });
}
