import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { LogRecord } from './record.js';
import { SCALAR_FIELDS } from './record.js';
import {
  emptyCell,
  groupExpression,
  listWhere,
  type LogPage,
  type LogQuery,
  type LogStore,
  percentile,
  statusClassOf,
  timeMsOf,
  type UsageCell,
  type UsageQuery,
} from './store.js';

export interface SqliteRetention {
  /** Rows older than this are deleted (0 = keep forever). */
  maxAgeMs: number;
  /** The database is kept under this size by deleting the oldest rows (0 = no limit). */
  maxBytes: number;
}

const SCHEMA_VERSION = 4;
/** The log holds request bodies and caller identities: readable by the gateway's user only. */
const FILE_MODE = 0o600;

const COLUMNS = [...SCALAR_FIELDS, 'time_ms', 'status_class', 'metadata', 'guardrails', 'routing', 'dropped_fields'];

const SCHEMA = `
CREATE TABLE IF NOT EXISTS logs (
  id TEXT PRIMARY KEY, time_ms INTEGER NOT NULL, trace_id TEXT NOT NULL, caller_type TEXT, key_id TEXT, key_name TEXT,
  provider TEXT, model TEXT, operation TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, status INTEGER NOT NULL,
  status_class INTEGER NOT NULL, outcome TEXT NOT NULL, error_type TEXT, error_code TEXT, error_message TEXT,
  streaming INTEGER NOT NULL, latency_ms REAL NOT NULL, gateway_ms REAL NOT NULL, upstream_ms REAL, ttft_ms REAL,
  prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER, reasoning_tokens INTEGER, total_tokens INTEGER,
  cost_usd REAL, metadata TEXT NOT NULL, guardrails TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS logs_time ON logs (time_ms, id);
CREATE INDEX IF NOT EXISTS logs_trace ON logs (trace_id);
CREATE INDEX IF NOT EXISTS logs_model ON logs (model, time_ms, id);
CREATE INDEX IF NOT EXISTS logs_provider ON logs (provider, time_ms, id);
CREATE INDEX IF NOT EXISTS logs_key ON logs (key_id, time_ms, id);
CREATE INDEX IF NOT EXISTS logs_status ON logs (status_class, time_ms, id);
CREATE TABLE IF NOT EXISTS log_bodies (id TEXT PRIMARY KEY, time_ms INTEGER NOT NULL, request_body TEXT, response_body TEXT);
CREATE INDEX IF NOT EXISTS log_bodies_time ON log_bodies (time_ms);
CREATE TABLE IF NOT EXISTS log_metadata (log_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, time_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS log_metadata_pair ON log_metadata (key, value, time_ms, log_id);
CREATE INDEX IF NOT EXISTS log_metadata_key ON log_metadata (key, time_ms, log_id);
CREATE INDEX IF NOT EXISTS log_metadata_time ON log_metadata (time_ms);
`;

type Row = Record<string, SQLInputValue>;

/** Maps a stored row back to the API's record shape. */
function fromRow(row: Row): LogRecord {
  // id and time first, as the API documents them.
  const record: Record<string, unknown> = { id: row.id, time: new Date(Number(row.time_ms)).toISOString() };
  for (const field of SCALAR_FIELDS) record[field] = row[field] ?? null;
  record.streaming = row.streaming === 1;
  record.metadata = JSON.parse(String(row.metadata));
  record.guardrails = JSON.parse(String(row.guardrails));
  if (row.routing !== null && row.routing !== undefined) record.routing = JSON.parse(String(row.routing));
  if (row.dropped_fields !== null && row.dropped_fields !== undefined) record.dropped_fields = JSON.parse(String(row.dropped_fields));
  if ('request_body' in row) {
    record.request_body = row.request_body ?? null;
    record.response_body = row.response_body ?? null;
  }
  return record as unknown as LogRecord;
}

/**
 * The embedded log store: one SQLite file (WAL, synchronous=NORMAL) through the built-in
 * `node:sqlite`. Batches are inserted in one transaction. Retention deletes by age and keeps the
 * file under a size cap (auto_vacuum=INCREMENTAL returns freed pages to the disk). A file that
 * cannot be opened as a database is moved aside and a new one started, so a broken log database
 * never stops the gateway from starting.
 */
export class SqliteLogStore implements LogStore {
  readonly kind = 'sqlite';
  private database?: DatabaseSync;
  private insertLog?: StatementSync;
  private insertBody?: StatementSync;
  private insertMetadata?: StatementSync;

  constructor(
    private readonly path: string,
    private readonly retention: SqliteRetention = { maxAgeMs: 0, maxBytes: 0 },
    private readonly onWarning: (message: string) => void = () => {},
  ) {}

  private get db(): DatabaseSync {
    if (!this.database) throw new Error('SQLite log store is not open');
    return this.database;
  }

