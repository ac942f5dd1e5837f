import test from 'ava';
import pg from 'pg';
import { DAY_MS, dayOf, partitionName } from '../../core/logs/postgres-partitions.js';
import { MIGRATIONS } from '../../core/logs/postgres-schema.js';
import { searchByDay } from '../../core/logs/postgres-search.js';
import { PostgresLogStore, type PostgresLogStoreOptions } from '../../core/logs/postgres-store.js';
import { DATABASE_URL, dropSchemas, makeRecord, postgresReachable, uniqueSchema } from './fixtures.js';

// Issue 39: the PostgreSQL log partitioned by day. The store contract (store.contract.test.ts)
// covers the answers; these cover the partitions themselves and the move of an unpartitioned log.

const postgres = await postgresReachable();
if (!postgres.ok) console.log(`PostgreSQL partition tests skipped: ${postgres.reason}`);
const run = postgres.ok ? test : test.skip;
const schemas: string[] = [];
test.after.always(() => dropSchemas(schemas));

const CONNECT_TIMEOUT_MS = 30_000;
const DAY = Date.parse('2026-11-20T00:00:00.000Z');

function storeIn(schema: string, options: Partial<PostgresLogStoreOptions> = {}): PostgresLogStore {
  return new PostgresLogStore({ connectionString: DATABASE_URL, connectTimeoutMs: CONNECT_TIMEOUT_MS, schema, ...options });
}

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The partitions attached to a table, by name. */
const partitionsOf = (schema: string, table: string) =>
  withClient(async (client) => {
    const found = await client.query(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace
       WHERE n.nspname = $1 AND p.relname = $2 ORDER BY 1`,
      [schema, table],
    );
    return (found.rows as Array<{ relname: string }>).map((row) => row.relname);
  });

/** Whether a table of that name exists in the schema (attached or not). */
const tableExists = (schema: string, name: string) =>
  withClient(async (client) => (await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [`${schema}.${name}`])).rows[0].found as boolean);

const fresh = async (label: string, options: Partial<PostgresLogStoreOptions> = {}) => {
  const schema = uniqueSchema(label);
  schemas.push(schema);
  const store = storeIn(schema, options);
  await store.init();
  return { schema, store };
};

run('a new log is partitioned by day, with today and the days ahead made at start', async (t) => {
  const { schema, store } = await fresh('ahead', { partitionDaysAhead: 2 });
  try {
    const kinds = await withClient(async (client) =>
      (await client.query(`SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname IN ('logs', 'log_bodies') ORDER BY 1`, [schema])).rows,
    );
    t.deepEqual(kinds, [
      { relname: 'log_bodies', relkind: 'p' },
      { relname: 'logs', relkind: 'p' },
    ]);
    const today = dayOf(Date.now());
    // The clock may pass midnight between init and here: the days made at init are today's or yesterday's.
    const expected = (start: number) => [0, 1, 2].map((ahead) => partitionName('logs', start + ahead * DAY_MS));
    const made = await partitionsOf(schema, 'logs');
    t.true(JSON.stringify(made) === JSON.stringify(expected(today)) || JSON.stringify(made) === JSON.stringify(expected(today - DAY_MS)), made.join());
    t.deepEqual(await partitionsOf(schema, 'log_bodies'), made.map((name) => name.replace('logs_', 'log_bodies_')));
    t.false(await tableExists(schema, 'logs_legacy'));
    // Each partition carries the parent's indexes (made when it was attached).
    const indexes = await withClient(async (client) =>
      (await client.query('SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [schema, made[0]])).rows[0].n as number,
    );
    t.is(indexes, 9, 'primary key, time, trace, model, provider, key, status, metadata, errors');
  } finally {
    await store.close();
  }
});

run('entries either side of midnight land in their own day, and days nobody made ahead are made on demand', async (t) => {
  const { schema, store } = await fresh('boundary', { partitionDaysAhead: 0 });
  try {
    const before = makeRecord({ time: new Date(DAY - 1).toISOString(), request_body: 'late evening' });
    const at = makeRecord({ time: new Date(DAY).toISOString(), request_body: 'midnight' });
    const early = makeRecord({ time: '2019-03-04T05:06:07.000Z' });
    const future = makeRecord({ time: '2031-01-01T00:00:00.000Z' });
    await store.insert([before, at, early, future]);
    const placed = await withClient(async (client) =>
      Object.fromEntries(
        (await client.query(`SELECT id, tableoid::regclass::text AS part FROM ${schema}.logs`)).rows.map((row: { id: string; part: string }) => [row.id, row.part.replace(`${schema}.`, '')]),
      ),
    );
    t.deepEqual(placed, {
      [before.id]: 'logs_p20261119',
      [at.id]: 'logs_p20261120',
      [early.id]: 'logs_p20190304',
      [future.id]: 'logs_p20310101',
    });
    const bodies = await withClient(async (client) => (await client.query(`SELECT tableoid::regclass::text AS part FROM ${schema}.log_bodies ORDER BY time_ms`)).rows.map((row) => row.part));
    t.deepEqual(bodies, [`${schema}.log_bodies_p20261119`, `${schema}.log_bodies_p20261120`]);
    // The answers cross the boundary as one log.
    t.deepEqual((await store.list({ limit: 10, from: DAY - DAY_MS, to: DAY + DAY_MS })).data.map((row) => row.id), [at.id, before.id]);
    const page = await store.list({ limit: 1, from: DAY - DAY_MS, to: DAY + DAY_MS });
    t.deepEqual((await store.list({ limit: 1, from: DAY - DAY_MS, to: DAY + DAY_MS, cursor: page.nextCursor ?? undefined })).data.map((row) => row.id), [before.id]);
    const usage = await store.usage({ from: DAY - DAY_MS, to: DAY + DAY_MS, bucketMs: DAY_MS, groupBy: 'none' });
    t.deepEqual(usage.map((cell) => [cell.bucket, cell.requests]), [
      [DAY - DAY_MS, 1],
      [DAY, 1],
    ]);
    t.is((await store.get(at.id))?.request_body, 'midnight');
    // Replayed, the batch is stored once.
    await store.insert([before, at, early, future]);
    t.is(await store.count(), 4);
  } finally {
    await store.close();
  }
});

run('a day dropped behind a running store (another instance, an operator) is made again by the next insert', async (t) => {
  const { schema, store } = await fresh('dropped', { partitionDaysAhead: 0 });
  try {
    await store.insert([makeRecord({ time: new Date(DAY + 1000).toISOString() })]);
    await withClient((client) => client.query(`DROP TABLE ${schema}.logs_p20261120, ${schema}.log_bodies_p20261120`));
    const again = makeRecord({ time: new Date(DAY + 2000).toISOString(), request_body: 'again' });
    await store.insert([again]);
    t.is((await store.get(again.id))?.request_body, 'again');
    t.deepEqual(await partitionsOf(schema, 'logs'), ['logs_p20261120', partitionName('logs', dayOf(Date.now()))].sort());
  } finally {
    await store.close();
  }
});

run('retention drops whole day partitions of both tables, and hides the older rows of the day it cuts', async (t) => {
  const { schema, store } = await fresh('retention', { maxAgeMs: 2 * DAY_MS, partitionDaysAhead: 0 });
  try {
    const days = [0, 1, 2, 3].map((index) => DAY + index * DAY_MS);
    const records = days.flatMap((day) => [makeRecord({ time: new Date(day + 3_600_000).toISOString(), request_body: 'morning' }), makeRecord({ time: new Date(day + 13 * 3_600_000).toISOString(), request_body: 'afternoon' })]);
    await store.insert(records);
    // Two days before noon of day 3: days 0 whole, day 1 until noon.
    const now = days[3] + 12 * 3_600_000;
    const hidden = await store.prune(now);
    const today = partitionName('logs', dayOf(Date.now()));
    t.deepEqual(await partitionsOf(schema, 'logs'), ['logs_p20261121', 'logs_p20261122', 'logs_p20261123', today].sort());
    t.deepEqual(await partitionsOf(schema, 'log_bodies'), ['log_bodies_p20261121', 'log_bodies_p20261122', 'log_bodies_p20261123', today.replace('logs_', 'log_bodies_')].sort());
    t.false(await tableExists(schema, 'logs_p20261120'), 'the table itself is gone, not only detached');
    t.false(await tableExists(schema, 'log_bodies_p20261120'));
    // Day 1's morning row is past the limit: no answer shows it, though its day is still there.
    const kept = records.slice(3).map((record) => record.id);
    t.deepEqual((await store.list({ limit: 20 })).data.map((row) => row.id).sort(), [...kept].sort());
    t.is(await store.get(records[2].id), undefined);
    t.deepEqual(await store.bodies([records[2].id]), []);
    t.is(await store.count(), 5);
    t.deepEqual((await store.list({ limit: 20, search: 'morning' })).data.map((row) => row.id).sort(), [records[4].id, records[6].id].sort());
    t.is((await store.usage({ from: days[1], to: days[2], bucketMs: DAY_MS, groupBy: 'none' }))[0].requests, 1);
    t.true(hidden >= 1, 'at least the hidden row of day 1 is counted');
    // The rows still stored: none removed one by one.
    const stored = await withClient(async (client) => Number((await client.query(`SELECT count(*) AS n FROM ${schema}.logs`)).rows[0].n));
    t.is(stored, 6);
  } finally {
    await store.close();
  }
});

/** Makes the log as the store made it before partitioning (migrations 1 to 7), with `rows` rows over three days, a third with bodies. */
async function legacyLog(schema: string, rows: number): Promise<void> {
  await withClient(async (client) => {
    await client.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}; CREATE TABLE log_schema_version (version integer NOT NULL)`);
    for (const [index, migration] of MIGRATIONS.slice(0, 7).entries()) {
      if (typeof migration !== 'string') throw new Error('the legacy migrations are SQL');
      await client.query(migration);
      await client.query('INSERT INTO log_schema_version (version) VALUES ($1)', [index + 1]);
    }
    await client.query(
      `INSERT INTO logs (id, time_ms, trace_id, operation, method, path, status, status_class, outcome, streaming, latency_ms, gateway_ms, metadata, guardrails, key_id, model, provider)
       SELECT 'legacy-' || i, $2::bigint + i * (3 * ${DAY_MS} / $1::bigint), 'trace-' || i, 'chat', 'POST', '/v1/chat/completions', 200, 2, 'ok', false, 10, 1, '{}', '[]', 'vk_' || (i % 7), 'gpt-4o-mini', 'openai'
       FROM generate_series(0, $1::bigint - 1) AS i`,
      [rows, DAY],
    );
    await client.query(`INSERT INTO log_bodies (id, time_ms, request_body, response_body) SELECT id, time_ms, '{"messages":[{"content":"legacy walrus"}]}', NULL FROM logs WHERE id LIKE '%3' OR id LIKE '%6' OR id LIKE '%9'`);
  });
}

