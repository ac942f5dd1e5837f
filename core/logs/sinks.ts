import cluster from 'node:cluster';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/index.js';
import { assertParams } from '../params-schema.js';
import type { PluginDependencies, PluginManifest } from '../spec/manifest.js';
import { SinkQueue, type SinkQueueObserver } from './sink-queue.js';
import { SpillFile } from './spill.js';

/** A partial batch waits this long for more entries, as the store's queue does. */
const LINGER_MS = 20;

/** One warning per sink per this long at most for lost entries, with the count since the last. */
const DROP_WARNING_MS = 10_000;

/**
 * Builds a queue per configured sink (`logs.sinks`), each with its spill directory
 * `<data dir>/log-sinks/<name>/` (a cluster worker's own below it), checks each plugin's params
 * (a BootError at start), and starts them: what an earlier run spilled is replayed first.
 */
export function createSinkQueues(
  config: ResolvedConfig,
  dependencies: (manifest: Pick<PluginManifest, 'id'>) => PluginDependencies,
  logger: Logger,
  observerOf: (name: string) => SinkQueueObserver,
): SinkQueue[] {
  return config.logs.sinks.map((sink) => {
    const { manifest } = sink.registration;
    const label = `log sink "${sink.name}" (${manifest.id})`;
    if (manifest.params) assertParams(manifest.params, sink.registration.params ?? {}, label, '(params)');
    const target = sink.registration.create(dependencies(manifest));
    const directory = join(config.dataDir, 'log-sinks', sink.name, ...(cluster.isWorker && cluster.worker ? [`worker-${cluster.worker.id}`] : []));
    const spill = new SpillFile(directory, sink.spillMaxBytes);
    const observer = observerOf(sink.name);
    let lastDropWarning = 0;
    let droppedSinceWarning = 0;
    const queue = new SinkQueue(
      sink.name,
      target,
      spill,
      {
        batchSize: Math.max(1, Math.min(sink.batchSize, target.maxBatch ?? Number.POSITIVE_INFINITY)),
        capacity: sink.queueCapacity,
        retryMs: sink.retryMs,
        timeoutMs: sink.timeoutMs,
        bodies: sink.bodies,
        bodyMaxBytes: config.logs.bodyMaxBytes,
        lingerMs: LINGER_MS,
      },
      {
        ...observer,
        down(error) {
          // Sinks word their errors without secrets (SinkError); only the message is logged.
          logger.warn({ sink: sink.name, err: { message: (error as Error)?.message } }, `${label} failed; entries spill to ${directory} until it recovers`);
          observer.down?.(error);
        },
        up() {
          logger.info({ sink: sink.name }, `${label} recovered; replaying what spilled`);
          observer.up?.();
        },
        dropped(count, reason, detail) {
          observer.dropped?.(count, reason, detail);
          droppedSinceWarning += count;
          const now = Date.now();
          if (now - lastDropWarning >= DROP_WARNING_MS) {
            logger.warn({ sink: sink.name, dropped: droppedSinceWarning, reason }, `${label}: log entries dropped`);
            lastDropWarning = now;
            droppedSinceWarning = 0;
          }
        },
      },
    );
    queue.start();
    return queue;
  });
}
