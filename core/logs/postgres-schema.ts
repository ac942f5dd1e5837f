import type pg from 'pg';
import { SCALAR_FIELDS } from './record.js';

const TYPES: Record<string, string> = {
  status: 'integer',
  prompt_tokens: 'integer',
  completion_tokens: 'integer',
  cached_tokens: 'integer',
  reasoning_tokens: 'integer',
  total_tokens: 'integer',
  streaming: 'boolean',
  latency_ms: 'double precision',
  gateway_ms: 'double precision',
  upstream_ms: 'double precision',
  ttft_ms: 'double precision',
  cost_usd: 'double precision',
  cache_saved_usd: 'double precision',
  time_ms: 'bigint',
  status_class: 'smallint',
  metadata: 'jsonb',
  guardrails: 'jsonb',
  routing: 'jsonb',
  dropped_fields: 'jsonb',
};
const NOT_NULL = new Set(['id', 'time_ms', 'trace_id', 'operation', 'method', 'path', 'status', 'status_class', 'outcome', 'streaming', 'latency_ms', 'gateway_ms', 'metadata', 'guardrails']);
/** The columns of `logs`. */
export const COLUMNS = [...SCALAR_FIELDS, 'time_ms', 'status_class', 'metadata', 'guardrails', 'routing', 'dropped_fields'];
/** Columns later migrations add (the first one creates the others). */
const ADDED_LATER = new Set(['routing', 'cache_status', 'cache_saved_usd', 'dropped_fields', 'end_user']);
/** A column's SQL type. */
export const typeOf = (column: string) => TYPES[column] ?? 'text';
const columnDefinition = (column: string, primaryKey: boolean) => `${column} ${typeOf(column)}${NOT_NULL.has(column) ? ' NOT NULL' : ''}${primaryKey && column === 'id' ? ' PRIMARY KEY' : ''}`;

/**
 * The searched document of a row of `log_bodies`: the text of both bodies (`log_search_vector`,
 * made by migration 7: the string values of a JSON body, not its keys or numbers; a body that is not
 * valid JSON, such as one the size cap cut, as text), parsed with the `simple` text search
 * configuration (lower-cased words, no stemming or stop words: ids, model names and error codes
 * are found as typed). Queries must use this exact expression for the GIN index to serve them.
 */
export const bodyDocument = (schema: string) =>
  `(coalesce(${schema}.log_search_vector(request_body), ''::tsvector) || coalesce(${schema}.log_search_vector(response_body), ''::tsvector))`;

/**
 * Migration 7: a body's text search vector. `jsonb_to_tsvector` over the string values only: about
 * half the work of the whole JSON text for a chat request and answer (keys, numbers and syntax are
 * most of a small body's words). Any error (a body that is not JSON, or JSON that jsonb refuses)
 * falls back to the whole text, so no body can fail an insert. The exception block is a
 * subtransaction, which a parallel worker cannot start: the function is PARALLEL UNSAFE (a search
 * whose plan filtered bodies with it in parallel workers failed).
 */
const SEARCH_VECTOR = `CREATE OR REPLACE FUNCTION log_search_vector(body text) RETURNS tsvector
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL UNSAFE AS $$
BEGIN
  RETURN jsonb_to_tsvector('simple'::regconfig, body::jsonb, '["string"]');
EXCEPTION WHEN OTHERS THEN
  RETURN to_tsvector('simple'::regconfig, body);
END $$`;

/**
 * The secondary indexes of `logs`, for the dashboard's queries: the first page and keyset pages
 * (time, id), a trace, the filters by model, provider, key (the account key's rows are its NULL
 * range) and status class (each with time and id, so a filtered page is one index range read
 * newest first), metadata, and the failed requests (partial).
 */
const LOG_INDEXES = `CREATE INDEX logs_time ON logs (time_ms DESC, id DESC);
   CREATE INDEX logs_trace ON logs (trace_id);
   CREATE INDEX logs_model ON logs (model, time_ms DESC, id DESC);
   CREATE INDEX logs_provider ON logs (provider, time_ms DESC, id DESC);
   CREATE INDEX logs_key ON logs (key_id, time_ms DESC, id DESC);
   CREATE INDEX logs_status ON logs (status_class, time_ms DESC, id DESC);
   CREATE INDEX logs_metadata ON logs USING GIN (metadata);`;

/**
 * Migration 8's tables: `logs` and `log_bodies` partitioned by range of `time_ms`, one partition
 * per UTC day (postgres-partitions.ts makes them). A partitioned table's unique keys must hold the
 * partition column, so the primary keys are (id, time_ms): an entry replayed after an uncertain
 * failure has the same id and time, so it is still stored once. `log_bodies` has no time index:
 * retention drops its partitions with the log's.
 */
