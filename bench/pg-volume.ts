/**
 * The PostgreSQL log at volume (issue 39): a partitioned log of BENCH_PG_ROWS rows (default
 * 50 000 000) over BENCH_PG_DAYS whole days (default 30) before today, then the dashboard's queries
 * against it and the store's own insert path.
 *
 *   npm run bench:pg-volume
 *
 * The rows are made in SQL (`generate_series`), one day at a time, into a plain table carrying the
 * day's CHECK constraint, vacuumed and analyzed (as autovacuum would after a load), then attached
 * as the day's partition: attaching builds the day's indexes from the parent's (sorted builds, much
 * faster than inserting into indexed tables) and skips the constraint scan. Days are made newest
 * first, BENCH_PG_FILL_STREAMS (default 1) at a time; BENCH_PG_UNLOGGED=1 makes them UNLOGGED (no WAL
 * for the fill: nothing measured writes to them, and today's partition, where the insert rate is
 * measured, is the store's own, logged); BENCH_PG_PACKED=1 builds their b-tree indexes before the
 * attach (which adopts them) with fillfactor 100, ~10% smaller. The fill also stops before the
 * disk's free space could fall under BENCH_PG_MIN_FREE_GB (default 30). Rows look like
 * bench/log-rows.ts': 20 models, 4 providers, 50 keys (30% account key), ~7% errors, a time-ordered
 * UUID id; one in BENCH_PG_BODY_EVERY (default 5) has small chat bodies whose words come from the
 * same Zipf-ranked 5 000-word vocabulary. A size budget (BENCH_PG_MAX_GB, default 22) stops the fill
 * early, and the report says how many rows were made. Then:
 * - the insert rate through `PostgresLogStore.insert`, BENCH_PG_INSERT_ROWS rows (default 200 000)
 *   with bodies (bench/log-rows.ts, every row with bodies) in batches of 500, as the log writer sends them;
 * - the dashboard's first page, filtered first pages (key, model, provider, status class, errors),
 *   a search (a rare word, a common one, one answer id), a day's usage by key, a record by id, and
 *   retention dropping the oldest day: medians of BENCH_PG_RUNS (default 5), ms.
 * BENCH_PG_EXPLAIN=1 prints each query's plan. The schema is dropped at the end.
 */
import { execSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import pg from 'pg';
import { DAY_MS, dayOf, partitionName } from '../core/logs/postgres-partitions.js';
import { PostgresLogStore } from '../core/logs/postgres-store.js';
import { makeRows, random, WORDS } from './log-rows.js';
import { busyPercent, readMachineCpuTimes } from './machine.js';
import { connectOrSkip } from './postgres-probe.js';

const ROWS = Number(process.env.BENCH_PG_ROWS ?? 50_000_000);
const DAYS = Number(process.env.BENCH_PG_DAYS ?? 30);
const BODY_EVERY = Number(process.env.BENCH_PG_BODY_EVERY ?? 5);
const MAX_BYTES = Number(process.env.BENCH_PG_MAX_GB ?? 22) * 1024 ** 3;
/** The fill stops after the day that passes this many minutes (a busy machine cannot make 50 M rows in the time). */
const MAX_MINUTES = Number(process.env.BENCH_PG_MAX_MINUTES ?? 0);
const INSERT_ROWS = Number(process.env.BENCH_PG_INSERT_ROWS ?? 200_000);
const RUNS = Number(process.env.BENCH_PG_RUNS ?? 5);
const EXPLAIN = process.env.BENCH_PG_EXPLAIN === '1';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** BENCH_PG_REUSE=<schema>: measure a log an earlier run kept (BENCH_PG_KEEP=1) instead of filling one. */
const REUSE = process.env.BENCH_PG_REUSE;
const KEEP = process.env.BENCH_PG_KEEP === '1';
const SCHEMA = REUSE ?? `gw_bench_pgvol_${process.pid}`;
const BATCH = 500;
/** Days filled at once, each on its own connection (the machine's cores share the work). */
const STREAMS = Number(process.env.BENCH_PG_FILL_STREAMS ?? 1);
/** BENCH_PG_UNLOGGED=1: the filled days are UNLOGGED tables (no WAL written for the fill; nothing measured writes to them). */
const UNLOGGED = process.env.BENCH_PG_UNLOGGED === '1';
/** BENCH_PG_PACKED=1: the filled days' b-tree indexes are built before the attach with fillfactor 100 (full pages, as a day that no longer takes rows could be). */
const PACKED = process.env.BENCH_PG_PACKED === '1';
/** The fill stops before the disk's free space could fall under this many GB. */
const MIN_FREE_BYTES = Number(process.env.BENCH_PG_MIN_FREE_GB ?? 30) * 1024 ** 3;

const out = (line: string) => process.stdout.write(`${line}\n`);

/** A day's rows, made in SQL. `$1` day start, `$2` rows, `$3` first row number. */
const FILL_LOGS = (table: string) => `INSERT INTO ${SCHEMA}.${table} (id, time_ms, trace_id, caller_type, key_id, key_name, end_user, provider, model, operation, method, path,
    status, status_class, outcome, error_type, error_code, streaming, latency_ms, gateway_ms, upstream_ms, prompt_tokens, completion_tokens, total_tokens, cost_usd, cache_status, metadata, guardrails)
  SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12), t, substr(r, 13, 20),
    CASE WHEN k < 15 THEN 'account' ELSE 'virtual-key' END, CASE WHEN k < 15 THEN NULL ELSE 'vk_' || (k - 15) END, CASE WHEN k < 15 THEN NULL ELSE 'key vk_' || (k - 15) END,
    CASE WHEN n % 2 = 0 THEN 'user-' || (n % 1000) END, (ARRAY['openai', 'anthropic', 'bedrock', 'vertex'])[1 + n % 4], 'model-' || (n / 4) % 20, 'chat', 'POST', '/v1/chat/completions',
    s, s / 100, CASE WHEN s < 400 THEN 'ok' ELSE 'error' END, CASE WHEN s = 429 THEN 'rate_limit_error' WHEN s >= 400 THEN 'upstream_error' END,
    CASE WHEN s = 429 THEN 'rate_limited' WHEN s >= 400 THEN 'bad_gateway' END, n % 2 = 1, l, 0.4 + (n % 100) / 100.0, l - 1, n % 2000, n % 500, 0, (n % 1000) / 100000.0,
    CASE WHEN n % 5 = 0 THEN 'HIT' ELSE 'MISS' END, CASE WHEN n % 5 = 1 THEN jsonb_build_object('team', 'team-' || n % 10) ELSE '{}'::jsonb END, '[]'::jsonb
  FROM (SELECT i, $1::bigint + (i * ${DAY_MS}::bigint) / $2::bigint AS t, md5(($3::bigint + i)::text) AS r, (($3::bigint + i) * 2654435761) % 1000003 AS n, 50 + random() * 2000 AS l,
          floor(random() * 65)::int AS k, (CASE WHEN random() < 0.93 THEN 200 WHEN random() < 0.57 THEN 429 WHEN random() < 0.66 THEN 400 ELSE 502 END) AS s
        FROM generate_series(0, $2::bigint - 1) AS i) AS g, LATERAL (SELECT lpad(to_hex(g.t), 12, '0') AS h) AS x`;

/** Small chat bodies for one row in BODY_EVERY of a day. `$1` the words, `$2` every. */
const FILL_BODIES = (logs: string, bodies: string) => `INSERT INTO ${SCHEMA}.${bodies} (id, time_ms, request_body, response_body)
  SELECT l.id, l.time_ms,
    json_build_object('model', l.model, 'messages', json_build_array(json_build_object('role', 'user', 'content', (SELECT string_agg(w, ' ') FROM (SELECT ($1::text[])[1 + floor(5000 * random() ^ 3)::int] AS w FROM generate_series(1, 10) WHERE l.id IS NOT NULL) AS words))))::text,
    json_build_object('id', 'chatcmpl-' || substr(l.id, 25), 'choices', json_build_array(json_build_object('message', json_build_object('role', 'assistant',
      'content', (SELECT string_agg(w, ' ') FROM (SELECT ($1::text[])[1 + floor(5000 * random() ^ 3)::int] AS w FROM generate_series(1, 14) WHERE l.id IS NOT NULL) AS words)))))::text
  FROM ${SCHEMA}.${logs} AS l WHERE abs(hashtext(l.id)) % $2::int = 0`;

async function sizeOf(probe: pg.Client): Promise<number> {
  const found = await probe.query(`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, [SCHEMA]);
  return Number(found.rows[0].bytes);
}

/** The free bytes of the disk that holds the database (the bench runs on the same machine). */
const freeBytes = () => {
  const stats = statfsSync('/');
  return stats.bavail * stats.bsize;
};

/**
 * The parent's indexes, as statements for one day's table (BENCH_PG_PACKED): built before the
 * attach, which then adopts them instead of building its own. `{table}` stands for the day's table.
 */
async function packedIndexes(probe: pg.Client, parent: string): Promise<string[]> {
  const found = await probe.query(
    `SELECT pg_get_indexdef(i.indexrelid) AS definition, i.indisprimary AS primary, a.amname AS method FROM pg_index i
     JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_am a ON a.oid = x.relam
     WHERE n.nspname = $1 AND c.relname = $2`,
    [SCHEMA, parent],
  );
  return (found.rows as Array<{ definition: string; primary: boolean; method: string }>).map(({ definition, primary, method }) => {
    if (primary) return `ALTER TABLE ${SCHEMA}.{table} ADD PRIMARY KEY (id, time_ms) WITH (fillfactor = 100)`;
    const [head, tail] = definition.split(` ON ONLY ${SCHEMA}.${parent} `);
    const where = tail.indexOf(' WHERE ');
    const columns = where < 0 ? tail : tail.slice(0, where);
    const options = method === 'btree' ? ' WITH (fillfactor = 100)' : '';
    return `${head.replace(/INDEX (\S+)$/, 'INDEX {table}_$1')} ON ${SCHEMA}.{table} ${columns}${options}${where < 0 ? '' : tail.slice(where)}`;
  });
}

/** Makes one day's partitions, filled, vacuumed, analyzed and attached. Returns the rows made. */
async function fillDay(probe: pg.Client, day: number, rows: number, first: number, indexes: Record<string, string[]>): Promise<number> {
  const bounds = `CHECK (time_ms >= ${day} AND time_ms < ${day + DAY_MS})`;
  const logs = partitionName('logs', day);
  const bodies = partitionName('log_bodies', day);
  const kind = UNLOGGED ? 'UNLOGGED TABLE' : 'TABLE';
  await probe.query(`CREATE ${kind} ${SCHEMA}.${logs} (LIKE ${SCHEMA}.logs INCLUDING DEFAULTS, CONSTRAINT bounds ${bounds})`);
  await probe.query(`CREATE ${kind} ${SCHEMA}.${bodies} (LIKE ${SCHEMA}.log_bodies INCLUDING DEFAULTS, CONSTRAINT bounds ${bounds})`);
  await probe.query(FILL_LOGS(logs), [day, rows, first]);
  await probe.query(FILL_BODIES(logs, bodies), [WORDS, BODY_EVERY]);
  for (const [parent, table] of [['logs', logs], ['log_bodies', bodies]]) {
    for (const statement of indexes[parent] ?? []) await probe.query(statement.replaceAll('{table}', table));
  }
  await probe.query(`VACUUM (ANALYZE) ${SCHEMA}.${logs}, ${SCHEMA}.${bodies}`);
  for (const [parent, table] of [['logs', logs], ['log_bodies', bodies]]) {
    await probe.query(`ALTER TABLE ${SCHEMA}.${parent} ATTACH PARTITION ${SCHEMA}.${table} FOR VALUES FROM (${day}) TO (${day + DAY_MS})`);
    await probe.query(`ALTER TABLE ${SCHEMA}.${table} DROP CONSTRAINT bounds`);
  }
  return rows;
}

async function median(run: () => Promise<unknown>, runs = RUNS): Promise<{ median: number; min: number; max: number }> {
  const times: number[] = [];
  for (let index = 0; index < runs; index++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(runs / 2)], min: times[0], max: times.at(-1) ?? Number.NaN };
}

/** Captures the SQL of the store's last query, to EXPLAIN it (BENCH_PG_EXPLAIN=1). */
function captureQueries(store: PostgresLogStore): () => { text: string; values?: unknown[] } | undefined {
  const pool = (store as unknown as { pool: pg.Pool }).pool;
  const query = pool.query.bind(pool) as (text: string, values?: unknown[]) => Promise<pg.QueryResult>;
  let last: { text: string; values?: unknown[] } | undefined;
  (pool as unknown as { query: typeof query }).query = (text: string, values?: unknown[]) => {
    if (typeof text === 'string' && /^\s*(SELECT|WITH)/i.test(text) && !text.includes('pg_class')) last = { text, values };
    return query(text, values);
  };
  return () => last;
}

async function insertRate(store: PostgresLogStore): Promise<{ rowsPerSecond: number; busy: number; bytesPerRow: number }> {
  const next = random(11);
  const start = dayOf(Date.now());
  const batches = Array.from({ length: Math.ceil(INSERT_ROWS / BATCH) }, (_, index) =>
    makeRows(Math.min(BATCH, INSERT_ROWS - index * BATCH), index * BATCH, next, { start, spanMs: Math.min(DAY_MS, Date.now() - start), total: INSERT_ROWS, bodyShare: 1 }),
  );
  const bytes = batches.reduce((sum, batch) => sum + batch.reduce((rowSum, row) => rowSum + (row.request_body?.length ?? 0) + (row.response_body?.length ?? 0), 0), 0);
  const before = readMachineCpuTimes();
  const started = performance.now();
  for (const batch of batches) await store.insert(batch);
  const seconds = (performance.now() - started) / 1000;
  return { rowsPerSecond: INSERT_ROWS / seconds, busy: busyPercent(before, readMachineCpuTimes()), bytesPerRow: bytes / INSERT_ROWS };
}

async function main(): Promise<void> {
  const probe = await connectOrSkip(DATABASE_URL);
  if (!probe) return;
  const server = (await probe.query('SHOW server_version')).rows[0].server_version as string;
  out(`PostgreSQL log at volume: PostgreSQL ${server} on loopback, node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 1024 ** 3).toFixed(0)} GB`);
  const disk = execSync('df -h / | tail -1').toString().trim();
  out(`disk before: ${disk}`);
  const store = new PostgresLogStore({ connectionString: DATABASE_URL, schema: SCHEMA, partitionDaysAhead: 1, maxConnections: 4 });
  try {
    await store.init();
    await probe.query("SET maintenance_work_mem = '512MB'");
    const today = dayOf(Date.now());
    const perDay = Math.ceil(ROWS / DAYS);
    let made = 0;
    let filled = 0;
    let planned = 0;
    let stopped = REUSE !== undefined;
    const fillStarted = performance.now();
    const indexes: Record<string, string[]> = PACKED ? { logs: await packedIndexes(probe, 'logs'), log_bodies: await packedIndexes(probe, 'log_bodies') } : {};
    // Each stream takes the next day (newest first, so a fill a budget stops still has yesterday) until the rows are made or a budget stops the fill.
    const stream = async (client: pg.Client) => {
      while (!stopped && planned < DAYS && planned * perDay < ROWS) {
        const index = planned + 1;
        const rows = Math.min(perDay, ROWS - planned * perDay);
        const first = planned * perDay;
        planned++;
        const dayStarted = performance.now();
        await fillDay(client, today - index * DAY_MS, rows, first, indexes);
        made += rows;
        filled++;
        const bytes = await sizeOf(client);
        const free = freeBytes();
        out(`  day ${filled}/${DAYS}: ${made} rows, ${(bytes / 1024 ** 3).toFixed(2)} GB, ${((performance.now() - dayStarted) / 1000).toFixed(1)} s, disk free ${(free / 1024 ** 3).toFixed(1)} GB`);
        if (stopped) continue;
        // The days under way in the other streams grow the log too: one more day each must fit.
        const ahead = (bytes / filled) * STREAMS;
        if (bytes + ahead > MAX_BYTES || free - ahead < MIN_FREE_BYTES) {
          stopped = true;
          out(`  stopped: another day would pass the ${(MAX_BYTES / 1024 ** 3).toFixed(0)} GB budget or leave under ${(MIN_FREE_BYTES / 1024 ** 3).toFixed(0)} GB free`);
        } else if (MAX_MINUTES > 0 && performance.now() - fillStarted > MAX_MINUTES * 60_000) {
          stopped = true;
          out(`  stopped: the fill passed its ${MAX_MINUTES} minutes (BENCH_PG_MAX_MINUTES)`);
        }
      }
    };
    const clients = [probe];
    for (let index = 1; index < STREAMS; index++) {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query("SET maintenance_work_mem = '512MB'");
      clients.push(client);
    }
    await Promise.all(clients.map((client) => stream(client)));
    for (const client of clients.slice(1)) await client.end();
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const bytes = await sizeOf(probe);
    const bodies = Number((await probe.query(`SELECT sum(reltuples) AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname LIKE 'log_bodies_p%'`, [SCHEMA])).rows[0].n);
    if (REUSE !== undefined) {
      made = Number((await probe.query(`SELECT sum(reltuples) AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname LIKE 'logs_p%'`, [SCHEMA])).rows[0].n);
      filled = (await probe.query(`SELECT count(*) AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname LIKE 'logs_p%' AND c.relname < $2`, [SCHEMA, partitionName('logs', today)])).rows[0].n;
    }
    out(`filled: ${made} rows over ${filled} days (~${Math.round(bodies)} with bodies) in ${(fillSeconds / 60).toFixed(1)} min, ${(bytes / 1024 ** 3).toFixed(2)} GB with indexes`);

    const inserted = await insertRate(store);
    out(`insert through the store: ${Math.round(inserted.rowsPerSecond)} rows/s, ${INSERT_ROWS} rows with bodies (~${Math.round(inserted.bytesPerRow)} B of body text each) in batches of ${BATCH} (machine busy ${inserted.busy.toFixed(0)}%)`);
    await probe.query(`ANALYZE ${SCHEMA}.${partitionName('logs', today)}, ${SCHEMA}.${partitionName('log_bodies', today)}`);

    const lastQuery = captureQueries(store);
    const yesterday = today - DAY_MS;
    const someId = (await probe.query(`SELECT id FROM ${SCHEMA}.${partitionName('logs', today - Math.ceil(filled / 2) * DAY_MS)} LIMIT 1`)).rows[0]?.id as string;
    const answerId = (await probe.query(`SELECT substr(id, 25) AS tail FROM ${SCHEMA}.${partitionName('log_bodies', today - Math.ceil(filled / 2) * DAY_MS)} LIMIT 1`)).rows[0]?.tail as string;
    const cases: Array<[string, () => Promise<unknown>]> = [
      ['first page (50 newest)', () => store.list({ limit: 50 })],
      ['first page, one key', () => store.list({ limit: 50, key: 'vk_7' })],
      ['first page, one model', () => store.list({ limit: 50, model: 'model-3' })],
      ['first page, one provider', () => store.list({ limit: 50, provider: 'vertex' })],
      ['first page, status 5xx', () => store.list({ limit: 50, statusClass: 5 })],
      ['first page, all errors', () => store.list({ limit: 50, errors: true })],
      ['first page, key and model, yesterday', () => store.list({ limit: 50, key: 'vk_7', model: 'model-3', from: yesterday, to: today })],
      ['search, a rare word', () => store.list({ limit: 50, search: WORDS[4990] })],
      ['search, a common word', () => store.list({ limit: 50, search: WORDS[0] })],
      ['search, one answer id', () => store.list({ limit: 50, search: `chatcmpl-${answerId}` })],
      ['search, a rare word, yesterday', () => store.list({ limit: 50, search: WORDS[4990], from: yesterday, to: today })],
      ["a day's usage by key (yesterday)", () => store.usage({ from: yesterday, to: today, bucketMs: DAY_MS, groupBy: 'key' })],
      ["a day's usage by key, hourly", () => store.usage({ from: yesterday, to: today, bucketMs: 3_600_000, groupBy: 'key' })],
      ['a record by id (every day probed)', () => store.get(someId)],
    ];
    for (const [name, run] of cases) {
      const time = await median(run);
      out(`  ${name}: ${time.median.toFixed(1)} ms (min ${time.min.toFixed(1)}, max ${time.max.toFixed(1)})`);
      const sql = lastQuery();
      if (EXPLAIN && sql) {
        const plan = await probe.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${sql.text}`, sql.values);
        for (const row of plan.rows as Array<{ 'QUERY PLAN': string }>) out(`      ${row['QUERY PLAN']}`);
      }
    }
    // Retention: a limit that the oldest day has just passed (kept logs keep their days).
    if (KEEP) return;
    const oldest = today - filled * DAY_MS;
    const retention = new PostgresLogStore({ connectionString: DATABASE_URL, schema: SCHEMA, maxAgeMs: Date.now() - (oldest + DAY_MS) - 60_000, partitionDaysAhead: 1 });
    await retention.init();
    const dropStarted = performance.now();
    const dropped = await retention.prune();
    out(`retention: the oldest day (${Math.round(dropped)} rows, estimated) dropped in ${(performance.now() - dropStarted).toFixed(0)} ms`);
    await retention.close();
  } finally {
    await store.close();
    if (KEEP) out(`kept: schema ${SCHEMA} (BENCH_PG_REUSE=${SCHEMA} measures it again; drop it after)`);
    else await probe.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await probe.end();
    out(`disk ${KEEP ? "now" : "after dropping the schema"}: ${execSync('df -h / | tail -1').toString().trim()}`);
  }
}

await main();
