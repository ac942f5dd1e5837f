import { EventEmitter } from 'node:events';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { KeyvStoreAdapter, StoredData } from 'keyv';

/** Evicting stops once the entries fit in this share of the cap, so that evictions come in batches. */
const EVICT_TO = 0.9;
/** Most entries deleted by one statement while evicting. */
const EVICT_BATCH = 256;
/** How long written values and reads' "last used" marks wait in memory before one transaction writes them all. */
const FLUSH_MS = 50;

/** A value written but not yet in the file. */
interface Pending {
  readonly text: string;
  readonly expires: number | null;
  readonly size: number;
  used: number;
}

/**
 * A keyv store adapter over `node:sqlite` for the response cache: each value's expiry (TTL) and
 * size are kept beside it, every read marks it used, and a write that takes the entries past
 * `maxBytes` evicts expired entries, then the least recently used, until they fit. Sizes are the
 * values' UTF-8 bytes; their total is kept in memory (read once when opened).
 *
 * Writes and reads' "last used" marks are kept in memory (where reads find them at once) and
 * written together in one transaction every {@link FLUSH_MS} ms, before any deletion, and on
 * `flush()` (close): a transaction per answer stored and an UPDATE per hit made both several times
 * dearer. A crash loses at most the last {@link FLUSH_MS} ms of writes. With `writeThrough` (several
 * processes on the file), a value is written by its `set`.
 */
export class SqliteLruStore extends EventEmitter implements KeyvStoreAdapter {
  readonly opts: { dialect: 'sqlite' } = { dialect: 'sqlite' };
  namespace?: string;
  private readonly sql: Record<'get' | 'touch' | 'size' | 'set' | 'delete' | 'clear' | 'expired' | 'leastUsed' | 'deletePrefix' | 'totals', StatementSync>;
  private bytes = 0;
  private entries = 0;
  /** The use counter: larger is more recent (a counter, not a clock, so that two uses never tie). */
  private tick = 0;
  private pending = new Map<string, Pending>();
  /** Reads of values already in the file, not yet written: key → its use counter. */
  private touched = new Map<string, number>();
  private flushTimer?: NodeJS.Timeout;

  constructor(
    private readonly database: DatabaseSync,
    private readonly options: {
      readonly maxBytes: number;
      readonly onEvict?: (count: number) => void;
      /**
       * Write each value at once (with the "last used" marks waiting), not after {@link FLUSH_MS}:
       * for processes sharing the file (the workers of `GATEWAY_WORKERS`), so that an answer
       * stored by one is read by every other as soon as `set` resolves, before its client has it.
       */
      readonly writeThrough?: boolean;
    },
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
      totals: database.prepare('SELECT COUNT(*) AS entries, COALESCE(SUM(size), 0) AS bytes, COALESCE(MAX(used), 0) AS used FROM cache_entries'),
    };
    this.count();
  }

  /** Bytes of the entries kept. */
  get size(): number {
    return this.bytes;
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    const pending = this.pending.get(key);
    const row = pending ? { value: pending.text, expires: pending.expires } : (this.sql.get.get(key) as { value: string; expires: number | null } | undefined);
    if (row === undefined) return undefined;
    if (row.expires !== null && row.expires <= Date.now()) {
      await this.delete(key);
      return undefined;
    }
    if (pending) pending.used = ++this.tick;
    else this.touched.set(key, ++this.tick);
    this.scheduleFlush();
    return row.value as StoredData<Value>;
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    const text = String(value);
    const size = Buffer.byteLength(text);
    const previous = this.pending.get(key)?.size ?? (this.sql.size.get(key) as { size: number } | undefined)?.size;
    this.pending.set(key, { text, expires: typeof ttl === 'number' && ttl > 0 ? Date.now() + ttl : null, size, used: ++this.tick });
    this.touched.delete(key);
    this.bytes += size - Number(previous ?? 0);
    if (previous === undefined) this.entries++;
    if (this.bytes > this.options.maxBytes) this.evict();
    else if (this.options.writeThrough) this.flush();
    else this.scheduleFlush();
    return true;
  }

  async delete(key: string): Promise<boolean> {
    this.flush();
    return this.removed(this.sql.delete.all(key)) > 0;
  }

  async clear(): Promise<void> {
    this.flush();
    this.sql.clear.run();
    this.bytes = 0;
    this.entries = 0;
  }

  /** Deletes every entry whose key starts with `prefix`; returns how many. */
  deletePrefix(prefix: string): number {
    this.flush();
    return this.removed(this.sql.deletePrefix.all(prefix, `${prefix}\uffff`));
  }

  /** Writes what waits in memory (values, and reads' "last used" marks), in one transaction. */
  flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if ((this.pending.size === 0 && this.touched.size === 0) || !this.database.isOpen) return;
    const { pending, touched } = this;
    this.pending = new Map();
    this.touched = new Map();
    try {
      this.database.exec('BEGIN');
      for (const [key, value] of pending) this.sql.set.run(key, value.text, value.expires, value.size, value.used);
      for (const [key, tick] of touched) this.sql.touch.run(tick, key);
      this.database.exec('COMMIT');
    } catch {
      // Not writable now (locked, disk full): those answers are not kept; the totals are the file's again.
      if (this.database.isTransaction) this.database.exec('ROLLBACK');
      this.count();
    }
  }

  private scheduleFlush(): void {
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS).unref();
  }

  /** Reads the entries' count, bytes and last use counter from the file. */
  private count(): void {
    const totals = this.sql.totals.get() as { entries: number; bytes: number; used: number };
    this.entries = Number(totals.entries);
    this.bytes = Number(totals.bytes);
    this.tick = Math.max(this.tick, Number(totals.used));
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
