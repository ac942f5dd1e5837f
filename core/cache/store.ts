import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import Keyv from 'keyv';
import type { Usage } from '../spec/unified.js';
import { type Leases, MemoryLeases, SqliteLeases } from './leases.js';
import { SqliteLruStore } from './sqlite-lru-store.js';

/** One stored answer: what a hit serves, and what it needs to say what it saved. */
export interface CacheEntry {
  /** When it was stored, on the gateway's clock (ms). */
  readonly storedAt: number;
  /** The provider and model that gave it, and its usage: a hit saves that usage's price. */
  readonly provider: string;
  readonly model?: string;
  /** The route target that gave it (a routed request's `x-gateway-route-target`). */
  readonly target?: string;
  readonly usage?: Usage;
  /** The operation's whole answer, as mapped (before output guardrails). */
  readonly answer: unknown;
}

/** One vector of the semantic index: the embedded text of a stored answer's request. */
export interface VectorRecord {
  /** Its position in the namespace's log (later records have larger ids). */
  readonly id: string;
  /** The model, parameters and upstream a hit must share (a digest). */
  readonly partition: string;
  /** The key of the stored answer. */
  readonly ref: string;
  /** What must be equal besides the meaning: the numbers and negations of the text (`near-miss.ts`). */
  readonly guard: string;
  /** Unit length. */
  readonly vector: Float32Array;
}

/**
 * Where the semantic index of each namespace is kept, as an append-only log bounded to its last
 * `maxEntries` records: each instance keeps the index in memory and reads what was added since.
 */
export interface VectorLog {
  append(namespace: string, record: Omit<VectorRecord, 'id'>, maxEntries: number): Promise<void>;
  /** The records after `after` (an id read before; undefined: every record kept), oldest first. */
  since(namespace: string, after: string | undefined): Promise<VectorRecord[]>;
  /** Forgets a namespace's records (every namespace's when undefined). */
  clear(namespace?: string): Promise<void>;
}

/**
 * The response cache's storage: answers by key through keyv (with their TTL in the store), and the
 * semantic index's log. Embedded: `<dataDir>/cache.sqlite`, size-capped (least recently used
 * evicted). Redis: shared by every instance (`REDIS_URL`), capped by Redis's own `maxmemory`.
 */
export interface CacheStore {
  readonly kind: 'embedded' | 'redis';
  /** Entries by key; values are entries' JSON text, read back parsed. */
  readonly entries: Keyv<CacheEntry>;
  readonly vectors: VectorLog;
  /** Leases on keys, for one upstream call per set of identical concurrent misses (`single-flight.ts`). */
  readonly leases: Leases;
  /** Deletes every entry of a namespace (its keys start with `<namespace>/`); returns how many. */
  deleteNamespace(namespace: string): Promise<number>;
  /** Deletes every entry; returns how many. */
  clear(): Promise<number>;
  close(): Promise<void>;
}

/**
 * keyv options that keep an entry's JSON text as it is in the stored record (no second escaping):
 * `set` is given the text, `get` returns it parsed.
 */
export const RAW_JSON = {
  serialize: (data: { value?: unknown; expires?: number | null }): string => `{"expires":${data.expires ?? null},"value":${String(data.value)}}`,
  deserialize: (text: string) => JSON.parse(text) as { value: CacheEntry; expires?: number | null },
};

/** The embedded store: one SQLite file for entries (LRU, size-capped) and vectors. */
export class SqliteCacheStore implements CacheStore {
  readonly kind = 'embedded' as const;
  readonly entries: Keyv<CacheEntry>;
  readonly vectors: VectorLog;
  readonly leases: Leases;
  private readonly database: DatabaseSync;
  private readonly lru: SqliteLruStore;

