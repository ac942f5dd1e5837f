import { SqliteState } from '../store/sqlite-state.js';
import type { SharedState } from '../store/state.js';
import { primaryChannel } from './worker.js';

/**
 * Redis when `redisUrl` is set (shared by instances), else the embedded SQLite file under `dataDir`
 * (reached through the primary process in a worker of `GATEWAY_WORKERS`).
 * The Redis client is imported only then: its ~400 modules took ~130 ms of an embedded start-up.
 */
export async function openSharedState(options: { dataDir: string; redisUrl?: string; redisPrefix: string }): Promise<SharedState> {
  if (options.redisUrl) {
    const { RedisState } = await import('../store/redis-state.js');
    return RedisState.connect(options.redisUrl, options.redisPrefix);
  }
  // One of GATEWAY_WORKERS' processes: the primary owns the embedded state's counters.
  const primary = primaryChannel();
  if (primary) {
    const { WorkerState } = await import('./worker-state.js');
    return new WorkerState(options.dataDir, primary);
  }
  return new SqliteState(options.dataDir);
}
