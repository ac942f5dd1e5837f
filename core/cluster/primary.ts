import cluster, { type Worker } from 'node:cluster';
import { SqliteState } from '../store/sqlite-state.js';
import type { InvalidationEvent, Settlement } from '../store/state.js';
import type { QuotaAcquire, QuotaRelease } from '../store/quota-state.js';
import type { CliIo } from '../cli-io.js';
import { BootError } from '../errors.js';
import { Channel } from './channel.js';
import { aggregatorRegistry } from './worker.js';

export interface PrimaryOptions {
  readonly workers: number;
  readonly dataDir: string;
  /** Set: the workers share Redis, and the primary holds no state. */
  readonly redisUrl?: string;
  readonly io: CliIo;
  /** How long a worker that exits unexpectedly waits before it is started again (doubles up to 30 s). */
  readonly restartDelayMs?: number;
}

/**
 * The primary of `GATEWAY_WORKERS=N`: it serves no request itself. It starts N gateway processes
 * sharing one listening port (node:cluster hands connections out in turn), starts again a worker
 * that dies, and, with the embedded store, is the one owner of the state that must be counted once
 * for all of them (limit counters, unique names, invalidation events), which workers reach over
 * IPC. The first worker starts alone, so that it alone creates or migrates the data dir's
 * databases and stores a generated account key; the others start once it listens.
 *
 * Resolves once every worker listens; rejects if the first one fails to start.
 */
export async function runPrimary(options: PrimaryOptions): Promise<void> {
  const { io } = options;
  const state = options.redisUrl ? undefined : new SqliteState(options.dataDir);
  const channels = new Map<Worker, Channel>();
  const aggregator = new (aggregatorRegistry())();
  const broadcast = (event: InvalidationEvent) => {
    for (const channel of channels.values()) channel.emit('invalidate', event);
  };
  const handlers = {
    metrics: () => aggregator.clusterMetrics(),
    ...(state && {
      claim: (name: string, owner: string) => state.claim(name, owner),
      release: (name: string, owner: string) => state.release(name, owner),
      addToSet: (set: string, member: string) => state.addToSet(set, member),
      removeFromSet: (set: string, member: string) => state.removeFromSet(set, member),
      members: (set: string) => state.members(set),
      admit: (admission: Parameters<SqliteState['admit']>[0]) => state.admit(admission),
      read: (keys: readonly string[]) => state.read(keys),
      minuteCount: (key: string, now: number) => state.minuteCount(key, now),
      windowUsage: (tokensKey: string, concurrentKey: string, now: number) => state.windowUsage(tokensKey, concurrentKey, now),
      publish: (event: InvalidationEvent) => broadcast(event),
      quotaAcquire: (acquire: QuotaAcquire) => state.quota.acquire(acquire),
      quotaSnapshot: (key: string, now: number, windowMs: number) => state.quota.snapshot(key, now, windowMs),
    }),
  };

  let stopping = false;
  /** Until every worker listens, a worker that exits fails the start instead of being started again. */
  let started = false;
  const restartDelay = new Map<number, number>();
  const fork = (id: number): Worker => {
    const worker = cluster.fork({ GATEWAY_WORKER_ID: String(id) });
    const channel = new Channel((message) => worker.send(message), handlers);
    worker.on('message', (message) => channel.receive(message));
    if (state) channel.on<Settlement>('settle', (settlement) => void state.settle(settlement));
    if (state) channel.on<QuotaRelease>('quotaRelease', (release) => void state.quota.release(release));
    channels.set(worker, channel);
    worker.once('listening', () => restartDelay.delete(id));
    worker.once('exit', (code, signal) => {
      channels.delete(worker);
      channel.close(`worker ${id} exited`);
      if (stopping) {
        if (channels.size === 0) void finish();
        return;
      }
      if (!started) return;
      const delay = restartDelay.get(id) ?? options.restartDelayMs ?? 500;
      restartDelay.set(id, Math.min(delay * 2, 30_000));
      io.stderr.write(`worker ${id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); starting it again in ${delay} ms\n`);
      setTimeout(() => {
        if (!stopping) fork(id);
      }, delay);
    });
    return worker;
  };
  const listening = (worker: Worker) =>
    new Promise<void>((resolve, reject) => {
      const exited = (code: number) => reject(new Error(`worker ${worker.id} exited with code ${code} before it listened`));
      worker.once('exit', exited);
      worker.once('listening', () => {
        worker.off('exit', exited);
        resolve();
      });
    });

  const finish = async () => {
    await state?.close();
    process.exit(0);
  };
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // Each worker lets its requests in flight finish (GATEWAY_SHUTDOWN_GRACE_MS), then exits.
    for (const worker of channels.keys()) worker.process.kill('SIGTERM');
    if (channels.size === 0) void finish();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  try {
    await listening(fork(1));
    await Promise.all(Array.from({ length: options.workers - 1 }, (_, index) => listening(fork(index + 2))));
    started = true;
  } catch (error) {
    stopping = true;
    for (const worker of channels.keys()) worker.process.kill('SIGTERM');
    await state?.close();
    throw error;
  }
  io.stdout.write(`${options.workers} workers listening (pids ${[...channels.keys()].map((worker) => worker.process.pid).join(', ')})\n`);
}

/** `GATEWAY_WORKERS`: a number of processes, or `auto` for one per core; undefined or 1: one process. */
export function workerCount(setting: string | undefined, cores: number): number {
  if (setting === undefined || setting === '') return 1;
  if (setting === 'auto') return Math.max(1, cores);
  const count = Number(setting);
  if (!Number.isInteger(count) || count < 1 || count > 256) {
    throw new BootError('INVALID_CONFIG', `GATEWAY_WORKERS must be a whole number from 1 to 256, or auto (found ${JSON.stringify(setting)})`);
  }
  return count;
}