run('an unpartitioned log is moved into partitions behind a running store: writes go on, every row answers once throughout', async (t) => {
  const schema = uniqueSchema('move');
  schemas.push(schema);
  const legacyRows = 12_000;
  await legacyLog(schema, legacyRows);
  const withBodies = await withClient(async (client) => Number((await client.query(`SELECT count(*) AS n FROM ${schema}.log_bodies`)).rows[0].n));
  const store = storeIn(schema, { moveBatch: 500 });
  await store.init();
  let moved = false;
  const done = store.legacyMoved().then(() => (moved = true));
  const written: string[] = [];
  let checksDuringMove = 0;
  try {
    t.true(await tableExists(schema, 'logs_legacy'), 'the move runs after init');
    // A replay of a row written before the migration, while it is still in the legacy table, is not stored twice.
    const replayed = makeRecord({ id: 'legacy-0', time: new Date(DAY).toISOString(), trace_id: 'trace-0' });
    await store.insert([replayed]);
    while (!moved) {
      const record = makeRecord({ time: new Date(DAY + written.length).toISOString(), request_body: `written during the move ${written.length}` });
      await store.insert([record]);
      written.push(record.id);
      const count = await store.count();
      if (moved) break;
      checksDuringMove++;
      t.is(count, legacyRows + written.length);
    }
    await done;
    t.true(checksDuringMove > 3, `the move was seen in progress (${checksDuringMove} checks)`);
    t.false(await tableExists(schema, 'logs_legacy'));
    t.false(await tableExists(schema, 'log_bodies_legacy'));
    t.is(await store.count(), legacyRows + written.length);
    const ids = await withClient(async (client) => (await client.query(`SELECT id FROM ${schema}.logs`)).rows.map((row: { id: string }) => row.id));
    t.is(new Set(ids).size, ids.length, 'no row twice');
    t.is(ids.length, legacyRows + written.length);
    const bodies = await withClient(async (client) => Number((await client.query(`SELECT count(*) AS n FROM ${schema}.log_bodies`)).rows[0].n));
    t.is(bodies, withBodies + written.length);
    t.is((await store.list({ limit: 500, search: 'legacy walrus' })).data.length, Math.min(500, withBodies));
    t.is((await store.get('legacy-9'))?.request_body, '{"messages":[{"content":"legacy walrus"}]}');
    t.is((await store.list({ limit: 1 })).data[0].id, 'legacy-11999', 'the newest row');
    const version = await withClient(async (client) => Number((await client.query(`SELECT max(version) AS v FROM ${schema}.log_schema_version`)).rows[0].v));
    t.is(version, MIGRATIONS.length);
  } finally {
    await store.close();
  }
});