  constructor(dataDir: string, options: { maxBytes: number; onEvict?: (count: number) => void; writeThrough?: boolean }) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, 'cache.sqlite');
    // The busy timeout first: workers opening the file together wait for each other's switch to WAL.
    this.database = new DatabaseSync(file, { timeout: 1000 });
    chmodSync(file, 0o600); // answers may hold what callers sent: readable by the gateway's user only
    this.database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
    this.lru = new SqliteLruStore(this.database, options);
    this.entries = new Keyv<CacheEntry>({ store: this.lru, useKeyPrefix: false, throwOnErrors: true, ...RAW_JSON } as never);
    this.vectors = new SqliteVectorLog(this.database);
    // Workers sharing the file lease through it; a lone process keeps its leases in memory (no write per miss).
    this.leases = options.writeThrough ? new SqliteLeases(this.database) : new MemoryLeases();
  }

  /** Bytes of the entries kept. */
  get bytes(): number {
    return this.lru.size;
  }

  async deleteNamespace(namespace: string): Promise<number> {
    return this.lru.deletePrefix(`${namespace}/`);
  }

  async clear(): Promise<number> {
    return this.lru.deletePrefix('');
  }

  async close(): Promise<void> {
    this.lru.flush();
    if (this.database.isOpen) this.database.close();
  }
}

class SqliteVectorLog implements VectorLog {
  private readonly sql: Record<'append' | 'trim' | 'since' | 'clear' | 'clearAll', StatementSync>;

  constructor(database: DatabaseSync) {
    database.exec(`
      CREATE TABLE IF NOT EXISTS cache_vectors (seq INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, partition TEXT NOT NULL, ref TEXT NOT NULL, guard TEXT NOT NULL, vector BLOB NOT NULL);
      CREATE INDEX IF NOT EXISTS cache_vectors_namespace ON cache_vectors (namespace, seq);
    `);
    this.sql = {
      append: database.prepare('INSERT INTO cache_vectors (namespace, partition, ref, guard, vector) VALUES (?, ?, ?, ?, ?)'),
      trim: database.prepare('DELETE FROM cache_vectors WHERE namespace = ?1 AND seq <= (SELECT seq FROM cache_vectors WHERE namespace = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)'),
      since: database.prepare('SELECT seq, partition, ref, guard, vector FROM cache_vectors WHERE namespace = ? AND seq > ? ORDER BY seq'),
      clear: database.prepare('DELETE FROM cache_vectors WHERE namespace = ?'),
      clearAll: database.prepare('DELETE FROM cache_vectors'),
    };
  }

  async append(namespace: string, record: Omit<VectorRecord, 'id'>, maxEntries: number): Promise<void> {
    const { partition, ref, guard, vector } = record;
    this.sql.append.run(namespace, partition, ref, guard, new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength));
    this.sql.trim.run(namespace, maxEntries);
  }

  async since(namespace: string, after: string | undefined): Promise<VectorRecord[]> {
    const rows = this.sql.since.all(namespace, after === undefined ? 0 : Number(after)) as Array<{ seq: number; partition: string; ref: string; guard: string; vector: Uint8Array }>;
    return rows.map((row) => ({ id: String(row.seq), partition: row.partition, ref: row.ref, guard: row.guard, vector: floats(row.vector) }));
  }

  async clear(namespace?: string): Promise<void> {
    if (namespace === undefined) this.sql.clearAll.run();
    else this.sql.clear.run(namespace);
  }
}

/** A copy of `bytes` as float32 values (copied: the source need not be aligned). */
export function floats(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

/**
 * The embedded store under `dataDir`, or Redis when `redisUrl` is set (its client is imported only
 * then, as the vault's is). `writeThrough`: the embedded file is shared by several processes (the
 * workers of `GATEWAY_WORKERS`), so each answer is written when stored, not batched.
 */
export async function openCacheStore(options: { dataDir: string; redisUrl?: string; redisPrefix: string; maxBytes: number; onEvict?: (count: number) => void; writeThrough?: boolean }): Promise<CacheStore> {
  if (options.redisUrl) {
    const { RedisCacheStore } = await import('./redis-store.js');
    return RedisCacheStore.connect(options.redisUrl, options.redisPrefix);
  }
  return new SqliteCacheStore(options.dataDir, options);
}
