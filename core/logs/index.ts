import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../config/index.js';
import { PostgresLogStore } from './postgres-store.js';
import { LogQueue, type LogQueueObserver } from './queue.js';
import type { SinkQueue } from './sink-queue.js';
import { SpillFile } from './spill.js';
import { SqliteWorkerStore } from './sqlite-worker-store.js';
import type { LogStore } from './store.js';

/** Redacts the password of a connection string for messages. */
const safeUrl = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/**
 * Builds the durable request log: the store (PostgreSQL when `DATABASE_URL` is set, else SQLite
 * at `<data dir>/logs.db`), the spill file (`<data dir>/log-spill/`) and the queue between them.
 * Nothing here can fail the start: a store that does not open is retried by the queue while
 * entries spill.
 */
export interface RequestLog {
  readonly store: LogStore;
  readonly queue: LogQueue;
  /** The external sinks' queues (`logs.sinks`). */
  readonly sinks: readonly SinkQueue[];
  /** Stores what is queued (up to `graceMs`), spills the rest, closes the store and the sinks. */
  close(graceMs?: number): Promise<void>;
}

/** A partial batch waits this long for more entries (fewer, larger writes; measured in bench/log-overhead.ts). */
const LINGER_MS = 20;

/** How often retention runs besides start-up. */
const PRUNE_INTERVAL_MS = 60_000;

export function createRequestLog(config: ResolvedConfig, logger: Logger, observer: LogQueueObserver = {}, sinks: readonly SinkQueue[] = []): RequestLog {
  const logs = config.logs;
  const store: LogStore = logs.databaseUrl
    ? new PostgresLogStore({ connectionString: logs.databaseUrl, schema: logs.postgresSchema, maxAgeMs: logs.retentionMaxAgeMs, search: logs.search })
    : new SqliteWorkerStore(
        join(config.dataDir, 'logs.db'),
        { maxAgeMs: logs.retentionMaxAgeMs, maxBytes: logs.retentionMaxBytes },
        (message) => logger.warn(message),
        logs.search,
        logs.writerNice,
      );
  const spill = new SpillFile(join(config.dataDir, 'log-spill'), logs.spillMaxBytes);
  let lastDropWarning = 0;
  let droppedSinceWarning = 0;
  const queue = new LogQueue(
    store,
    spill,
    { capacity: logs.queueCapacity, batchSize: logs.batchSize, bodyMaxBytes: logs.bodyMaxBytes, retryMs: logs.retryMs, lingerMs: LINGER_MS },
    {
      ...observer,
      storeDown(error) {
        const where = logs.databaseUrl ? safeUrl(logs.databaseUrl) : join(config.dataDir, 'logs.db');
        logger.warn({ err: { message: (error as Error)?.message } }, `log store ${store.kind} (${where}) failed; entries spill to ${spill.directory} until it recovers`);
        observer.storeDown?.(error);
      },
      storeUp() {
        observer.storeUp?.();
      },
      dropped(count, reason, detail) {
        observer.dropped?.(count, reason, detail);
        // One warning per 10 s at most, with the count since the last one.
        droppedSinceWarning += count;
        const now = Date.now();
        if (now - lastDropWarning >= 10_000) {
          logger.warn({ dropped: droppedSinceWarning, reason, detail }, 'request log entries dropped');
          lastDropWarning = now;
          droppedSinceWarning = 0;
        }
      },
    },
  );
  queue.start();
  const pruning = setInterval(() => {
    if (queue.storeUp) store.prune().catch((error: Error) => logger.warn({ err: { message: error.message } }, 'log retention failed'));
  }, PRUNE_INTERVAL_MS);
  pruning.unref();
  return {
    store,
    queue,
    sinks,
    async close(graceMs) {
      clearInterval(pruning);
      await Promise.all([queue.close(graceMs), ...sinks.map((sink) => sink.close(graceMs))]);
    },
  };
}