  /**
   * Creates the database file owner-only (0600) before SQLite opens it, and narrows an existing
   * one: SQLite gives the `-wal` and `-shm` files the database file's mode. Those two, when left by
   * an earlier run, are narrowed too.
   */
  private restrictFiles(): void {
    closeSync(openSync(this.path, 'a', FILE_MODE));
    for (const path of [this.path, `${this.path}-wal`, `${this.path}-shm`, `${this.path}-journal`]) {
      if (existsSync(path)) chmodSync(path, FILE_MODE);
    }
  }

  private open(): DatabaseSync {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    this.restrictFiles();
    const database = new DatabaseSync(this.path);
    try {
      // busy_timeout 0: a locked database fails the batch at once (it then spills) rather than
      // blocking the event loop.
      // cache_size -65536: 64 MiB of page cache (the default 2 MiB thrashes once the indexes outgrow it).
      database.exec(
        'PRAGMA busy_timeout = 0; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;',
      );
      const version = Number((database.prepare('PRAGMA user_version').get() as Row).user_version);
      if (version < SCHEMA_VERSION) {
        // Version 2 adds the routed requests' route and attempts (JSON, null on the plain path).
        const routing = version < 2 ? 'ALTER TABLE logs ADD COLUMN routing TEXT;' : '';
        // Version 3 adds what the response cache did and saved.
        const cache = version < 3 ? 'ALTER TABLE logs ADD COLUMN cache_status TEXT; ALTER TABLE logs ADD COLUMN cache_saved_usd REAL;' : '';
        // Version 4 adds the request fields a protocol translation dropped (JSON, null when none).
        const dropped = version < 4 ? 'ALTER TABLE logs ADD COLUMN dropped_fields TEXT;' : '';
        database.exec(`BEGIN; ${version < 1 ? SCHEMA : ''} ${routing} ${cache} ${dropped} PRAGMA user_version = ${SCHEMA_VERSION}; COMMIT;`);
      }
      return database;
    } catch (error) {
      database.close();
      throw error;
    }
  }