run('a move stopped half way resumes at the next start, and two instances starting together share it', async (t) => {
  const schema = uniqueSchema('resume');
  schemas.push(schema);
  const legacyRows = 8000;
  await legacyLog(schema, legacyRows);
  const first = storeIn(schema, { moveBatch: 200 });
  await first.init();
  const legacyLeft = () => withClient(async (client) => Number((await client.query(`SELECT count(*) AS n FROM ${schema}.logs_legacy`)).rows[0].n));
  let left = legacyRows;
  while (left === legacyRows) left = await legacyLeft();
  await first.close();
  left = await legacyLeft();
  t.true(left > 0 && left < legacyRows, `stopped part way (${left} rows left)`);
  t.is(await withClient(async (client) => Number((await client.query(`SELECT count(*) AS n FROM ${schema}.logs`)).rows[0].n)), legacyRows - left);
  const [second, third] = [storeIn(schema, { moveBatch: 200 }), storeIn(schema, { moveBatch: 200 })];
  await Promise.all([second.init(), third.init()]);
  try {
    t.is(await second.count(), legacyRows);
    await Promise.all([second.legacyMoved(), third.legacyMoved()]);
    t.false(await tableExists(schema, 'logs_legacy'));
    t.is(await second.count(), legacyRows);
    t.is(await third.count(), legacyRows);
    const distinct = await withClient(async (client) => (await client.query(`SELECT count(*) AS n, count(DISTINCT id) AS d FROM ${schema}.logs`)).rows[0]);
    t.deepEqual([Number(distinct.n), Number(distinct.d)], [legacyRows, legacyRows]);
  } finally {
    await Promise.all([second.close(), third.close()]);
  }
});