const PARTITIONED = `CREATE TABLE logs (${COLUMNS.map((column) => columnDefinition(column, false)).join(', ')}, PRIMARY KEY (id, time_ms)) PARTITION BY RANGE (time_ms);
   ${LOG_INDEXES}
   CREATE INDEX logs_errors ON logs (time_ms DESC, id DESC) WHERE status >= 400 OR error_type IS NOT NULL;
   CREATE TABLE log_bodies (id text NOT NULL, time_ms bigint NOT NULL, request_body text, response_body text, PRIMARY KEY (id, time_ms)) PARTITION BY RANGE (time_ms);`;

/** The relation kind of a table of the schema (`r` plain, `p` partitioned), or undefined when it does not exist. */
export async function relationKind(client: pg.ClientBase, schema: string, table: string): Promise<string | undefined> {
  const found = await client.query('SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2', [schema, table]);
  return found.rows[0]?.relkind as string | undefined;
}

/**
 * Migration 8: partitions the log. A plain `logs` (and its `log_bodies`) is renamed `logs_legacy`
 * (its indexes gain `_legacy`), and the partitioned tables take the names, so writes go to them at
 * once; the rows of the legacy tables are moved in the background (postgres-partitions.ts,
 * `moveLegacyBatch`), readers reading both meanwhile. Legacy tables without rows (a new database)
 * are dropped here. Runs in the migration transaction: the rename waits for the statements that
 * use the old table and is instant.
 */
async function partitionLog(client: pg.ClientBase, schema: string): Promise<void> {
  if ((await relationKind(client, schema, 'logs')) === 'p') return;
  for (const table of ['logs', 'log_bodies']) {
    await client.query(`ALTER TABLE ${schema}.${table} RENAME TO ${table}_legacy`);
    const indexes = await client.query(
      `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE n.nspname = $1 AND t.relname = $2`,
      [schema, `${table}_legacy`],
    );
    for (const { relname } of indexes.rows as Array<{ relname: string }>) await client.query(`ALTER INDEX ${schema}.${relname} RENAME TO ${relname}_legacy`);
  }
  await client.query(PARTITIONED);
  const rows = await client.query(`SELECT EXISTS (SELECT 1 FROM ${schema}.logs_legacy) OR EXISTS (SELECT 1 FROM ${schema}.log_bodies_legacy) AS any`);
  if (!rows.rows[0].any) await client.query(`DROP TABLE ${schema}.logs_legacy, ${schema}.log_bodies_legacy`);
}

/** A migration: SQL, or work done with the migrating transaction's client. */
export type Migration = string | ((client: pg.ClientBase, schema: string) => Promise<void>);

/** Schema migrations, in order; each runs once, in a transaction, under an advisory lock. */
export const MIGRATIONS: ReadonlyArray<Migration> = [
  `CREATE TABLE logs (${COLUMNS.filter((column) => !ADDED_LATER.has(column)).map((column) => columnDefinition(column, true)).join(', ')});
   ${LOG_INDEXES}
   CREATE TABLE log_bodies (id text PRIMARY KEY, time_ms bigint NOT NULL, request_body text, response_body text);
   CREATE INDEX log_bodies_time ON log_bodies (time_ms);`,
  // Routed requests: their route and upstream attempts (null on the plain path).
  'ALTER TABLE logs ADD COLUMN routing jsonb',
  // What the response cache did and saved (null when it did not apply).
  'ALTER TABLE logs ADD COLUMN cache_status text, ADD COLUMN cache_saved_usd double precision',
  // The request fields a protocol translation dropped (null when none).
  'ALTER TABLE logs ADD COLUMN dropped_fields jsonb',
  // The end user the request named (its `user` field).
  'ALTER TABLE logs ADD COLUMN end_user text',
  // The failed requests (a partial index, so "all errors" does not scan the successes). The body
  // search index is made or dropped after the migrations, as `search` says.
  'CREATE INDEX IF NOT EXISTS logs_errors ON logs (time_ms DESC, id DESC) WHERE status >= 400 OR error_type IS NOT NULL',
  // The search index over the bodies' string values (bodyDocument): the one over the whole text
  // is dropped, and made again below when search is on.
  `${SEARCH_VECTOR}; DROP INDEX IF EXISTS log_bodies_search`,
  // Partitioned by day (issue 39).
  partitionLog,
];