  async init(): Promise<void> {
    if (this.database) return;
    try {
      this.database = this.open();
    } catch (error) {
      const code = (error as { errcode?: number }).errcode;
      // SQLITE_CORRUPT (11) or SQLITE_NOTADB (26): keep the file for inspection, start afresh.
      if ((code === 11 || code === 26) && existsSync(this.path)) {
        const aside = `${this.path}.broken-${Date.now()}`;
        renameSync(this.path, aside);
        this.onWarning(`log database ${this.path} could not be opened (${(error as Error).message}); moved to ${aside}, starting a new one`);
        this.database = this.open();
      } else throw error;
    }
    const placeholders = COLUMNS.map(() => '?').join(', ');
    this.insertLog = this.db.prepare(`INSERT OR IGNORE INTO logs (${COLUMNS.join(', ')}) VALUES (${placeholders})`);
    this.insertBody = this.db.prepare('INSERT OR IGNORE INTO log_bodies (id, time_ms, request_body, response_body) VALUES (?, ?, ?, ?)');
    this.insertMetadata = this.db.prepare('INSERT INTO log_metadata (log_id, key, value, time_ms) VALUES (?, ?, ?, ?)');
    await this.prune();
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    const db = this.db;
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const record of records) {
        const timeMs = timeMsOf(record);
        const values: SQLInputValue[] = SCALAR_FIELDS.map((field) => {
          const value = record[field];
          return typeof value === 'boolean' ? (value ? 1 : 0) : (value as SQLInputValue);
        });
        values.push(timeMs, statusClassOf(record.status), JSON.stringify(record.metadata), JSON.stringify(record.guardrails), record.routing ? JSON.stringify(record.routing) : null, record.dropped_fields ? JSON.stringify(record.dropped_fields) : null);
        const inserted = this.insertLog!.run(...values);
        if (Number(inserted.changes) === 0) continue; // already stored (a replayed batch)
        if (record.request_body !== null || record.response_body !== null) {
          this.insertBody!.run(record.id, timeMs, record.request_body, record.response_body);
        }
        for (const [key, value] of Object.entries(record.metadata)) this.insertMetadata!.run(record.id, key, value, timeMs);
      }
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  async list(query: LogQuery): Promise<LogPage> {
    let sql: string;
    let params: unknown[];
    if (query.metadataKey !== undefined) {
      // Driven by the metadata index, which is ordered by time: a rare pair costs as little as a
      // common one, and no sort is needed.
      const built = listWhere(query, (index) => `?${index}`, undefined, { prefix: 'logs.', time: 'm.time_ms', id: 'm.log_id' });
      const pair = [`m.key = ${built.param(query.metadataKey)}`];
      if (query.metadataValue !== undefined) pair.push(`m.value = ${built.param(query.metadataValue)}`);
      const where = built.where ? `${built.where} AND ${pair.join(' AND ')}` : `WHERE ${pair.join(' AND ')}`;
      sql = `SELECT logs.* FROM log_metadata AS m JOIN logs ON logs.id = m.log_id ${where} ORDER BY m.time_ms DESC, m.log_id DESC LIMIT ${query.limit + 1}`;
      params = built.params;
    } else {
      const built = listWhere(query, (index) => `?${index}`, undefined);
      sql = `SELECT * FROM logs ${built.where} ORDER BY time_ms DESC, id DESC LIMIT ${query.limit + 1}`;
      params = built.params;
    }
    const rows = this.db.prepare(sql).all(...(params as SQLInputValue[])) as Row[];
    const more = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      data: page.map(fromRow),
      nextCursor: more && last ? { timeMs: Number(last.time_ms), id: String(last.id) } : null,
    };
  }

  async get(id: string): Promise<LogRecord | undefined> {
    const row = this.db
      .prepare('SELECT logs.*, log_bodies.request_body, log_bodies.response_body FROM logs LEFT JOIN log_bodies USING (id) WHERE logs.id = ?')
      .get(id) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  async usage(query: UsageQuery): Promise<UsageCell[]> {
    const group = groupExpression(query.groupBy);
    // One pass over the range: SQLite has no percentile aggregate, so the latencies are read
    // anyway, and summing in the same loop saves a second scan.
    const statement = this.db.prepare(
      `SELECT ${group}, CAST((time_ms - ?1) / ?2 AS INTEGER), status, latency_ms, prompt_tokens, completion_tokens, cost_usd, cache_status, cache_saved_usd
       FROM logs WHERE time_ms >= ?1 AND time_ms < ?3`,
    );
    statement.setReturnArrays(true); // arrays, not objects: measurably cheaper per row
    const rows = statement.iterate(query.from, query.bucketMs, query.to) as Iterable<SQLInputValue[]>;
    const cells = new Map<string, UsageCell & { latencies: number[] }>();
    for (const [groupName, bucketIndex, status, latency, prompt, completion, cost, cacheStatus, saved] of rows) {
      const bucket = query.from + Number(bucketIndex) * query.bucketMs;
      const key = `${groupName}\u0000${bucket}`;
      let cell = cells.get(key);
      if (!cell) {
        cell = { ...emptyCell(String(groupName), bucket), latencies: [] };
        cells.set(key, cell);
      }
      cell.requests++;
      if (Number(status) >= 400) cell.errors++;
      cell.latencies.push(Number(latency));
      cell.promptTokens += Number(prompt ?? 0);
      cell.completionTokens += Number(completion ?? 0);
      cell.costUsd += Number(cost ?? 0);
      if (cacheStatus === 'MISS') cell.cacheMisses++;
      else if (cacheStatus === 'HIT' || cacheStatus === 'SEMANTIC-HIT') {
        cell.cacheHits++;
        cell.savedUsd += Number(saved ?? 0);
      }
    }
    return [...cells.values()].map(({ latencies, ...cell }) => {
      latencies.sort((a, b) => a - b);
      return { ...cell, p50Ms: percentile(latencies, 0.5), p95Ms: percentile(latencies, 0.95) };
    });
  }

  async count(): Promise<number> {
    return Number((this.db.prepare('SELECT COUNT(*) AS n FROM logs').get() as Row).n);
  }

  /** Bytes of the database in use (pages not on the free list). */
  usedBytes(): number {
    const pages = Number((this.db.prepare('PRAGMA page_count').get() as Row).page_count);
    const free = Number((this.db.prepare('PRAGMA freelist_count').get() as Row).freelist_count);
    const size = Number((this.db.prepare('PRAGMA page_size').get() as Row).page_size);
    return (pages - free) * size;
  }

  private deleteBefore(timeMs: number): number {
    const db = this.db;
    db.exec('BEGIN IMMEDIATE');
    try {
      const deleted = Number(db.prepare('DELETE FROM logs WHERE time_ms < ?').run(timeMs).changes);
      db.prepare('DELETE FROM log_bodies WHERE time_ms < ?').run(timeMs);
      db.prepare('DELETE FROM log_metadata WHERE time_ms < ?').run(timeMs);
      db.exec('COMMIT');
      return deleted;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  async prune(now = Date.now()): Promise<number> {
    let deleted = 0;
    if (this.retention.maxAgeMs > 0) deleted += this.deleteBefore(now - this.retention.maxAgeMs);
    if (this.retention.maxBytes > 0) {
      // Delete the oldest tenth of the rows at a time until the data fits in 90% of the cap.
      while (this.usedBytes() > this.retention.maxBytes * 0.9) {
        const rows = await this.count();
        if (rows === 0) break;
        const cut = this.db.prepare('SELECT time_ms FROM logs ORDER BY time_ms LIMIT 1 OFFSET ?').get(Math.floor(rows / 10)) as Row | undefined;
        const removed = this.deleteBefore(cut ? Number(cut.time_ms) + (rows < 10 ? 1 : 0) : Number.MAX_SAFE_INTEGER);
        deleted += removed;
        if (removed === 0) break;
      }
    }
    if (deleted > 0) {
      this.db.exec('PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE);');
    }
    return deleted;
  }

  async close(): Promise<void> {
    if (this.database?.isOpen) this.database.close();
    this.database = undefined;
  }
}
