import { existsSync, renameSync } from 'node:fs';
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { LogRecord } from './record.js';
import { SCALAR_FIELDS } from './record.js';
import { prunePass, rowCount, type SqliteRetention, usedBytes } from './sqlite-retention.js';
import { COLUMNS, fromRow, openLogDatabase, type Row } from './sqlite-schema.js';
import { isCommonSearch, searchCondition, SearchIndexer } from './sqlite-search.js';
import { usageCells, usageTotalCells } from './sqlite-usage.js';
import {
  listWhere,
  type LogBodiesRow,
  type LogPage,
  type LogQuery,
  type LogStore,
  searchTerms,
  statusClassOf,
  timeMsOf,
  type UsageCell,
  type UsageQuery,
  countVerdicts,
  type VerdictCounts,
  type VerdictQuery,
  type UsageTotalsQuery,
} from './store.js';

export type { SqliteRetention } from './sqlite-retention.js';
export { REBUILD_SEARCH } from './sqlite-search.js';

// The store's parts: its tables and migrations (./sqlite-schema.ts), the body search index
// (./sqlite-search.ts), retention (./sqlite-retention.ts) and the usage aggregations (./sqlite-usage.ts).

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
  private replaceLog?: StatementSync;
  private deleteMetadata?: StatementSync;
  /** The body search index's indexer, when search is on and the store is open. */
  private indexer?: SearchIndexer;
  /** The retention pass in progress ({@link SqliteLogStore.prune}). */
  private pruning?: Promise<number>;

  constructor(
    private readonly path: string,
    private readonly retention: SqliteRetention = { maxAgeMs: 0, maxBytes: 0 },
    private readonly onWarning: (message: string) => void = () => {},
    /** Index the bodies for search (`logs.search`). */
    private readonly search = true,
  ) {}

  get searchable(): boolean {
    return this.search;
  }

  private get db(): DatabaseSync {
    if (!this.database) throw new Error('SQLite log store is not open');
    return this.database;
  }

  async init(): Promise<void> {
    if (this.database) return;
    try {
      this.database = openLogDatabase(this.path, this.search);
    } catch (error) {
      const code = (error as { errcode?: number }).errcode;
      // SQLITE_CORRUPT (11) or SQLITE_NOTADB (26): keep the file for inspection, start afresh.
      if ((code === 11 || code === 26) && existsSync(this.path)) {
        const aside = `${this.path}.broken-${Date.now()}`;
        renameSync(this.path, aside);
        this.onWarning(`log database ${this.path} could not be opened (${(error as Error).message}); moved to ${aside}, starting a new one`);
        this.database = openLogDatabase(this.path, this.search);
      } else throw error;
    }
    const placeholders = COLUMNS.map(() => '?').join(', ');
    this.insertLog = this.db.prepare(`INSERT OR IGNORE INTO logs (${COLUMNS.join(', ')}) VALUES (${placeholders})`);
    this.insertBody = this.db.prepare('INSERT OR IGNORE INTO log_bodies (id, time_ms, request_body, response_body) VALUES (?, ?, ?, ?)');
    this.insertMetadata = this.db.prepare('INSERT INTO log_metadata (log_id, key, value, time_ms) VALUES (?, ?, ?, ?)');
    // A later state of a row (`replaces`): every column but the id, unless the stored row is a later one still.
    const updates = COLUMNS.filter((column) => column !== 'id').map((column) => `${column} = excluded.${column}`).join(', ');
    this.replaceLog = this.db.prepare(`INSERT INTO logs (${COLUMNS.join(', ')}) VALUES (${placeholders}) ON CONFLICT (id) DO UPDATE SET ${updates} WHERE excluded.latency_ms >= logs.latency_ms`);
    // By its time first: the metadata's time index finds the row's pairs (a row's time never changes).
    this.deleteMetadata = this.db.prepare('DELETE FROM log_metadata WHERE time_ms = ? AND log_id = ?');
    if (this.search) {
      this.indexer = new SearchIndexer(this.db, this.onWarning);
      // Bodies an earlier run stored and did not index yet.
      this.indexer.unindexed = 1;
      this.indexer.schedule();
    }
    await this.prune();
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    const db = this.db;
    const indexer = this.indexer;
    const unindexedBefore = indexer?.unindexed ?? 0;
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const record of records) {
        const timeMs = timeMsOf(record);
        const values: SQLInputValue[] = SCALAR_FIELDS.map((field) => {
          const value = record[field];
          return typeof value === 'boolean' ? (value ? 1 : 0) : (value as SQLInputValue);
        });
        values.push(timeMs, statusClassOf(record.status), JSON.stringify(record.metadata), JSON.stringify(record.guardrails), record.routing ? JSON.stringify(record.routing) : null, record.dropped_fields ? JSON.stringify(record.dropped_fields) : null);
        const inserted = (record.replaces ? this.replaceLog! : this.insertLog!).run(...values);
        if (Number(inserted.changes) === 0) continue; // already stored (a replayed batch), or a later state of it
        if (record.replaces) this.deleteMetadata!.run(timeMs, record.id);
        if (record.request_body !== null || record.response_body !== null) {
          const body = this.insertBody!.run(record.id, timeMs, record.request_body, record.response_body);
          if (indexer && Number(body.changes) > 0 && indexer.unindexed++ === unindexedBefore) indexer.keepBehind(Number(body.lastInsertRowid));
        }
        for (const [key, value] of Object.entries(record.metadata)) this.insertMetadata!.run(record.id, key, value, timeMs);
      }
      db.exec('COMMIT');
    } catch (error) {
      if (indexer) indexer.unindexed = unindexedBefore;
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
    indexer?.schedule();
  }

  /** Whether a search's words are common ones (see `searchCondition`), once every stored body is indexed. */
  private commonSearch(query: LogQuery): boolean {
    if (query.search === undefined) return false;
    if (!this.search) throw new Error('Body search is off for this log store (logs.search).');
    // With another process writing the file (busy), the search sees what is indexed so far.
    this.indexer?.indexBehind();
    return isCommonSearch(this.db, searchTerms(query.search));
  }

  async list(query: LogQuery): Promise<LogPage> {
    const search = searchCondition(this.commonSearch(query));
    let sql: string;
    let params: unknown[];
    if (query.metadataKey !== undefined) {
      // Driven by the metadata index, which is ordered by time: a rare pair costs as little as a
      // common one, and no sort is needed.
      const built = listWhere(query, (index) => `?${index}`, undefined, { prefix: 'logs.', time: 'm.time_ms', id: 'm.log_id' }, search);
      const pair = [`m.key = ${built.param(query.metadataKey)}`];
      if (query.metadataValue !== undefined) pair.push(`m.value = ${built.param(query.metadataValue)}`);
      const where = built.where ? `${built.where} AND ${pair.join(' AND ')}` : `WHERE ${pair.join(' AND ')}`;
      sql = `SELECT logs.* FROM log_metadata AS m JOIN logs ON logs.id = m.log_id ${where} ORDER BY m.time_ms DESC, m.log_id DESC LIMIT ${query.limit + 1}`;
      params = built.params;
    } else {
      const built = listWhere(query, (index) => `?${index}`, undefined, undefined, search);
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

  async bodies(ids: readonly string[]): Promise<LogBodiesRow[]> {
    if (ids.length === 0) return [];
    const rows = this.db.prepare('SELECT id, request_body, response_body FROM log_bodies WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as Row[];
    return rows.map((row) => ({ id: String(row.id), request_body: (row.request_body as string | null) ?? null, response_body: (row.response_body as string | null) ?? null }));
  }

  async usage(query: UsageQuery): Promise<UsageCell[]> {
    return usageCells(this.db, query);
  }

  async usageTotals(query: UsageTotalsQuery): Promise<UsageCell[][]> {
    return usageTotalCells(this.db, query);
  }

  async verdicts(query: VerdictQuery): Promise<VerdictCounts> {
    // One pass over the window through the time index, counted here: JSON.parse of each row's
    // verdicts is several times cheaper than SQLite's json_each and json_extract on them.
    const statement = this.db.prepare(`SELECT guardrails FROM logs WHERE time_ms >= ? AND time_ms < ? AND guardrails <> '[]'`);
    statement.setReturnArrays(true);
    return countVerdicts((statement.iterate(query.from, query.to) as Iterable<SQLInputValue[]>), (row) => JSON.parse(String(row[0])));
  }

  async count(): Promise<number> {
    return rowCount(this.db);
  }

  /** Bytes of the database in use (pages not on the free list). */
  usedBytes(): number {
    return usedBytes(this.db);
  }

  /**
   * Applies retention: rows older than `maxAgeMs`, then the oldest rows (a tenth of them at most
   * per step) until the data fits in 90% of `maxBytes`; then hands the freed pages back to the file
   * system and truncates the WAL. The work goes in bounded steps ({@link PRUNE_CHUNK_ROWS} rows,
   * {@link VACUUM_STEP_PAGES} pages) with a turn of the event loop between them, so the inserts that
   * arrive meanwhile are written in between (one transaction for the whole pass held the log writer for seconds once a large log
   * reached its cap, and the entries waiting for it piled up in the request thread). A pass asked
   * for while one runs joins it; a store closed meanwhile ends it.
   */
  prune(now = Date.now()): Promise<number> {
    this.pruning ??= prunePass({ db: () => this.db, isOpen: () => this.database?.isOpen === true }, this.retention, now).finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  async close(): Promise<void> {
    this.indexer?.close();
    this.indexer = undefined;
    if (this.database?.isOpen) this.database.close();
    this.database = undefined;
  }
}
