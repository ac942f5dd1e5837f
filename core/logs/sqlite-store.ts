import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { LogRecord } from './record.js';
import { SCALAR_FIELDS } from './record.js';
import {
  emptyCell,
  groupExpression,
  listWhere,
  type LogBodiesRow,
  metadataGroupKey,
  type LogPage,
  type LogQuery,
  type LogStore,
  NO_GROUP,
  percentile,
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

type Accumulating = UsageCell & { latencies: number[] };

/** Counts one row into a cell. */
function countRow(cell: Accumulating, status: SQLInputValue, latency: SQLInputValue, prompt: SQLInputValue, completion: SQLInputValue, cost: SQLInputValue, cacheStatus: SQLInputValue, saved: SQLInputValue): void {
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

/** The cells with their exact percentiles. */
const finished = (cells: Iterable<Accumulating>): UsageCell[] =>
  [...cells].map(({ latencies, ...cell }) => {
    latencies.sort((a, b) => a - b);
    return { ...cell, p50Ms: percentile(latencies, 0.5), p95Ms: percentile(latencies, 0.95) };
  });

export interface SqliteRetention {
  /** Rows older than this are deleted (0 = keep forever). */
  maxAgeMs: number;
  /** The database is kept under this size by deleting the oldest rows (0 = no limit). */
  maxBytes: number;
}

const SCHEMA_VERSION = 8;
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

/**
 * The text of a stored body that the search index holds: the string values of a JSON body (not its
 * keys, numbers or punctuation; escapes decoded, so a word after a `\n` is a word), one per line;
 * a body that is not valid JSON (plain text, or JSON the size cap cut) as it is. A JSON body without
 * strings gives null (nothing to index). SQL, so that the rebuild below runs in any SQLite client.
 */
const searchText = (body: string) =>
  `CASE WHEN json_valid(${body}) THEN (SELECT group_concat(value, char(10)) FROM json_tree(${body}) WHERE type = 'text') ELSE ${body} END`;

/** Version 8: how far the bodies are indexed (one row). */
const SEARCH_STATE = 'CREATE TABLE IF NOT EXISTS log_search_state (id INTEGER PRIMARY KEY CHECK (id = 1), indexed_to INTEGER NOT NULL); INSERT OR IGNORE INTO log_search_state (id, indexed_to) VALUES (1, 0);';
/** Every stored body is indexed (after a rebuild, or on the way to version 8 from an index that indexed every row as it was inserted). */
const ALL_INDEXED = 'UPDATE log_search_state SET indexed_to = (SELECT coalesce(max(rowid), 0) FROM log_bodies);';

/**
 * Free-text search over the bodies (when on). `log_search` is a contentless FTS5 table (the text
 * lives once, in `log_bodies`) keyed by `log_bodies`' rowid, holding {@link searchText} of each
 * body. Bodies are indexed in batches of their own, behind the inserts (`SqliteLogStore.indexBatch`):
 * FTS5's cost per row falls by more than half from the 20–100-row batches the log writer commits
 * to batches of thousands (it writes its pending terms out as one segment per transaction, and
 * fewer, larger segments need less merging). `log_search_state.indexed_to` is the rowid up to
 * which every stored body is indexed; it is read and moved in the same transactions that index, so
 * several processes on one file (GATEWAY_WORKERS) never index a body twice. A search indexes what
 * is behind first, so a search always sees every stored body. (Schema 7 indexed each row in the
 * insert's transaction; before it, a trigger did, at about three times that cost.)
 * Retention's delete removes them through a trigger (`contentless_delete` makes that a cheap
 * tombstone, with no re-tokenising; a body deleted before it was indexed leaves a harmless one).
 * The index keeps the words' positions: a word the tokenizer splits (`gpt-4o`) is a phrase query,
 * answered from the index alone.
 * Created (and filled from the bodies already stored) when the store opens with search on and the
 * table is missing or older than schema version 7; dropped when it opens with search off.
 * `automerge` stays FTS5's 4: 8 saved ~5 µs per row but left more segments, and a phrase of two
 * common words took ~3 times as long (bench/log-search.ts). `deletemerge` 30 (FTS5's default is 10):
 * a segment is rewritten for its deleted rows once 30% of them are gone rather than 10%; retention
 * deletes the oldest rows, whose segments then go whole: a third of the work per deleted row, the
 * same size of index in a steady state of inserts and deletes. A full `VACUUM` renumbers
 * `log_bodies`' rowids: run {@link REBUILD_SEARCH} after one.
 */
const SEARCH_SCHEMA = `
CREATE VIRTUAL TABLE log_search USING fts5(request_body, response_body, content='', contentless_delete=1);
INSERT INTO log_search (log_search, rank) VALUES ('deletemerge', 30);
CREATE TRIGGER log_bodies_search_delete AFTER DELETE ON log_bodies BEGIN
  DELETE FROM log_search WHERE rowid = old.rowid;
END;
${SEARCH_STATE}
`;
/** Drops the index; the insert trigger is the one schema versions 5 and 6 indexed with. */
const DROP_SEARCH = 'DROP TRIGGER IF EXISTS log_bodies_search_insert; DROP TRIGGER IF EXISTS log_bodies_search_delete; DROP TABLE IF EXISTS log_search; DROP TABLE IF EXISTS log_search_state;';

/** Version 6: the failed requests, for "all errors" (the same condition as the list's). */
const ERRORS_INDEX = 'CREATE INDEX IF NOT EXISTS logs_errors ON logs (time_ms, id) WHERE status >= 400 OR error_type IS NOT NULL;';

/** Indexes the bodies with rowids in (?1, ?2]. */
const INDEX_BODIES = `INSERT INTO log_search (rowid, request_body, response_body) SELECT rowid, ${searchText('request_body')}, ${searchText('response_body')} FROM log_bodies WHERE rowid > ?1 AND rowid <= ?2`;

/** Re-indexes every stored body (the migration to version 7, and after a full VACUUM: plain SQL, for the `sqlite3` shell too). */
export const REBUILD_SEARCH = `INSERT INTO log_search (log_search) VALUES ('delete-all');
INSERT INTO log_search (rowid, request_body, response_body) SELECT rowid, ${searchText('request_body')}, ${searchText('response_body')} FROM log_bodies;
${ALL_INDEXED}`;

/** An FTS5 query from the search words: each one a quoted string (no operator syntax reaches FTS5; a word the tokenizer splits is a phrase), all of them required. */
const ftsQuery = (terms: string[]) => terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' ');

/**
 * A search's condition, in one of two shapes. A word that few bodies hold: the set of matching ids
 * is made once (`IN`), and the time index walks the rows until a page is full. A common word: that
 * set would be large (a word in most bodies: every body's id), so each row the time index walks is
 * probed instead (`EXISTS`: a seek in the word's posting list by rowid), and a page fills after a few
 * rows. {@link COMMON_MATCHES} decides between them. (`id` is qualified in the probe: inside it, a
 * bare `id` would be the body's own.)
 */
const searchCondition =
  (common: boolean) =>
  (terms: string[], id: string, param: (value: unknown) => string): string =>
    common
      ? `EXISTS (SELECT 1 FROM log_bodies AS b JOIN log_search ON log_search.rowid = b.rowid WHERE b.id = ${id === 'id' ? 'logs.id' : id} AND log_search MATCH ${param(ftsQuery(terms))})`
      : `${id} IN (SELECT id FROM log_bodies WHERE rowid IN (SELECT rowid FROM log_search WHERE log_search MATCH ${param(ftsQuery(terms))}))`;

/** Bodies indexed per transaction, and how many behind start a batch at once (see {@link SEARCH_SCHEMA}). */
const INDEX_BATCH = 2000;
/** How long fewer bodies than {@link INDEX_BATCH} wait to be indexed (a search indexes them at once). */
const INDEX_DELAY_MS = 1000;
const SQLITE_BUSY = 5;
/**
 * Log rows retention deletes per transaction (with their bodies, search index entries and metadata:
 * 26 ms of the log writer at the median, measured on 200,000 bench-sized rows), and pages per step
 * of handing free pages back (~20 ms).
 */
const PRUNE_CHUNK_ROWS = 2000;
const VACUUM_STEP_PAGES = 1024;

/** Past this many matching bodies a search probes row by row rather than making the set of matches. */
const COMMON_MATCHES = 2000;

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
  private indexBodies?: StatementSync;
  private searchState?: { read: StatementSync; write: StatementSync; behind: StatementSync };
  /** Bodies this process stored since its last indexing batch (another process's are found by the batch itself). */
  private unindexed = 0;
  private indexTimer?: NodeJS.Timeout;
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
      // cache_size -16384: 16 MiB of page cache (the default 2 MiB thrashes once the indexes outgrow
      // it; 64 MiB, the earlier setting, wrote and queried a 300,000-row table no faster and held up
      // to 60 MB more RSS under load: docs/performance.md).
      database.exec(
        'PRAGMA busy_timeout = 0; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384;',
      );
      if (this.migration(database) !== '') {
        // Read again under the write lock: another process on the same file (GATEWAY_WORKERS) may
        // have migrated it meanwhile. A lock held by one that is migrating fails this open (busy),
        // and the log queue opens the store again later.
        database.exec('BEGIN IMMEDIATE');
        database.exec(`${this.migration(database)} COMMIT;`);
      }
      return database;
    } catch (error) {
      database.close();
      throw error;
    }
  }

  /** The statements that bring the database to this schema version and search setting ('' when it is there). */
  private migration(database: DatabaseSync): string {
    const version = Number((database.prepare('PRAGMA user_version').get() as Row).user_version);
    const indexed = database.prepare("SELECT 1 AS found FROM sqlite_master WHERE name = 'log_search'").get() !== undefined;
    // Version 7 indexes the bodies' string values (searchText) with a statement of its own: an older index is re-made.
    const reindex = this.search && (!indexed || version < 7);
    const drop = indexed && !this.search;
    if (version >= SCHEMA_VERSION && !reindex && !drop) return '';
    // Version 2 adds the routed requests' route and attempts (JSON, null on the plain path).
    const routing = version < 2 ? 'ALTER TABLE logs ADD COLUMN routing TEXT;' : '';
    // Version 3 adds what the response cache did and saved.
    const cache = version < 3 ? 'ALTER TABLE logs ADD COLUMN cache_status TEXT; ALTER TABLE logs ADD COLUMN cache_saved_usd REAL;' : '';
    // Version 4 adds the request fields a protocol translation dropped (JSON, null when none).
    const dropped = version < 4 ? 'ALTER TABLE logs ADD COLUMN dropped_fields TEXT;' : '';
    // Version 5 adds the end user the request named (its `user` field).
    const endUser = version < 5 ? 'ALTER TABLE logs ADD COLUMN end_user TEXT;' : '';
    // Version 6 adds the errors index.
    const errorsIndex = version < 6 ? ERRORS_INDEX : '';
    // The search index is made (filled from the stored bodies) or dropped as `search` says.
    // (DROP_SEARCH before a re-make too: a table dropped by hand leaves its delete trigger.)
    // Version 8 indexes in batches of its own behind the inserts: an index of version 7 held every stored body.
    const search = reindex ? `${DROP_SEARCH} ${SEARCH_SCHEMA} ${REBUILD_SEARCH}` : drop ? DROP_SEARCH : this.search && version < 8 ? `${SEARCH_STATE} ${ALL_INDEXED}` : '';
    return `${version < 1 ? SCHEMA : ''} ${routing} ${cache} ${dropped} ${endUser} ${errorsIndex} ${search} PRAGMA user_version = ${SCHEMA_VERSION};`;
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
    if (this.search) {
      this.indexBodies = this.db.prepare(INDEX_BODIES);
      this.searchState = {
        read: this.db.prepare('SELECT indexed_to FROM log_search_state'),
        write: this.db.prepare('UPDATE log_search_state SET indexed_to = ?'),
        behind: this.db.prepare('SELECT count(*) AS n, max(rowid) AS top FROM (SELECT rowid FROM log_bodies WHERE rowid > ? ORDER BY rowid LIMIT ?)'),
      };
      // Bodies an earlier run stored and did not index yet.
      this.unindexed = 1;
      this.scheduleIndexing();
    }
    await this.prune();
  }

  /**
   * Indexes, in one transaction, up to `limit` bodies behind `indexed_to` (see {@link SEARCH_SCHEMA});
   * returns how many it indexed.
   */
  private indexBatch(limit: number): number {
    const db = this.db;
    const state = this.searchState!;
    db.exec('BEGIN IMMEDIATE');
    try {
      const from = Number((state.read.get() as Row).indexed_to);
      const behind = state.behind.get(from, limit) as Row;
      const count = Number(behind.n);
      if (count > 0) {
        this.indexBodies!.run(from, behind.top);
        state.write.run(behind.top);
      }
      db.exec('COMMIT');
      return count;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Indexes every body that is behind (before a search, and on close). */
  private indexAll(): void {
    if (!this.searchState) return;
    clearTimeout(this.indexTimer);
    this.indexTimer = undefined;
    this.unindexed = 0;
    while (this.indexBatch(INDEX_BATCH) === INDEX_BATCH) {
      // more behind
    }
  }

  /**
   * Indexes every body that is behind; when another process on the file holds the write lock
   * (busy), leaves them to the next batch. Other failures are thrown.
   */
  private indexBehind(): void {
    try {
      this.indexAll();
    } catch (error) {
      if ((error as { errcode?: number }).errcode !== SQLITE_BUSY) throw error;
      this.unindexed = Math.max(this.unindexed, 1);
      this.scheduleIndexing();
    }
  }

  /**
   * Indexes what is behind once {@link INDEX_BATCH} bodies are (after this turn: the insert's answer
   * goes out first), or after {@link INDEX_DELAY_MS} when fewer are.
   */
  private scheduleIndexing(): void {
    if (this.unindexed === 0) return;
    const full = this.unindexed >= INDEX_BATCH;
    if (this.indexTimer && !full) return;
    clearTimeout(this.indexTimer);
    this.indexTimer = setTimeout(() => {
      this.indexTimer = undefined;
      if (!this.database?.isOpen) return;
      try {
        this.indexBehind();
      } catch (error) {
        // Failing: warned, and tried again after the next insert or delay.
        this.unindexed = Math.max(this.unindexed, 1);
        this.onWarning(`log search index: ${(error as Error).message}`);
        this.scheduleIndexing();
      }
    }, full ? 0 : INDEX_DELAY_MS);
    this.indexTimer.unref();
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    const db = this.db;
    const unindexedBefore = this.unindexed;
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
          const body = this.insertBody!.run(record.id, timeMs, record.request_body, record.response_body);
          if (this.searchState && Number(body.changes) > 0 && this.unindexed++ === unindexedBefore) this.keepBehind(Number(body.lastInsertRowid));
        }
        for (const [key, value] of Object.entries(record.metadata)) this.insertMetadata!.run(record.id, key, value, timeMs);
      }
      db.exec('COMMIT');
    } catch (error) {
      this.unindexed = unindexedBefore;
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
    this.scheduleIndexing();
  }

  /**
   * A body's rowid at or below `indexed_to` is a rowid used again (SQLite gives max(rowid) + 1: the
   * newest bodies were deleted, or a `VACUUM` renumbered them), so it is not indexed yet: every body
   * before it is, and the index starts again from it.
   */
  private keepBehind(rowid: number): void {
    const state = this.searchState!;
    if (rowid <= Number((state.read.get() as Row).indexed_to)) state.write.run(rowid - 1);
  }

  /** Whether a search's words are in more than {@link COMMON_MATCHES} bodies (one bounded scan of the index). */
  private commonSearch(query: LogQuery): boolean {
    if (query.search === undefined) return false;
    if (!this.search) throw new Error('Body search is off for this log store (logs.search).');
    // With another process writing the file (busy), the search sees what is indexed so far.
    this.indexBehind();
    const counted = this.db
      .prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM log_search WHERE log_search MATCH ? LIMIT ${COMMON_MATCHES + 1})`)
      .get(ftsQuery(searchTerms(query.search))) as Row;
    return Number(counted.n) > COMMON_MATCHES;
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
    const metadataKey = metadataGroupKey(query.groupBy);
    // A metadata key's value comes from the metadata table, found through its (key, time, id)
    // index: one probe per row of the range; rows without the key form the "(none)" group. The
    // index is named: left to itself, the planner takes the covering (key, value, …) one, which
    // can only use the key and so scans every row with that key for each log row.
    const group = metadataKey === undefined ? groupExpression(query.groupBy) : `COALESCE(m.value, '${NO_GROUP}')`;
    const join = metadataKey === undefined ? '' : 'LEFT JOIN log_metadata AS m INDEXED BY log_metadata_key ON m.key = ?4 AND m.time_ms = logs.time_ms AND m.log_id = logs.id';
    // One pass over the range: SQLite has no percentile aggregate, so the latencies are read
    // anyway, and summing in the same loop saves a second scan.
    const statement = this.db.prepare(
      `SELECT ${group}, CAST((logs.time_ms - ?1) / ?2 AS INTEGER), status, latency_ms, prompt_tokens, completion_tokens, cost_usd, cache_status, cache_saved_usd, ${query.groupBy === 'key' ? 'key_name' : 'NULL'}
       FROM logs ${join} WHERE logs.time_ms >= ?1 AND logs.time_ms < ?3`,
    );
    statement.setReturnArrays(true); // arrays, not objects: measurably cheaper per row
    const parameters: SQLInputValue[] = [query.from, query.bucketMs, query.to];
    if (metadataKey !== undefined) parameters.push(metadataKey);
    const rows = statement.iterate(...parameters) as Iterable<SQLInputValue[]>;
    const cells = new Map<string, Accumulating>();
    for (const [groupName, bucketIndex, status, latency, prompt, completion, cost, cacheStatus, saved, keyName] of rows) {
      const bucket = query.from + Number(bucketIndex) * query.bucketMs;
      const key = `${groupName}\u0000${bucket}`;
      let cell = cells.get(key);
      if (!cell) {
        cell = { ...emptyCell(String(groupName), bucket), latencies: [] };
        cells.set(key, cell);
      }
      if (keyName !== null) cell.label = String(keyName); // a renamed key: the name of the last row read
      countRow(cell, status, latency, prompt, completion, cost, cacheStatus, saved);
    }
    return finished(cells.values());
  }

  async usageTotals(query: UsageTotalsQuery): Promise<UsageCell[][]> {
    // One pass: each row is counted once per grouping.
    const expressions = query.groupBys.map((groupBy) => groupExpression(groupBy));
    const statement = this.db.prepare(
      `SELECT status, latency_ms, prompt_tokens, completion_tokens, cost_usd, cache_status, cache_saved_usd, key_name${expressions.map((expression) => `, ${expression}`).join('')}
       FROM logs WHERE time_ms >= ?1 AND time_ms < ?2`,
    );
    statement.setReturnArrays(true);
    const maps = query.groupBys.map(() => new Map<string, Accumulating>());
    for (const row of statement.iterate(query.from, query.to) as Iterable<SQLInputValue[]>) {
      const [status, latency, prompt, completion, cost, cacheStatus, saved, keyName] = row;
      for (let index = 0; index < maps.length; index++) {
        const group = String(row[8 + index]);
        let cell = maps[index].get(group);
        if (!cell) {
          cell = { ...emptyCell(group, query.from), latencies: [] };
          maps[index].set(group, cell);
        }
        if (keyName !== null && query.groupBys[index] === 'key') cell.label = String(keyName);
        countRow(cell, status, latency, prompt, completion, cost, cacheStatus, saved);
      }
    }
    return maps.map((cells) => finished(cells.values()));
  }

  async verdicts(query: VerdictQuery): Promise<VerdictCounts> {
    // One pass over the window through the time index, counted here: JSON.parse of each row's
    // verdicts is several times cheaper than SQLite's json_each and json_extract on them.
    const statement = this.db.prepare(`SELECT guardrails FROM logs WHERE time_ms >= ? AND time_ms < ? AND guardrails <> '[]'`);
    statement.setReturnArrays(true);
    return countVerdicts((statement.iterate(query.from, query.to) as Iterable<SQLInputValue[]>), (row) => JSON.parse(String(row[0])));
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

  /**
   * Deletes the oldest rows older than `beforeMs`, at most `limit` of them (more only when that many
   * share the oldest millisecond), with their bodies and metadata, in one transaction. `more`: rows
   * older than `beforeMs` are left.
   */
  private deleteOldest(beforeMs: number, limit: number): { deleted: number; more: boolean } {
    const db = this.db;
    db.exec('BEGIN IMMEDIATE');
    try {
      const cutRow = db.prepare('SELECT time_ms FROM logs WHERE time_ms < ? ORDER BY time_ms LIMIT 1 OFFSET ?').get(beforeMs, limit) as Row | undefined;
      let cut = beforeMs;
      if (cutRow) {
        cut = Number(cutRow.time_ms);
        const oldest = Number((db.prepare('SELECT min(time_ms) AS t FROM logs').get() as Row).t);
        if (cut <= oldest) cut = oldest + 1;
      }
      const deleted = Number(db.prepare('DELETE FROM logs WHERE time_ms < ?').run(cut).changes);
      db.prepare('DELETE FROM log_bodies WHERE time_ms < ?').run(cut);
      db.prepare('DELETE FROM log_metadata WHERE time_ms < ?').run(cut);
      db.exec('COMMIT');
      return { deleted, more: cutRow !== undefined };
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
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
    this.pruning ??= this.prunePass(now).finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  private async prunePass(now: number): Promise<number> {
    let deleted = 0;
    const { maxAgeMs, maxBytes } = this.retention;
    const inStep = async (): Promise<boolean> => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      return this.database?.isOpen === true;
    };
    if (maxAgeMs > 0) {
      for (;;) {
        const step = this.deleteOldest(now - maxAgeMs, PRUNE_CHUNK_ROWS);
        deleted += step.deleted;
        if (!step.more || !(await inStep())) break;
      }
    }
    if (maxBytes > 0 && this.database?.isOpen && this.usedBytes() > maxBytes * 0.9) {
      const chunk = Math.min(PRUNE_CHUNK_ROWS, Math.max(1, Math.ceil((await this.count()) / 10)));
      while (this.usedBytes() > maxBytes * 0.9) {
        const step = this.deleteOldest(Number.MAX_SAFE_INTEGER, chunk);
        deleted += step.deleted;
        if (step.deleted === 0 || !(await inStep())) break;
      }
    }
    if (deleted > 0 && this.database?.isOpen) {
      const freePages = this.db.prepare('PRAGMA freelist_count');
      let free = Number((freePages.get() as Row).freelist_count);
      while (free > 0) {
        this.db.exec(`PRAGMA incremental_vacuum(${VACUUM_STEP_PAGES})`);
        const left = Number((freePages.get() as Row).freelist_count);
        // Nothing freed: a file made before auto_vacuum was set keeps its free pages for reuse.
        if (left >= free || !(await inStep())) break;
        free = left;
      }
      if (!this.database?.isOpen) return deleted;
      this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    }
    return deleted;
  }

  async close(): Promise<void> {
    if (this.database?.isOpen && this.unindexed > 0) {
      try {
        this.indexAll();
      } catch {
        // busy or failing: the next open indexes what is behind
      }
    }
    clearTimeout(this.indexTimer);
    this.indexTimer = undefined;
    if (this.database?.isOpen) this.database.close();
    this.database = undefined;
  }
}
