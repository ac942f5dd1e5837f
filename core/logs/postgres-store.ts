import type pg from 'pg';
import { requireDependency } from '../require.js';
import type { LogRecord } from './record.js';
import { SCALAR_FIELDS } from './record.js';
import {
  groupExpression,
  listWhere,
  type LogBodiesRow,
  metadataGroupKey,
  NO_GROUP,
  type LogPage,
  type LogQuery,
  type LogStore,
  statusClassOf,
  timeMsOf,
  type UsageCell,
  type UsageQuery,
  type VerdictCounts,
  type VerdictQuery,
  type UsageTotalsQuery,
} from './store.js';

/** `pg`, loaded when a PostgreSQL store is made: a gateway on the embedded stores never loads it (27 modules, ~6 ms of start-up). */
export const loadPg = (): typeof pg => requireDependency('pg') as typeof pg;

const AGGREGATES = `count(*) AS requests, count(*) FILTER (WHERE status >= 400) AS errors,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
  percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
  COALESCE(sum(prompt_tokens), 0) AS prompt, COALESCE(sum(completion_tokens), 0) AS completion, COALESCE(sum(cost_usd), 0) AS cost,
  count(*) FILTER (WHERE cache_status IN ('HIT', 'SEMANTIC-HIT')) AS hits, count(*) FILTER (WHERE cache_status = 'MISS') AS misses,
  COALESCE(sum(cache_saved_usd) FILTER (WHERE cache_status IN ('HIT', 'SEMANTIC-HIT')), 0) AS saved`;

/** A cell from a row of {@link AGGREGATES}. */
const cellOf = (row: Row, group: string, bucket: number, label: unknown): UsageCell => ({
  group,
  bucket,
  requests: Number(row.requests),
  errors: Number(row.errors),
  p50Ms: Number(row.p50),
  p95Ms: Number(row.p95),
  promptTokens: Number(row.prompt),
  completionTokens: Number(row.completion),
  costUsd: Number(row.cost),
  cacheHits: Number(row.hits),
  cacheMisses: Number(row.misses),
  savedUsd: Number(row.saved),
  ...(label === null || label === undefined ? {} : { label: String(label) }),
});

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
const COLUMNS = [...SCALAR_FIELDS, 'time_ms', 'status_class', 'metadata', 'guardrails', 'routing', 'dropped_fields'];
/** Columns later migrations add (the first one creates the others). */
const ADDED_LATER = new Set(['routing', 'cache_status', 'cache_saved_usd', 'dropped_fields', 'end_user']);
const typeOf = (column: string) => TYPES[column] ?? 'text';

/**
 * The searched document of a row of `log_bodies`: the text of both bodies (`log_search_vector`,
 * made by migration 7: the string values of a JSON body, not its keys or numbers; a body that is not
 * valid JSON, such as one the size cap cut, as text), parsed with the `simple` text search
 * configuration (lower-cased words, no stemming or stop words: ids, model names and error codes
 * are found as typed). Queries must use this exact expression for the GIN index to serve them.
 */
const bodyDocument = (schema: string) =>
  `(coalesce(${schema}.log_search_vector(request_body), ''::tsvector) || coalesce(${schema}.log_search_vector(response_body), ''::tsvector))`;

const searchCondition = (schema: string) => (terms: string[], id: string, param: (value: unknown) => string) =>
  `${id} IN (SELECT id FROM ${schema}.log_bodies WHERE ${bodyDocument(schema)} @@ plainto_tsquery('simple'::regconfig, ${param(terms.join(' '))}))`;

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

