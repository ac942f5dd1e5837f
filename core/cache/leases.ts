import type { DatabaseSync, StatementSync } from 'node:sqlite';

/**
 * Short leases on cache keys, so that identical concurrent misses make one upstream call: the
 * first to take a key's lease asks upstream and stores the answer, the others wait for it. A lease
 * names its holder by a random token (only the holder renews or ends it) and expires by itself, so
 * a holder that dies frees the key within its time to live.
 */
export interface Leases {
  /** How often a waiter looks at the store: often where releases are not heard (another process's, on a shared file). */
  readonly pollMs: number;
  /** Takes the lease on `key` for `ttlMs` unless someone holds it; true when taken. */
  acquire(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Extends the lease to `ttlMs` from now, when `token` still holds it. */
  renew(key: string, token: string, ttlMs: number): Promise<void>;
  /** Ends the lease when `token` holds it, and tells those waiting (every instance, where the store can). */
  release(key: string, token: string): Promise<void>;
  /** Whether someone holds the lease on `key`. */
  held(key: string): Promise<boolean>;
  /**
   * Calls `listener` with each key whose lease is released on any instance (Redis pub/sub); absent
   * where releases are seen by polling only (workers sharing `cache.sqlite`).
   */
  subscribe?(listener: (key: string) => void): Promise<void>;
  close?(): Promise<void>;
}

/** Leases in this process's memory: for a gateway that is its only instance. */
export class MemoryLeases implements Leases {
  // Every release is this process's own, heard at once: polling only notices a lease expiring.
  readonly pollMs = 250;
  private readonly holders = new Map<string, { token: string; expires: number }>();

  async acquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    const holder = this.holders.get(key);
    if (holder && holder.expires > Date.now()) return false;
    this.holders.set(key, { token, expires: Date.now() + ttlMs });
    return true;
  }

  async renew(key: string, token: string, ttlMs: number): Promise<void> {
    const holder = this.holders.get(key);
    if (holder?.token === token) holder.expires = Date.now() + ttlMs;
  }

  async release(key: string, token: string): Promise<void> {
    if (this.holders.get(key)?.token === token) this.holders.delete(key);
  }

  async held(key: string): Promise<boolean> {
    const holder = this.holders.get(key);
    if (holder && holder.expires <= Date.now()) this.holders.delete(key);
    return holder !== undefined && holder.expires > Date.now();
  }
}

/**
 * Leases in `cache.sqlite`, for the workers of `GATEWAY_WORKERS` that share the file: a row per
 * held key, taken by an upsert that only overwrites an expired row. Times are wall-clock
 * milliseconds, the clock every worker shares.
 */
export class SqliteLeases implements Leases {
  // Another worker's release is not heard: its stored answer is found by looking.
  readonly pollMs = 20;
  private readonly sql: Record<'acquire' | 'renew' | 'release' | 'held', StatementSync>;

  constructor(database: DatabaseSync) {
    database.exec('CREATE TABLE IF NOT EXISTS cache_leases (key TEXT PRIMARY KEY, token TEXT NOT NULL, expires INTEGER NOT NULL)');
    this.sql = {
      acquire: database.prepare(
        'INSERT INTO cache_leases (key, token, expires) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET token = excluded.token, expires = excluded.expires WHERE cache_leases.expires <= ?4',
      ),
      renew: database.prepare('UPDATE cache_leases SET expires = ? WHERE key = ? AND token = ?'),
      release: database.prepare('DELETE FROM cache_leases WHERE key = ? AND token = ?'),
      held: database.prepare('SELECT 1 AS held FROM cache_leases WHERE key = ? AND expires > ?'),
    };
  }

  async acquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    return Number(this.sql.acquire.run(key, token, now + ttlMs, now).changes) > 0;
  }

  async renew(key: string, token: string, ttlMs: number): Promise<void> {
    this.sql.renew.run(Date.now() + ttlMs, key, token);
  }

  async release(key: string, token: string): Promise<void> {
    this.sql.release.run(key, token);
  }

  async held(key: string): Promise<boolean> {
    return this.sql.held.get(key, Date.now()) !== undefined;
  }
}
