import { type Container, provide } from '../container.js';
import { UpstreamClient } from '../http/upstream.js';
import { RequestLogging } from '../logs/assemble.js';
import { Routing } from '../routing/assemble.js';
import { GatewayMetrics } from './metrics.js';

/** Registers the Prometheus metrics; the gauges they read on scrape come from parts built after them. */
export function registerMetrics(container: Container): void {
  provide(
    container,
    GatewayMetrics,
    (c) =>
      new GatewayMetrics({
        logQueue: () => {
          const { queue } = c.resolve(RequestLogging).log;
          return { depth: queue.depth, spillBytes: queue.spillBytes, storeUp: queue.storeUp };
        },
        upstreamPools: () => c.resolve(UpstreamClient).stats(),
        breakers: () => c.resolve(Routing).executor.state.breakers(),
      }),
  );
}
