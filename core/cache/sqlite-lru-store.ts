import { EventEmitter } from 'node:events';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { KeyvStoreAdapter, StoredData } from 'keyv';

/** Evicting stops once the entries fit in this share of the cap, so that evictions come in batches. */
const EVICT_TO = 0.9;
/** Most entries deleted by one statement while evicting. */
const EVICT_BATCH = 256;
/** How long reads' "last used" marks wait in memory before they are written, in one transaction. */
const TOUCH_FLUSH_MS = 1000;

/**
 * A keyv store adapter over `node:sqlite` for the response cache: each value's expiry (TTL) and
 * size are kept beside it, every read marks it used, and a write that takes the entries past
 * `maxBytes` evicts expired entries, then the least recently used, until they fit. Sizes are the
 * values' UTF-8 bytes; their total is kept in memory (read once when opened). A read's "last used"
 * mark is kept in memory and written with the others every second (and before evicting): an
 * UPDATE per read made a hit ~5 times dearer.
 */
export class SqliteLruStore extends EventEmitter implements KeyvStoreAdapter {
  readonly opts: { dialect: 'sqlite' } = { dialect: 'sqlite' };
  namespace?: string;
  private readonly sql: Record<'get' | 'touch' | 'size' | 'set' | 'delete' | 'clear' | 'expired' | 'leastUsed' | 'deletePrefix', StatementSync>;
  private bytes: number;
  private entries: number;
  /** The use counter: larger is more recent (a counter, not a clock, so that two uses never tie). */
  private tick: number;
  /** Reads not yet written: key → its use counter. */
  private touched = new Map<string, number>();
  private touchTimer?: NodeJS.Timeout;

  constructor(
    private readonly database: DatabaseSync,
    private readonly options: { readonly maxBytes: number; readonly onEvict?: (count: number) => void },
  ) {
    super();
    database.exec(`
      CREATE TABLE IF NOT EXISTS cache_entries (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires INTEGER, size INTEGER NOT NULL, used INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS cache_entries_used ON cache_entries (used);
    `);
    this.sql = {
      get: database.prepare('SELECT value, expires FROM cache_entries WHERE key = ?'),
      touch: database.prepare('UPDATE cache_entries SET used = ? WHERE key = ?'),
      size: database.prepare('SELECT size FROM cache_entries WHERE key = ?'),
      set: database.prepare(
        'INSERT INTO cache_entries (key, value, expires, size, used) VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires = excluded.expires, size = excluded.size, used = excluded.used',
      ),
      delete: database.prepare('DELETE FROM cache_entries WHERE key = ? RETURNING size'),
      clear: database.prepare('DELETE FROM cache_entries'),
      expired: database.prepare('DELETE FROM cache_entries WHERE expires IS NOT NULL AND expires <= ? RETURNING size'),
      leastUsed: database.prepare('DELETE FROM cache_entries WHERE key IN (SELECT key FROM cache_entries ORDER BY used LIMIT ?) RETURNING size'),
      // Keys under a prefix form one range of the primary key's index.
      deletePrefix: database.prepare('DELETE FROM cache_entries WHERE key >= ? AND key < ? RETURNING size'),
    };
    const totals = database.prepare('SELECT COUNT(*) AS entries, COALESCE(SUM(size), 0) AS bytes, COALESCE(MAX(used), 0) AS used FROM cache_entries').get() as {
      entries: number;
      bytes: number;
      used: number;
    };
    this.entries = Number(totals.entries);
    this.bytes = Number(totals.bytes);
    this.tick = Number(totals.used);
  }

  /** Bytes of the entries kept. */
  get size(): number {
    return this.bytes;
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    const row = this.sql.get.get(key) as { value: string; expires: number | null } | undefined;
    if (row === undefined) return undefined;
    if (row.expires !== null && row.expires <= Date.now()) {
      await this.delete(key);
      return undefined;
    }
    this.touched.set(key, ++this.tick);
    this.touchTimer ??= setTimeout(() => this.flush(), TOUCH_FLUSH_MS).unref();
    return row.value as StoredData<Value>;
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    const text = String(value);
    const size = Buffer.byteLength(text);
    const previous = this.sql.size.get(key) as { size: number } | undefined;
    this.sql.set.run(key, text, typeof ttl === 'number' && ttl > 0 ? Date.now() + ttl : null, size, ++this.tick);
    this.touched.delete(key);
    this.bytes += size - Number(previous?.size ?? 0);
    if (previous === undefined) this.entries++;
    if (this.bytes > this.options.maxBytes) this.evict();
    return true;
  }

  async delete(key: string): Promise<boolean> {
    return this.removed(this.sql.delete.all(key)) > 0;
  }

  async clear(): Promise<void> {
    this.sql.clear.run();
    this.bytes = 0;
    this.entries = 0;
  }

  /** Writes the reads' "last used" marks kept in memory (a gone entry's mark changes nothing). */
  flush(): void {
    clearTimeout(this.touchTimer);
    this.touchTimer = undefined;
    if (this.touched.size === 0 || !this.database.isOpen) return;
    const touched = this.touched;
    this.touched = new Map();
    this.database.exec('BEGIN');
    try {
      for (const [key, tick] of touched) this.sql.touch.run(tick, key);
      this.database.exec('COMMIT');
    } catch {
      // Not writable now (locked, disk full): the marks only order evictions; drop them.
      if (this.database.isTransaction) this.database.exec('ROLLBACK');
    }
  }

  /** Deletes every entry whose key starts with `prefix`; returns how many. */
  deletePrefix(prefix: string): number {
    return this.removed(this.sql.deletePrefix.all(prefix, `${prefix}\uffff`));
  }

  private removed(rows: unknown[]): number {
    for (const row of rows) this.bytes -= Number((row as { size: number }).size);
    this.entries -= rows.length;
    return rows.length;
  }

  /** Expired entries first, then the least recently used, until the rest fits in {@link EVICT_TO} of the cap. */
  private evict(): void {
    const target = this.options.maxBytes * EVICT_TO;
    this.flush();
    let evicted = this.removed(this.sql.expired.all(Date.now()));
    while (this.bytes > target && this.entries > 0) {
      // As many of the least used as, at the average size, make room: one statement for most evictions.
      const average = this.bytes / this.entries;
      const batch = Math.min(EVICT_BATCH, Math.max(1, Math.ceil((this.bytes - target) / average)));
      const removed = this.removed(this.sql.leastUsed.all(batch));
      if (removed === 0) break;
      evicted += removed;
    }
    if (evicted > 0) this.options.onEvict?.(evicted);
  }
}
