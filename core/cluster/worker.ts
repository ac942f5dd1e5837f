import cluster from 'node:cluster';
import type { AggregatorRegistry as Aggregator, Registry } from 'prom-client';
import { requireDependency } from '../require.js';
import { Channel } from './channel.js';

let channel: Channel | undefined;

/** This process's number among the workers (1, 2, …), or undefined when it is not one. */
export function workerId(): number | undefined {
  const id = process.env.GATEWAY_WORKER_ID;
  return cluster.isWorker && id !== undefined ? Number(id) : undefined;
}

/** The channel to the primary process, when this process is one of `GATEWAY_WORKERS` workers. */
export function primaryChannel(): Channel | undefined {
  if (workerId() === undefined) return undefined;
  if (!channel) {
    const link = new Channel((message) => process.send!(message));
    process.on('message', (message) => link.receive(message));
    channel = link;
  }
  return channel;
}

/**
 * Lets the primary collect this worker's metrics (prom-client's cluster messages), and returns
 * what `/metrics` then renders: every worker's metrics summed, asked of the primary.
 */
export function clusterMetrics(registry: Registry, primary: Channel): () => Promise<string> {
  const AggregatorRegistry = aggregatorRegistry();
  new AggregatorRegistry(); // registers the worker's answer to the primary's metrics requests
  AggregatorRegistry.setRegistries([registry]);
  return () => primary.request<string>('metrics');
}

/** prom-client's cluster aggregator, loaded by the processes of `GATEWAY_WORKERS` only (as core/metrics/metrics.ts loads its classes). */
export const aggregatorRegistry = (): typeof Aggregator => requireDependency('prom-client/lib/cluster') as typeof Aggregator;
