import { RedisState } from './redis-state.js';
import { SqliteState } from './sqlite-state.js';
import type { SharedState } from './state.js';

export type { SharedState } from './state.js';

/** Redis when `redisUrl` is set (shared by instances), else the embedded SQLite file under `dataDir`. */
export async function openSharedState(options: { dataDir: string; redisUrl?: string; redisPrefix: string }): Promise<SharedState> {
  if (options.redisUrl) return RedisState.connect(options.redisUrl, options.redisPrefix);
  return new SqliteState(options.dataDir);
}
