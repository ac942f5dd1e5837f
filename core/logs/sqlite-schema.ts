import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { LogRecord } from './record.js';
import { SCALAR_FIELDS } from './record.js';
import { ALL_INDEXED, DROP_SEARCH, REBUILD_SEARCH, SEARCH_SCHEMA, SEARCH_STATE } from './sqlite-search.js';

// The SQLite log store's tables, their migrations from earlier schema versions, and the mapping of
// a stored row back to a record (core/logs/sqlite-store.ts).

const SCHEMA_VERSION = 8;
/** The log holds request bodies and caller identities: readable by the gateway's user only. */
const FILE_MODE = 0o600;

export const COLUMNS = [...SCALAR_FIELDS, 'time_ms', 'status_class', 'metadata', 'guardrails', 'routing', 'dropped_fields'];

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

/** Version 6: the failed requests, for "all errors" (the same condition as the list's). */
const ERRORS_INDEX = 'CREATE INDEX IF NOT EXISTS logs_errors ON logs (time_ms, id) WHERE status >= 400 OR error_type IS NOT NULL;';

export type Row = Record<string, SQLInputValue>;

/** Maps a stored row back to the API's record shape. */
export function fromRow(row: Row): LogRecord {
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
 * Creates the database file owner-only (0600) before SQLite opens it, and narrows an existing
 * one: SQLite gives the `-wal` and `-shm` files the database file's mode. Those two, when left by
 * an earlier run, are narrowed too.
 */
function restrictFiles(path: string): void {
  closeSync(openSync(path, 'a', FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    if (existsSync(file)) chmodSync(file, FILE_MODE);
  }
}

/** Opens (creating it owner-only) and migrates the log database at `path`, with the search index made or dropped as `search` says. */
export function openLogDatabase(path: string, search: boolean): DatabaseSync {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  restrictFiles(path);
  const database = new DatabaseSync(path);
  try {
    // busy_timeout 0: a locked database fails the batch at once (it then spills) rather than
    // blocking the event loop.
    // cache_size -16384: 16 MiB of page cache (the default 2 MiB thrashes once the indexes outgrow
    // it; 64 MiB, the earlier setting, wrote and queried a 300,000-row table no faster and held up
    // to 60 MB more RSS under load: docs/performance.md).
    database.exec(
      'PRAGMA busy_timeout = 0; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384;',
    );
    if (migration(database, search) !== '') {
      // Read again under the write lock: another process on the same file (GATEWAY_WORKERS) may
      // have migrated it meanwhile. A lock held by one that is migrating fails this open (busy),
      // and the log queue opens the store again later.
      database.exec('BEGIN IMMEDIATE');
      database.exec(`${migration(database, search)} COMMIT;`);
    }
    return database;
  } catch (error) {
    database.close();
    throw error;
  }
}

/** The statements that bring the database to this schema version and search setting ('' when it is there). */
function migration(database: DatabaseSync, search: boolean): string {
  const version = Number((database.prepare('PRAGMA user_version').get() as Row).user_version);
  const indexed = database.prepare("SELECT 1 AS found FROM sqlite_master WHERE name = 'log_search'").get() !== undefined;
  // Version 7 indexes the bodies' string values (searchText) with a statement of its own: an older index is re-made.
  const reindex = search && (!indexed || version < 7);
  const drop = indexed && !search;
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
  const searchIndex = reindex ? `${DROP_SEARCH} ${SEARCH_SCHEMA} ${REBUILD_SEARCH}` : drop ? DROP_SEARCH : search && version < 8 ? `${SEARCH_STATE} ${ALL_INDEXED}` : '';
  return `${version < 1 ? SCHEMA : ''} ${routing} ${cache} ${dropped} ${endUser} ${errorsIndex} ${searchIndex} PRAGMA user_version = ${SCHEMA_VERSION};`;
}
