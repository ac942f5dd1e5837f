import { mkdtempSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { PostgresLogStore } from '../../core/logs/postgres-store.js';
import type { LogRecord } from '../../core/logs/record.js';
import { SqliteLogStore } from '../../core/logs/sqlite-store.js';
import { SqliteWorkerStore } from '../../core/logs/sqlite-worker-store.js';
import { decodeCursor, encodeCursor, type LogQuery, type LogStore } from '../../core/logs/store.js';
import { DATABASE_URL, dropSchemas, makeRecord, postgresReachable, uniqueSchema } from './fixtures.js';

const postgres = await postgresReachable();
if (!postgres.ok) console.log(`PostgreSQL log store contract tests skipped: ${postgres.reason}`);
const schemas: string[] = [];
test.after.always(() => dropSchemas(schemas));

const databaseFile = () => join(mkdtempSync(join(tmpdir(), 'log-store-')), 'logs.db');
const factories: Array<[name: string, make: (maxAgeMs?: number) => LogStore, available: boolean]> = [
  ['sqlite', (maxAgeMs = 0) => new SqliteLogStore(databaseFile(), { maxAgeMs, maxBytes: 0 }), true],
  ['sqlite-worker', (maxAgeMs = 0) => new SqliteWorkerStore(databaseFile(), { maxAgeMs, maxBytes: 0 }), true],
  [
    'postgres',
    (maxAgeMs = 0) => {
      const schema = uniqueSchema('contract');
      schemas.push(schema);
      return new PostgresLogStore({ connectionString: DATABASE_URL, schema, maxAgeMs });
    },
    postgres.ok,
  ],
];

const BASE = Date.parse('2026-11-20T10:00:00.000Z');
const at = (offsetMs: number) => new Date(BASE + offsetMs).toISOString();

async function listAll(store: LogStore, query: Omit<LogQuery, 'cursor'>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: LogQuery['cursor'];
  let pages = 0;
  do {
    const page = await store.list({ ...query, cursor });
    pages++;
    ids.push(...page.data.map((row) => row.id));
    // The cursor survives its text form, as the admin API hands it out.
    cursor = page.nextCursor ? decodeCursor(encodeCursor(page.nextCursor)) : undefined;
  } while (cursor);
  return { ids, pages };
}

for (const [name, make, available] of factories) {
  const contract = available ? test : test.skip;

  const withStore = (title: string, body: (t: import('ava').ExecutionContext, store: LogStore) => Promise<void>, maxAgeMs?: number) =>
    contract(`${name}: ${title}`, async (t) => {
      const store = make(maxAgeMs);
      await store.init();
      try {
        await body(t, store);
      } finally {
        await store.close();
      }
    });

  withStore('a record comes back exactly as inserted, bodies only from get()', async (t, store) => {
    const record = makeRecord({
      time: at(0),
      caller_type: 'virtual-key',
      key_id: 'vk_1',
      key_name: 'team-a',
      streaming: true,
      ttft_ms: 3.25,
      cached_tokens: 4,
      reasoning_tokens: 2,
      cost_usd: 0.00123,
      status: 429,
      outcome: 'error',
      error_type: 'rate_limit_error',
      error_code: 'rate_limited',
      error_message: 'slow down',
      metadata: { user: 'u1', env: 'prod' },
      guardrails: [{ guardrail: 'pii', side: 'input', action: 'allow', ms: 0.5 }],
      request_body: '{"model":"gpt-4o-mini"}',
      response_body: '{"error":{}}',
    });
    await store.insert([record]);
    t.deepEqual(await store.get(record.id), record);
    const page = await store.list({ limit: 10 });
    const { request_body: _request, response_body: _response, ...summary } = record;
    t.deepEqual(page.data, [summary]);
    t.is(await store.get('no-such-id'), undefined);
  });

  withStore("a routed request's route and attempts come back as inserted", async (t, store) => {
    const record = makeRecord({
      time: at(0),
      routing: {
        route: { name: 'fb', source: 'header' },
        attempts: [
          { target: 'a', provider: 'openai', model: 'm-a', status: 503, latencyMs: 1.5 },
          { target: 'b', provider: 'openai', status: 200, latencyMs: 2, usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
        ],
      },
    });
    await store.insert([record]);
    t.deepEqual((await store.get(record.id))?.routing, record.routing);
    t.deepEqual((await store.list({ limit: 10 })).data[0].routing, record.routing);
  });

  withStore('the request fields a protocol translation dropped come back as inserted; absent when none', async (t, store) => {
    const dropped = makeRecord({ time: at(0), operation: 'messages', dropped_fields: ['top_k', 'cache_control'] });
    const plain = makeRecord({ time: at(1) });
    await store.insert([dropped, plain]);
    t.deepEqual((await store.get(dropped.id))?.dropped_fields, ['top_k', 'cache_control']);
    t.false('dropped_fields' in ((await store.get(plain.id)) ?? {}));
  });

  withStore('insert is idempotent by id (a replayed batch is not counted twice)', async (t, store) => {
    const batch = Array.from({ length: 50 }, (_, index) => makeRecord({ time: at(index), request_body: 'x' }));
    await store.insert(batch);
    await store.insert([...batch.slice(10, 20), makeRecord({ time: at(99) })]);
    t.is(await store.count(), 51);
  });

  withStore('list is newest first with keyset pagination, ties broken by id, no row twice', async (t, store) => {
    const records: LogRecord[] = [];
    for (let index = 0; index < 25; index++) records.push(makeRecord({ time: at(Math.floor(index / 3) * 1000) }));
    await store.insert(records);
    const expected = [...records].sort((a, b) => b.time.localeCompare(a.time) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0)).map((r) => r.id);
    const { ids, pages } = await listAll(store, { limit: 10 });
    t.deepEqual(ids, expected);
    t.is(pages, 3);
    const exact = await store.list({ limit: 25 });
    t.is(exact.nextCursor, null, 'no cursor when the page holds the last row');
  });

  withStore('every filter narrows to exactly the matching rows', async (t, store) => {
    const records = [
      makeRecord({ time: at(0), model: 'gpt-4o', provider: 'openai', status: 200 }),
      makeRecord({ time: at(1000), model: 'gpt-4o-mini', provider: 'openai', status: 404, outcome: 'error' }),
      makeRecord({ time: at(2000), model: 'claude', provider: 'anthropic', status: 502, outcome: 'error' }),
      makeRecord({ time: at(3000), caller_type: 'virtual-key', key_id: 'vk_a', key_name: 'a', metadata: { team: 'red' } }),
      makeRecord({ time: at(4000), caller_type: 'virtual-key', key_id: 'vk_b', key_name: 'b', metadata: { team: 'blue' } }),
      makeRecord({ time: at(5000), caller_type: null, provider: null, model: null, status: 401, outcome: 'error', trace_id: 'the-trace' }),
    ];
    await store.insert(records);
    const ids = async (query: Omit<LogQuery, 'limit'>) => (await listAll(store, { limit: 2, ...query })).ids.sort();
    const of = (...indexes: number[]) => indexes.map((index) => records[index].id).sort();
    t.deepEqual(await ids({ statusClass: 2 }), of(0, 3, 4));
    t.deepEqual(await ids({ statusClass: 4 }), of(1, 5));
    t.deepEqual(await ids({ statusClass: 5 }), of(2));
    t.deepEqual(await ids({ provider: 'anthropic' }), of(2));
    t.deepEqual(await ids({ model: 'gpt-4o' }), of(0));
    t.deepEqual(await ids({ key: 'vk_b' }), of(4));
    t.deepEqual(await ids({ key: 'account' }), of(0, 1, 2));
    t.deepEqual(await ids({ traceId: 'the-trace' }), of(5));
    t.deepEqual(await ids({ metadataKey: 'team', metadataValue: 'red' }), of(3));
    t.deepEqual(await ids({ metadataKey: 'team' }), of(3, 4));
    t.deepEqual(await ids({ from: BASE + 1000, to: BASE + 3000 }), of(1, 2));
    t.deepEqual(await ids({ provider: 'openai', statusClass: 2, from: BASE + 500 }), of(3, 4));
    t.deepEqual(await ids({ model: 'nothing' }), []);
  });

  withStore('usage: buckets per group with requests, errors, exact p50/p95, tokens and cost', async (t, store) => {
    const latencies = [10, 20, 30, 40, 100];
    const records = latencies.map((latency, index) =>
      makeRecord({ time: at(index * 1000), model: 'm1', latency_ms: latency, status: index === 4 ? 500 : 200, prompt_tokens: 10, completion_tokens: 2, cost_usd: 0.5 }),
    );
    records.push(makeRecord({ time: at(61_000), model: 'm2', latency_ms: 7, prompt_tokens: null, completion_tokens: null, total_tokens: null }));
    records.push(makeRecord({ time: at(-1), model: 'm1' }), makeRecord({ time: at(120_000), model: 'm1' })); // outside the range
    await store.insert(records);
    const cells = await store.usage({ from: BASE, to: BASE + 120_000, bucketMs: 60_000, groupBy: 'model' });
    const sorted = cells.sort((a, b) => a.group.localeCompare(b.group) || a.bucket - b.bucket);
    t.is(sorted.length, 2);
    t.like(sorted[0], { group: 'm1', bucket: BASE, requests: 5, errors: 1, promptTokens: 50, completionTokens: 10 });
    t.is(sorted[0].p50Ms, 30);
    t.is(Math.round(sorted[0].p95Ms * 1000) / 1000, 88); // 40 + 0.8 * (100 - 40)
    t.is(Math.round(sorted[0].costUsd * 1000) / 1000, 2.5);
    t.like(sorted[1], { group: 'm2', bucket: BASE + 60_000, requests: 1, errors: 0, p50Ms: 7, p95Ms: 7, promptTokens: 0, costUsd: 0 });
    const byKey = await store.usage({ from: BASE, to: BASE + 120_000, bucketMs: 120_000, groupBy: 'key' });
    t.deepEqual(byKey.map((cell) => [cell.group, cell.requests]), [['account', 6]]);
  });

  withStore('the response cache: statuses and savings round-trip, and usage counts hits, misses and what the hits saved', async (t, store) => {
    const statuses: Array<[string | null, number | null]> = [
      ['MISS', null],
      ['HIT', 0.25],
      ['SEMANTIC-HIT', 0.5],
      ['MISS', null],
      ['BYPASS', null],
      ['REFRESH', null],
      [null, null],
    ];
    const records = statuses.map(([status, saved], index) => makeRecord({ time: at(index * 1000), cache_status: status, cache_saved_usd: saved }));
    await store.insert(records);
    const hit = await store.get(records[1].id);
    t.is(hit?.cache_status, 'HIT');
    t.is(hit?.cache_saved_usd, 0.25);
    t.is((await store.get(records[6].id))?.cache_status, null);
    const [cell] = await store.usage({ from: BASE, to: BASE + 60_000, bucketMs: 60_000, groupBy: 'none' });
    t.like(cell, { requests: 7, cacheHits: 2, cacheMisses: 2 });
    t.is(Math.round(cell.savedUsd * 1000) / 1000, 0.75);
  });

  withStore(
    'retention deletes rows older than the age limit, with their bodies',
    async (t, store) => {
      const old = makeRecord({ time: at(0), request_body: 'old body', metadata: { a: 'b' } });
      const fresh = makeRecord({ time: at(120_000), request_body: 'new body' });
      await store.insert([old, fresh]);
      t.is(await store.prune(BASE + 130_000), 1);
      t.is(await store.get(old.id), undefined);
      t.is((await store.get(fresh.id))?.request_body, 'new body');
      t.deepEqual((await store.list({ limit: 10, metadataKey: 'a' })).data, []);
      t.is(await store.count(), 1);
    },
    60_000,
  );
}

test('sqlite: retention keeps the database under its size cap by deleting the oldest rows', async (t) => {
  const path = join(mkdtempSync(join(tmpdir(), 'log-store-')), 'logs.db');
  const maxBytes = 2 * 1024 * 1024;
  const store = new SqliteLogStore(path, { maxAgeMs: 0, maxBytes });
  await store.init();
  const body = 'x'.repeat(2000);
  const records = Array.from({ length: 3000 }, (_, index) => makeRecord({ time: at(index), request_body: body }));
  for (let index = 0; index < records.length; index += 500) await store.insert(records.slice(index, index + 500));
  t.true(store.usedBytes() > maxBytes, 'the test data exceeds the cap');
  const deleted = await store.prune();
  t.true(deleted > 0);
  t.true(store.usedBytes() <= maxBytes * 0.9, `used ${store.usedBytes()} bytes`);
  const newest = await store.list({ limit: 1 });
  t.is(newest.data[0].id, records.at(-1)!.id, 'the newest rows are kept');
  t.is(await store.get(records[0].id), undefined, 'the oldest rows went first');
  await store.close();
});

test('sqlite: a file that is not a database is moved aside and a new one started', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'log-store-'));
  const path = join(directory, 'logs.db');
  writeFileSync(path, 'this is not a database '.repeat(500));
  const warnings: string[] = [];
  const store = new SqliteLogStore(path, undefined, (message) => warnings.push(message));
  await store.init();
  await store.insert([makeRecord()]);
  t.is(await store.count(), 1);
  t.is(warnings.length, 1);
  t.true(readdirSync(directory).some((file) => file.startsWith('logs.db.broken-')));
  await store.close();
});

test('sqlite: a version 2 log database gains the cache and dropped-fields columns when opened', async (t) => {
  const { DatabaseSync } = await import('node:sqlite');
  const path = databaseFile();
  const first = new SqliteLogStore(path);
  await first.init();
  await first.close();
  const database = new DatabaseSync(path);
  database.exec('ALTER TABLE logs DROP COLUMN cache_status; ALTER TABLE logs DROP COLUMN cache_saved_usd; ALTER TABLE logs DROP COLUMN dropped_fields; PRAGMA user_version = 2;');
  database.close();
  const migrated = new SqliteLogStore(path);
  await migrated.init();
  try {
    const record = makeRecord({ cache_status: 'HIT', cache_saved_usd: 0.1, dropped_fields: ['top_k'] });
    await migrated.insert([record]);
    t.like(await migrated.get(record.id), { cache_status: 'HIT', cache_saved_usd: 0.1, dropped_fields: ['top_k'] });
  } finally {
    await migrated.close();
  }
});