run('a search walks the days newest first, and both ways of reading a day (bodies first, rows first) give the same pages', async (t) => {
  const { schema, store } = await fresh('search', { partitionDaysAhead: 0 });
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  try {
    // Three days; in each, 40 rows with the word, some also with a rarer one, a few errors.
    const records = [0, 1, 2].flatMap((day) =>
      Array.from({ length: 60 }, (_, index) =>
        makeRecord({
          time: new Date(DAY + day * DAY_MS + index * 60_000).toISOString(),
          request_body: index % 3 === 0 ? 'nothing to find' : `otter ${index % 7 === 0 ? 'heron' : ''}`,
          status: index % 5 === 0 ? 502 : 200,
        }),
      ),
    );
    await store.insert(records);
    const newestFirst = (filter: (record: (typeof records)[number]) => boolean) => records.filter(filter).map((record) => record.id).reverse();
    const days = [DAY + 2 * DAY_MS, DAY + DAY_MS, DAY, dayOf(Date.now())].sort((a, b) => b - a);
    const pages = async (query: Omit<Parameters<typeof searchByDay>[2], 'cursor'>, cap: number) => {
      const ids: string[] = [];
      let cursor: { timeMs: number; id: string } | undefined;
      for (;;) {
        const rows = await searchByDay(pool, schema, { ...query, ...(cursor ? { cursor } : {}) }, days, cap);
        const page = rows.slice(0, query.limit);
        ids.push(...page.map((row) => String(row.id)));
        if (rows.length <= query.limit) return ids;
        const last = page.at(-1)!;
        cursor = { timeMs: Number(last.time_ms), id: String(last.id) };
      }
    };
    const cases: Array<[Omit<Parameters<typeof searchByDay>[2], 'cursor'>, (record: (typeof records)[number]) => boolean]> = [
      [{ limit: 25, search: 'otter' }, (record) => record.request_body!.includes('otter')],
      [{ limit: 7, search: 'otter heron' }, (record) => record.request_body!.includes('heron')],
      [{ limit: 4, search: 'otter', errors: true }, (record) => record.request_body!.includes('otter') && record.status === 502],
      [{ limit: 9, search: 'otter', from: DAY + 30 * 60_000, to: DAY + DAY_MS + 30 * 60_000 }, (record) => record.request_body!.includes('otter') && Date.parse(record.time) >= DAY + 30 * 60_000 && Date.parse(record.time) < DAY + DAY_MS + 30 * 60_000],
    ];
    for (const [query, filter] of cases) {
      const expected = newestFirst(filter);
      t.true(expected.length > 0);
      // A cap of 5 makes every day a "common word" day; a large one reads every day's bodies first.
      t.deepEqual(await pages(query, 5), expected, `rows first: ${JSON.stringify(query)}`);
      t.deepEqual(await pages(query, 100_000), expected, `bodies first: ${JSON.stringify(query)}`);
    }
    // Through the store (its own cap), pages end to end.
    const first = await store.list({ limit: 50, search: 'otter' });
    t.deepEqual(first.data.map((row) => row.id), newestFirst((record) => record.request_body!.includes('otter')).slice(0, 50));
  } finally {
    await pool.end();
    await store.close();
  }
});