/** Schema migrations, in order; each runs once, in a transaction, under an advisory lock. */
const MIGRATIONS: ReadonlyArray<string> = [
  `CREATE TABLE logs (${COLUMNS.filter((column) => !ADDED_LATER.has(column)).map((column) => `${column} ${typeOf(column)}${NOT_NULL.has(column) ? ' NOT NULL' : ''}${column === 'id' ? ' PRIMARY KEY' : ''}`).join(', ')});
   CREATE INDEX logs_time ON logs (time_ms DESC, id DESC);
   CREATE INDEX logs_trace ON logs (trace_id);
   CREATE INDEX logs_model ON logs (model, time_ms DESC, id DESC);
   CREATE INDEX logs_provider ON logs (provider, time_ms DESC, id DESC);
   CREATE INDEX logs_key ON logs (key_id, time_ms DESC, id DESC);
   CREATE INDEX logs_status ON logs (status_class, time_ms DESC, id DESC);
   CREATE INDEX logs_metadata ON logs USING GIN (metadata);
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
];

/**
 * Runs `work` in one transaction holding the log schema's advisory lock, once the schema exists.
 * Every table kept in the log schema (the log's, the stored responses') is created this way:
 * `CREATE SCHEMA IF NOT EXISTS` is not safe against a concurrent one from another instance.
 */
export async function inSchemaTransaction(pool: pg.Pool, schema: string, work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gateway-logs:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

type Row = Record<string, unknown>;

const NUMERIC = new Set(['upstream_ms', 'ttft_ms', 'latency_ms', 'gateway_ms', 'cost_usd', 'cache_saved_usd']);

function fromRow(row: Row): LogRecord {
  // id and time first, as the API documents them.
  const record: Record<string, unknown> = { id: row.id, time: new Date(Number(row.time_ms)).toISOString() };
  for (const field of SCALAR_FIELDS) {
    const value = row[field] ?? null;
    record[field] = value !== null && NUMERIC.has(field) ? Number(value) : value;
  }
  record.metadata = row.metadata;
  record.guardrails = row.guardrails;
  if (row.routing !== null && row.routing !== undefined) record.routing = row.routing;
  if (row.dropped_fields !== null && row.dropped_fields !== undefined) record.dropped_fields = row.dropped_fields as string[];
  if ('request_body' in row) {
    record.request_body = row.request_body ?? null;
    record.response_body = row.response_body ?? null;
  }
  return record as unknown as LogRecord;
}

export interface PostgresLogStoreOptions {
  connectionString: string;
  /** Schema holding the tables (created when missing); default `public`. */
  schema?: string;
  /** Pool size (default 4). */
  maxConnections?: number;
  /** How long opening a connection may take before the batch fails and spills (default 5,000 ms). */
  connectTimeoutMs?: number;
  /** Rows older than this are deleted by {@link PostgresLogStore.prune} (0 = keep forever). */
  maxAgeMs?: number;
  /**
   * Index the bodies for search (default true): a GIN expression index (the tsvector is not stored
   * twice), made when missing and dropped when off, as the store opens. Every instance sharing the
   * schema should say the same.
   */
  search?: boolean;
}

/**
 * The shared log store: PostgreSQL through `pg` (pure JavaScript). Every instance of the gateway
 * writes to the same tables; the schema is created and migrated on start under an advisory lock,
 * so instances starting together do not race. A batch is one statement (`json_to_recordset`), so it
 * is atomic and costs one round trip; `ON CONFLICT DO NOTHING` makes replays idempotent.
 */
export class PostgresLogStore implements LogStore {
  readonly kind = 'postgres';
  private readonly pool: pg.Pool;
  readonly schema: string;
  private insertSql = '';
  private replaceSql = '';
  private readonly maxAgeMs: number;
  readonly searchable: boolean;

  constructor(options: PostgresLogStoreOptions) {
    this.maxAgeMs = options.maxAgeMs ?? 0;
    this.searchable = options.search ?? true;
    this.schema = options.schema ?? 'public';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.schema)) throw new Error(`invalid log schema name "${this.schema}"`);
    this.pool = new (loadPg().Pool)({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 4,
      options: `-c search_path=${this.schema}`,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      // A hung database fails the batch (which then spills) instead of stalling the writer.
      query_timeout: 30_000,
      statement_timeout: 30_000,
    });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    this.pool.on('error', () => {});
  }

  async init(): Promise<void> {
    await inSchemaTransaction(this.pool, this.schema, async (client) => {
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.schema}.log_schema_version (version integer NOT NULL)`);
      const current = await client.query(`SELECT max(version) AS version FROM ${this.schema}.log_schema_version`);
      const from = Number(current.rows[0]?.version ?? 0);
      for (let index = from; index < MIGRATIONS.length; index++) {
        await client.query(`SET LOCAL search_path = ${this.schema}`);
        await client.query(MIGRATIONS[index]);
        await client.query(`INSERT INTO ${this.schema}.log_schema_version (version) VALUES ($1)`, [index + 1]);
      }
      await client.query(`SET LOCAL search_path = ${this.schema}`);
      await client.query(this.searchable ? `CREATE INDEX IF NOT EXISTS log_bodies_search ON log_bodies USING GIN (${bodyDocument(this.schema)})` : 'DROP INDEX IF EXISTS log_bodies_search');
    });
    const definition = [...COLUMNS.map((column) => `${column} ${typeOf(column)}`), 'request_body text', 'response_body text'].join(', ');
    this.insertSql = `WITH input AS (SELECT * FROM json_to_recordset($1::json) AS r(${definition})),
      inserted AS (INSERT INTO ${this.schema}.logs (${COLUMNS.join(', ')}) SELECT ${COLUMNS.join(', ')} FROM input ON CONFLICT (id) DO NOTHING RETURNING id)
      INSERT INTO ${this.schema}.log_bodies (id, time_ms, request_body, response_body)
        SELECT input.id, input.time_ms, input.request_body, input.response_body FROM input JOIN inserted USING (id)
        WHERE input.request_body IS NOT NULL OR input.response_body IS NOT NULL
      ON CONFLICT (id) DO NOTHING`;
    // A later state of a row (`replaces`): every column but the id, unless the stored row is a later one still.
    const updates = COLUMNS.filter((column) => column !== 'id').map((column) => `${column} = excluded.${column}`).join(', ');
    this.replaceSql = `INSERT INTO ${this.schema}.logs (${COLUMNS.join(', ')})
      SELECT ${COLUMNS.join(', ')} FROM json_to_recordset($1::json) AS r(${definition})
      ON CONFLICT (id) DO UPDATE SET ${updates} WHERE excluded.latency_ms >= logs.latency_ms`;
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records.map((record) => ({ ...record, time_ms: timeMsOf(record), status_class: statusClassOf(record.status) }));
    const replacing = rows.filter((row) => row.replaces);
    if (replacing.length === rows.length) return this.replace(replacing);
    await this.pool.query(this.insertSql, [JSON.stringify(replacing.length === 0 ? rows : rows.filter((row) => !row.replaces))]);
    if (replacing.length > 0) await this.replace(replacing);
  }

  /** Rows that are later states of stored ones (a batch's entry), written in order: a batch rarely holds two states of one row. */
  private async replace(rows: ReadonlyArray<LogRecord & { time_ms: number }>): Promise<void> {
    // One state per id in a statement (PostgreSQL refuses to update a row twice in one command): the last, the latest.
    const latest = new Map(rows.map((row) => [row.id, row]));
    await this.pool.query(this.replaceSql, [JSON.stringify([...latest.values()])]);
  }

  async list(query: LogQuery): Promise<LogPage> {
    if (query.search !== undefined && !this.searchable) throw new Error('Body search is off for this log store (logs.search).');
    const { where, params } = listWhere(
      query,
      (index) => `$${index}`,
      (key, value, param) => (value === undefined ? `metadata ? ${param(key)}` : `metadata @> ${param(JSON.stringify({ [key]: value }))}::jsonb`),
      undefined,
      searchCondition(this.schema),
    );
    const result = await this.pool.query(
      `SELECT ${COLUMNS.join(', ')} FROM ${this.schema}.logs ${where} ORDER BY time_ms DESC, id DESC LIMIT ${query.limit + 1}`,
      params,
    );
    const rows = result.rows as Row[];
    const more = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return { data: page.map(fromRow), nextCursor: more && last ? { timeMs: Number(last.time_ms), id: String(last.id) } : null };
  }

  async get(id: string): Promise<LogRecord | undefined> {
    const result = await this.pool.query(
      `SELECT ${COLUMNS.map((column) => `logs.${column}`).join(', ')}, log_bodies.request_body, log_bodies.response_body
       FROM ${this.schema}.logs LEFT JOIN ${this.schema}.log_bodies USING (id) WHERE logs.id = $1`,
      [id],
    );
    return result.rows[0] ? fromRow(result.rows[0] as Row) : undefined;
  }

  async bodies(ids: readonly string[]): Promise<LogBodiesRow[]> {
    if (ids.length === 0) return [];
    const result = await this.pool.query(`SELECT id, request_body, response_body FROM ${this.schema}.log_bodies WHERE id = ANY($1::text[])`, [ids]);
    return result.rows as LogBodiesRow[];
  }

  async usage(query: UsageQuery): Promise<UsageCell[]> {
    const metadataKey = metadataGroupKey(query.groupBy);
    const group = metadataKey === undefined ? groupExpression(query.groupBy) : `COALESCE(metadata ->> $4::text, '${NO_GROUP}')`;
    const parameters: unknown[] = [query.from, query.to, query.bucketMs];
    if (metadataKey !== undefined) parameters.push(metadataKey);
    // A team's view: only its keys' rows.
    let keys = '';
    if (query.keys !== undefined) {
      parameters.push([...query.keys]);
      keys = ` AND key_id = ANY($${parameters.length}::text[])`;
    }
    const result = await this.pool.query(
      `SELECT ${group} AS grp, ${query.groupBy === 'key' ? 'max(key_name)' : 'NULL'} AS label, (time_ms - $1::bigint) / $3::bigint AS bucket, ${AGGREGATES}
       FROM ${this.schema}.logs WHERE time_ms >= $1::bigint AND time_ms < $2::bigint${keys} GROUP BY 1, 3`,
      parameters,
    );
    return (result.rows as Row[]).map((row) => cellOf(row, String(row.grp), query.from + Number(row.bucket) * query.bucketMs, row.label));
  }

  async usageTotals(query: UsageTotalsQuery): Promise<UsageCell[][]> {
    // One query per grouping, in parallel on the pool's connections. Measured once on 1 000 000
    // rows (2 busy cores): 1.3 s for the usage summary of a day this way, 1.7 s as one scan with a
    // grouping set per grouping (one backend sorts the rows for each set's percentiles).
    const length = query.to - query.from;
    return Promise.all(query.groupBys.map((groupBy) => this.usage({ from: query.from, to: query.to, bucketMs: length, groupBy, ...(query.keys ? { keys: query.keys } : {}) })));
  }

  async verdicts(query: VerdictQuery): Promise<VerdictCounts> {
    const [verdicts, requests] = await Promise.all([
      this.pool.query(
        `SELECT v->>'policy' AS policy, v->>'guardrail' AS guardrail, v->>'side' AS side, v->>'action' AS action, count(*) AS n
         FROM ${this.schema}.logs, jsonb_array_elements(guardrails) AS v
         WHERE time_ms >= $1::bigint AND time_ms < $2::bigint AND guardrails <> '[]'::jsonb AND v ? 'policy'
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 2, 4`,
        [query.from, query.to],
      ),
      this.pool.query(
        `SELECT guardrails->0->>'policy' AS policy, count(*) AS n,
           count(*) FILTER (WHERE guardrails @> '[{"action":"deny"}]') AS denied, count(*) FILTER (WHERE guardrails @> '[{"action":"transform"}]') AS transformed
         FROM ${this.schema}.logs
         WHERE time_ms >= $1::bigint AND time_ms < $2::bigint AND guardrails <> '[]'::jsonb AND guardrails->0 ? 'policy'
         GROUP BY 1 ORDER BY 1`,
        [query.from, query.to],
      ),
    ]);
    return {
      verdicts: (verdicts.rows as Row[]).map((row) => ({ policy: String(row.policy), guardrail: String(row.guardrail), side: String(row.side), action: String(row.action), count: Number(row.n) })),
      requests: (requests.rows as Row[]).map((row) => ({ policy: String(row.policy), requests: Number(row.n), denied: Number(row.denied), transformed: Number(row.transformed) })),
    };
  }

  async count(): Promise<number> {
    const result = await this.pool.query(`SELECT count(*) AS n FROM ${this.schema}.logs`);
    return Number(result.rows[0].n);
  }

  /**
   * Deletes rows older than the age limit, a few thousand at a time so that no statement holds
   * locks for long. Size limits of a shared database are the operator's (partitioning, quotas).
   */
  async prune(now = Date.now()): Promise<number> {
    if (this.maxAgeMs <= 0) return 0;
    const before = now - this.maxAgeMs;
    let deleted = 0;
    for (;;) {
      const result = await this.pool.query(
        `WITH gone AS (DELETE FROM ${this.schema}.logs WHERE id IN (SELECT id FROM ${this.schema}.logs WHERE time_ms < $1 LIMIT 5000) RETURNING id),
           bodies AS (DELETE FROM ${this.schema}.log_bodies WHERE id IN (SELECT id FROM gone))
         SELECT count(*) AS n FROM gone`,
        [before],
      );
      const count = Number(result.rows[0].n);
      deleted += count;
      if (count < 5000) break;
    }
    return deleted;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
