import { mkdtempSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { PostgresLogStore } from '../../core/logs/postgres-store.js';
import type { LogRecord } from '../../core/logs/record.js';
import { REBUILD_SEARCH, SqliteLogStore } from '../../core/logs/sqlite-store.js';
import { SqliteWorkerStore } from '../../core/logs/sqlite-worker-store.js';
import { decodeCursor, encodeCursor, type LogQuery, type LogStore, type UsageCell } from '../../core/logs/store.js';
import { DATABASE_URL, dropSchemas, makeRecord, postgresReachable, uniqueSchema } from './fixtures.js';

// The store's contract, not the database's connect latency, is under test: on a busy 2-core machine a
// backend can take over the default 5 s to start while the whole suite runs.
const CONNECT_TIMEOUT_MS = 30_000;

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
      return new PostgresLogStore({ connectionString: DATABASE_URL, connectTimeoutMs: CONNECT_TIMEOUT_MS, schema, maxAgeMs });
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

  withStore('a row written with `replaces` takes its later states (a batch as it progresses), never an earlier one; a plain write of its id is ignored', async (t, store) => {
    const first = makeRecord({ time: at(0), operation: 'batch', latency_ms: 0, metadata: { 'batch.status': 'validating', job: 'nightly' }, replaces: true });
    await store.insert([first]);
    const later = { ...first, latency_ms: 5000, cost_usd: 0.25, prompt_tokens: 10, metadata: { 'batch.status': 'completed', job: 'nightly' } };
    // Two states in one write, then an earlier one replayed after them (a spill), then a plain write of the id.
    await store.insert([{ ...first, latency_ms: 1000, metadata: { 'batch.status': 'in_progress' } }, later]);
    await store.insert([{ ...first, latency_ms: 2000, metadata: { 'batch.status': 'in_progress' } }]);
    await store.insert([makeRecord({ id: first.id, time: at(0), status: 500 })]);
    const { replaces: _replaces, ...stored } = later;
    t.deepEqual(await store.get(first.id), stored);
    t.is((await store.list({ limit: 10 })).data.length, 1);
    // The metadata index follows the row: the old status is gone, the new one found.
    t.deepEqual((await store.list({ limit: 10, metadataKey: 'batch.status', metadataValue: 'completed' })).data.map((row) => row.id), [first.id]);
    t.is((await store.list({ limit: 10, metadataKey: 'batch.status', metadataValue: 'validating' })).data.length, 0);
    t.is((await store.list({ limit: 10, metadataKey: 'job' })).data.length, 1);
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

  withStore('"all errors" selects status 400 and above and streams that broke after their 200, nothing else', async (t, store) => {
    const records = [
      makeRecord({ time: at(0), status: 200 }),
      makeRecord({ time: at(1000), status: 404, outcome: 'error', error_type: 'invalid_request_error', error_code: 'model_not_found', error_message: 'no such model' }),
      makeRecord({ time: at(2000), status: 502, outcome: 'error', error_type: 'upstream_error' }),
      makeRecord({ time: at(3000), status: 200, outcome: 'stream_error', streaming: true, error_type: 'upstream_error', error_message: 'stream cut' }),
      makeRecord({ time: at(4000), status: 499, outcome: 'client_closed' }),
      makeRecord({ time: at(5000), status: 304 }),
    ];
    await store.insert(records);
    const ids = async (query: Omit<LogQuery, 'limit'>) => (await listAll(store, { limit: 2, ...query })).ids.sort();
    const of = (...indexes: number[]) => indexes.map((index) => records[index].id).sort();
    t.deepEqual(await ids({ errors: true }), of(1, 2, 3, 4));
    t.deepEqual(await ids({ errors: true, statusClass: 5 }), of(2));
    t.deepEqual(await ids({ errors: true, from: BASE + 2500 }), of(3, 4));
  });

  withStore('search finds the rows whose stored bodies hold every word, with the other filters and keyset pages', async (t, store) => {
    const body = (content: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
    const records = [
      makeRecord({ time: at(0), request_body: body('The quick brown fox'), response_body: '{"answer":"jumps over the lazy dog"}' }),
      makeRecord({ time: at(1000), request_body: body('A QUICK question about invoices'), response_body: null, model: 'claude' }),
      makeRecord({ time: at(2000), request_body: null, response_body: '{"error":{"message":"quota exceeded for invoices","code":"insufficient_quota"}}', status: 429, outcome: 'error', error_type: 'rate_limit_error' }),
      makeRecord({ time: at(3000), request_body: null, response_body: null, error_message: 'quick' }),
      ...Array.from({ length: 7 }, (_, index) => makeRecord({ time: at(4000 + index * 1000), request_body: body(`needle number ${index}`), metadata: { batch: 'n' } })),
    ];
    await store.insert(records);
    const ids = async (query: Omit<LogQuery, 'limit'>, limit = 2) => (await listAll(store, { limit, ...query })).ids.sort();
    const of = (...indexes: number[]) => indexes.map((index) => records[index].id).sort();
    t.deepEqual(await ids({ search: 'quick' }), of(0, 1), 'case-insensitive, in request bodies only where the row has them');
    t.deepEqual(await ids({ search: 'lazy dog' }), of(0), 'every word, in the response body');
    t.deepEqual(await ids({ search: 'quick invoices' }), of(1));
    t.deepEqual(await ids({ search: 'invoices' }), of(1, 2));
    t.deepEqual(await ids({ search: 'insufficient_quota' }), of(2), 'an error code is found as typed');
    t.deepEqual(await ids({ search: 'invoices', statusClass: 4 }), of(2), 'with a status filter');
    t.deepEqual(await ids({ search: 'invoices', errors: true }), of(2), 'with the errors filter');
    t.deepEqual(await ids({ search: 'invoices', model: 'claude' }), of(1), 'with a model filter');
    t.deepEqual(await ids({ search: 'quick', from: BASE + 500 }), of(1), 'with a time range');
    t.deepEqual(await ids({ search: 'nowhere' }), []);
    t.deepEqual(await ids({ search: 'gpt-4o-mini quick' }), of(0, 1), 'a hyphenated word');
    t.deepEqual(await ids({ search: '"quick" OR dog*' }), [], 'operators are words, not syntax');
    // Seven matches over pages of two: each once, newest first.
    const needles = [4, 5, 6, 7, 8, 9, 10];
    const { ids: paged, pages } = await listAll(store, { limit: 2, search: 'needle' });
    t.deepEqual(paged, needles.map((index) => records[index].id).reverse());
    t.is(pages, 4);
    t.deepEqual(await ids({ search: 'needle', metadataKey: 'batch', metadataValue: 'n' }, 3), of(...needles), 'with a metadata filter');
  });

  withStore('search reads the string values of JSON bodies (not keys, escapes decoded) and other bodies as text; a split word is found as typed', async (t, store) => {
    const chat = (model: string, content: string) => JSON.stringify({ model, messages: [{ role: 'user', content }] });
    const records = [
      makeRecord({ time: at(0), request_body: chat('gpt-4o', 'line one\nsecond line: Invoice-42 was paid') }),
      makeRecord({ time: at(1000), request_body: chat('gpt-4', '4o is not gpt at all'), response_body: '{"id":"chatcmpl-9","choices":[{"finish_reason":"stop"}]}' }),
      makeRecord({ time: at(2000), request_body: 'plain text that mentions a role and GPT-4o', response_body: null }),
      // JSON the size cap cut: no longer valid, read as text (keys included).
      makeRecord({ time: at(3000), request_body: '{"messages":[{"role":"user","content":"cut short gpt-4o…[truncated, 99999 in all]', response_body: null }),
    ];
    await store.insert(records);
    const ids = async (search: string) => (await listAll(store, { limit: 2, search })).ids.sort();
    const of = (...indexes: number[]) => indexes.map((index) => records[index].id).sort();
    t.deepEqual(await ids('gpt-4o'), of(0, 2, 3), 'the tokens gpt and 4o apart (row 1) are not the word');
    t.deepEqual(await ids('GPT-4O'), of(0, 2, 3), 'in any case');
    t.deepEqual(await ids('(gpt-4o)'), of(0, 2, 3), 'punctuation around a word is not part of it');
    t.deepEqual(await ids('gpt 4o'), of(0, 1, 2, 3), 'two words, each anywhere');
    t.deepEqual(await ids('role'), of(2, 3), 'a JSON key is not a word of the body');
    t.deepEqual(await ids('finish_reason'), [], 'nor one with punctuation inside');
    t.deepEqual(await ids('stop chatcmpl-9'), of(1), 'string values are, ids included');
    t.deepEqual(await ids('second invoice-42'), of(0), 'a word after an escaped line break');
    t.deepEqual(await ids('user'), of(0, 1, 3), 'a value is a word wherever it is');
  });

  withStore('a word in thousands of bodies pages like a rare one: every match once, newest first, with filters', async (t, store) => {
    const records = Array.from({ length: 2300 }, (_, index) =>
      makeRecord({
        time: at(index * 10),
        request_body: index % 23 === 0 ? 'plain words only' : `everywhere ${index % 100 === 1 ? 'seldom' : ''}`,
        status: index % 50 === 0 ? 500 : 200,
      }),
    );
    for (let index = 0; index < records.length; index += 500) await store.insert(records.slice(index, index + 500));
    const newestFirst = (rows: LogRecord[]) => rows.map((row) => row.id).reverse();
    const common = records.filter((record) => record.request_body!.includes('everywhere'));
    t.true(common.length > 2000);
    const { ids, pages } = await listAll(store, { limit: 500, search: 'everywhere' });
    t.deepEqual(ids, newestFirst(common));
    t.is(pages, 5);
    t.deepEqual((await listAll(store, { limit: 7, search: 'everywhere', errors: true })).ids, newestFirst(common.filter((record) => record.status === 500)));
    t.deepEqual((await listAll(store, { limit: 7, search: 'everywhere seldom' })).ids, newestFirst(common.filter((record) => record.request_body!.includes('seldom'))));
  });

  withStore('bodies() gives the stored bodies of the ids asked for, leaving out rows without any', async (t, store) => {
    const withBodies = makeRecord({ time: at(0), request_body: 'req "one"', response_body: 'resp, one' });
    const requestOnly = makeRecord({ time: at(1), request_body: 'req two', response_body: null });
    const none = makeRecord({ time: at(2) });
    await store.insert([withBodies, requestOnly, none]);
    const found = (await store.bodies([withBodies.id, requestOnly.id, none.id, 'no-such-id'])).sort((a, b) => (a.id === withBodies.id ? -1 : b.id === withBodies.id ? 1 : 0));
    t.deepEqual(found, [
      { id: withBodies.id, request_body: 'req "one"', response_body: 'resp, one' },
      { id: requestOnly.id, request_body: 'req two', response_body: null },
    ]);
    t.deepEqual(await store.bodies([]), []);
  });

  withStore('search forgets the bodies retention deleted', async (t, store) => {
    const old = makeRecord({ time: at(0), request_body: 'obsolete zebra' });
    const fresh = makeRecord({ time: at(120_000), request_body: 'current zebra' });
    await store.insert([old, fresh]);
    t.is((await store.list({ limit: 10, search: 'zebra' })).data.length, 2);
    await store.prune(BASE + 130_000);
    t.deepEqual((await store.list({ limit: 10, search: 'zebra' })).data.map((row) => row.id), [fresh.id]);
    t.deepEqual((await store.list({ limit: 10, search: 'obsolete' })).data, []);
  }, 60_000);

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

  withStore('usage split by end user, by a metadata key and by key (with the key’s name), over one bucket spanning the range', async (t, store) => {
    const records = [
      makeRecord({ time: at(0), end_user: 'alice', metadata: { team: 'search', env: 'prod' }, caller_type: 'virtual-key', key_id: 'vk_a', key_name: 'Team A', latency_ms: 10, cost_usd: 0.25 }),
      makeRecord({ time: at(1000), end_user: 'alice', metadata: { team: 'search' }, caller_type: 'virtual-key', key_id: 'vk_a', key_name: 'Team A', latency_ms: 30, cost_usd: 0.25, status: 502 }),
      makeRecord({ time: at(2000), end_user: 'bob', metadata: { team: 'ads' }, caller_type: 'virtual-key', key_id: 'vk_b', key_name: 'Team B', latency_ms: 50, cost_usd: 0.000002 }),
      makeRecord({ time: at(3000), end_user: null, metadata: {}, latency_ms: 70 }),
    ];
    await store.insert(records);
    t.is((await store.get(records[0].id))?.end_user, 'alice');
    t.is((await store.get(records[3].id))?.end_user, null);
    const whole = { from: BASE, to: BASE + 60_000, bucketMs: 60_000 };
    const summary = (cells: UsageCell[]) =>
      Object.fromEntries(cells.map((cell) => [cell.group, { requests: cell.requests, errors: cell.errors, p50: cell.p50Ms, cost: Math.round(cell.costUsd * 1e6) / 1e6, label: cell.label }]));
    t.deepEqual(summary(await store.usage({ ...whole, groupBy: 'user' })), {
      alice: { requests: 2, errors: 1, p50: 20, cost: 0.5, label: undefined },
      bob: { requests: 1, errors: 0, p50: 50, cost: 0.000002, label: undefined },
      '(none)': { requests: 1, errors: 0, p50: 70, cost: 0, label: undefined },
    });
    t.deepEqual(summary(await store.usage({ ...whole, groupBy: 'metadata.team' })), {
      search: { requests: 2, errors: 1, p50: 20, cost: 0.5, label: undefined },
      ads: { requests: 1, errors: 0, p50: 50, cost: 0.000002, label: undefined },
      '(none)': { requests: 1, errors: 0, p50: 70, cost: 0, label: undefined },
    });
    t.deepEqual(summary(await store.usage({ ...whole, groupBy: 'metadata.env' })), {
      prod: { requests: 1, errors: 0, p50: 10, cost: 0.25, label: undefined },
      '(none)': { requests: 3, errors: 1, p50: 50, cost: 0.250002, label: undefined },
    });
    // A key that is in no row's metadata: everything is "(none)".
    t.deepEqual(summary(await store.usage({ ...whole, groupBy: "metadata.no'such" })), { '(none)': { requests: 4, errors: 1, p50: 40, cost: 0.500002, label: undefined } });
    t.deepEqual(summary(await store.usage({ ...whole, groupBy: 'key' })), {
      vk_a: { requests: 2, errors: 1, p50: 20, cost: 0.5, label: 'Team A' },
      vk_b: { requests: 1, errors: 0, p50: 50, cost: 0.000002, label: 'Team B' },
      account: { requests: 1, errors: 0, p50: 70, cost: 0, label: undefined },
    });
  });

  withStore('usageTotals counts several groupings in one call, as usage does with one bucket over the period', async (t, store) => {
    const records = [
      makeRecord({ time: at(0), end_user: 'alice', caller_type: 'virtual-key', key_id: 'vk_a', key_name: 'Team A', model: 'm1', latency_ms: 10, cost_usd: 0.25, cache_status: 'HIT', cache_saved_usd: 0.5 }),
      makeRecord({ time: at(1000), end_user: 'alice', caller_type: 'virtual-key', key_id: 'vk_a', key_name: 'Team A', model: 'm2', latency_ms: 30, cost_usd: 0.25, status: 502, cache_status: 'MISS' }),
      makeRecord({ time: at(2000), end_user: 'bob', model: 'm1', latency_ms: 50, cost_usd: 0.000002 }),
      makeRecord({ time: at(3000), end_user: null, model: 'm1', latency_ms: 70, prompt_tokens: 3, completion_tokens: 4 }),
      makeRecord({ time: at(60_000), end_user: 'carol' }), // after the period
    ];
    await store.insert(records);
    const period = { from: BASE, to: BASE + 60_000 };
    const groupBys = ['none', 'key', 'user', 'model', 'provider'] as const;
    const totals = await store.usageTotals({ ...period, groupBys: [...groupBys] });
    t.is(totals.length, groupBys.length);
    const sorted = (cells: UsageCell[]) => [...cells].sort((a, b) => a.group.localeCompare(b.group)).map((cell) => ({ ...cell, costUsd: Math.round(cell.costUsd * 1e9) }));
    for (const [index, groupBy] of groupBys.entries()) {
      t.deepEqual(sorted(totals[index]), sorted(await store.usage({ ...period, bucketMs: 60_000, groupBy })), groupBy);
    }
    t.like(totals[0][0], { group: 'all', requests: 4, errors: 1, cacheHits: 1, cacheMisses: 1, savedUsd: 0.5, promptTokens: 33, p50Ms: 40 });
    t.like(totals[1].find((cell) => cell.group === 'vk_a'), { label: 'Team A', requests: 2 });
    t.deepEqual((await store.usageTotals({ from: BASE - 60_000, to: BASE, groupBys: ['none', 'user'] })), [[], []]);
    t.deepEqual((await store.usageTotals({ from: BASE - 60_000, to: BASE, groupBys: ['none'] })), [[]]);
    // A team's view: only its keys' rows (also with a metadata grouping); no key, no row.
    t.like((await store.usageTotals({ ...period, groupBys: ['none'], keys: ['vk_a'] }))[0][0], { group: 'all', requests: 2, errors: 1 });
    t.deepEqual((await store.usageTotals({ ...period, groupBys: ['none'], keys: [] })), [[]]);
    t.deepEqual(
      (await store.usage({ ...period, bucketMs: 60_000, groupBy: 'model', keys: ['vk_a'] })).map((cell) => [cell.group, cell.requests]).sort(),
      [['m1', 1], ['m2', 1]],
    );
    t.deepEqual((await store.usage({ ...period, bucketMs: 60_000, groupBy: 'metadata.team', keys: ['vk_b'] })).map((cell) => cell.requests), []);
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

test('sqlite (worker): retention deletes in steps, and a batch sent while it runs is written before it ends', async (t) => {
  const maxBytes = 2 * 1024 * 1024;
  const store = new SqliteWorkerStore(join(mkdtempSync(join(tmpdir(), 'log-store-')), 'logs.db'), { maxAgeMs: 0, maxBytes });
  await store.init();
  const body = 'x'.repeat(2000);
  const records = Array.from({ length: 3000 }, (_, index) => makeRecord({ time: at(index), request_body: body }));
  for (let index = 0; index < records.length; index += 500) await store.insert(records.slice(index, index + 500));
  t.true((await store.usedBytes()) > maxBytes, 'the test data exceeds the cap');

  const finished: string[] = [];
  const pruning = store.prune().then((deleted) => {
    finished.push('prune');
    return deleted;
  });
  const late = makeRecord({ time: at(10_000), request_body: 'sent while retention runs' });
  const inserting = store.insert([late]).then(() => finished.push('insert'));
  const [deleted] = await Promise.all([pruning, inserting]);

  // One pass (a tenth of the rows per step) deletes what is over 90 % of the cap; the writer
  // takes the batch between two steps instead of after the whole pass.
  t.deepEqual(finished, ['insert', 'prune']);
  t.true(deleted > 300, `deleted ${deleted} rows: more than one step's worth`);
  t.true((await store.usedBytes()) <= maxBytes * 0.9);
  t.is((await store.get(late.id))?.request_body, 'sent while retention runs');
  t.is(await store.get(records[0].id), undefined, 'the oldest rows went first');
  t.is((await store.get(records.at(-1)!.id))?.id, records.at(-1)!.id, 'the newest rows are kept');
  await store.close();
});

test('sqlite: retention by age deletes every row past it in steps, rows sharing a millisecond together', async (t) => {
  const store = new SqliteLogStore(join(mkdtempSync(join(tmpdir(), 'log-store-')), 'logs.db'), { maxAgeMs: 60_000, maxBytes: 0 });
  await store.init();
  // 4,500 rows over the age limit, 2,500 of them in one millisecond (more than one step's 2,000),
  // and 10 within it.
  const old = [
    ...Array.from({ length: 2500 }, () => makeRecord({ time: at(0) })),
    ...Array.from({ length: 2000 }, (_, index) => makeRecord({ time: at(1 + index) })),
  ];
  const recent = Array.from({ length: 10 }, (_, index) => makeRecord({ time: at(100_000 + index) }));
  for (let index = 0; index < old.length; index += 1000) await store.insert(old.slice(index, index + 1000));
  await store.insert(recent);
  t.is(await store.prune(BASE + 150_000), 4500);
  t.is(await store.count(), 10);
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

test('sqlite: a version 2 log database gains the cache, dropped-fields and end-user columns when opened', async (t) => {
  const { DatabaseSync } = await import('node:sqlite');
  const path = databaseFile();
  const first = new SqliteLogStore(path);
  await first.init();
  await first.close();
  const database = new DatabaseSync(path);
  database.exec('ALTER TABLE logs DROP COLUMN cache_status; ALTER TABLE logs DROP COLUMN cache_saved_usd; ALTER TABLE logs DROP COLUMN dropped_fields; ALTER TABLE logs DROP COLUMN end_user; PRAGMA user_version = 2;');
  database.close();
  const migrated = new SqliteLogStore(path);
  await migrated.init();
  try {
    const record = makeRecord({ cache_status: 'HIT', cache_saved_usd: 0.1, dropped_fields: ['top_k'], end_user: 'user-7' });
    await migrated.insert([record]);
    t.like(await migrated.get(record.id), { cache_status: 'HIT', cache_saved_usd: 0.1, dropped_fields: ['top_k'], end_user: 'user-7' });
  } finally {
    await migrated.close();
  }
});

(postgres.ok ? test : test.skip)('postgres: a version 4 log schema gains the end-user column and the errors index when opened', async (t) => {
  const schema = uniqueSchema('migrate');
  schemas.push(schema);
  const first = new PostgresLogStore({ connectionString: DATABASE_URL, connectTimeoutMs: CONNECT_TIMEOUT_MS, schema });
  await first.init();
  await first.close();
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`ALTER TABLE ${schema}.logs DROP COLUMN end_user; DROP INDEX ${schema}.logs_errors; DELETE FROM ${schema}.log_schema_version WHERE version >= 5`);
  await client.end();
  const migrated = new PostgresLogStore({ connectionString: DATABASE_URL, connectTimeoutMs: CONNECT_TIMEOUT_MS, schema });
  await migrated.init();
  try {
    const record = makeRecord({ end_user: 'user-9' });
    await migrated.insert([record]);
    t.is((await migrated.get(record.id))?.end_user, 'user-9');
    t.deepEqual((await migrated.list({ limit: 10, errors: true })).data, []);
    const check = new pg.Client({ connectionString: DATABASE_URL });
    await check.connect();
    const indexes = await check.query('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = ANY($2)', [schema, ['logs_errors', 'log_bodies_search']]);
    await check.end();
    t.deepEqual(indexes.rows.map((row) => row.indexname).sort(), ['log_bodies_search', 'logs_errors']);
  } finally {
    await migrated.close();
  }
});

(postgres.ok ? test : test.skip)('postgres: a migration 6 schema has its search index made again over the string values of the bodies', async (t) => {
  const schema = uniqueSchema('migrate7');
  schemas.push(schema);
  const first = new PostgresLogStore({ connectionString: DATABASE_URL, connectTimeoutMs: CONNECT_TIMEOUT_MS, schema });
  await first.init();
  const stored = makeRecord({ time: at(0), request_body: JSON.stringify({ messages: [{ role: 'user', content: 'stored before the upgrade: walrus' }] }) });
  await first.insert([stored]);
  await first.close();
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  // The index of migrations 1 to 6: the whole text of both bodies.
  await client.query(`DROP INDEX ${schema}.log_bodies_search; DROP FUNCTION ${schema}.log_search_vector(text); DELETE FROM ${schema}.log_schema_version WHERE version >= 7;
    CREATE INDEX log_bodies_search ON ${schema}.log_bodies USING GIN (to_tsvector('simple'::regconfig, coalesce(request_body, '') || ' ' || coalesce(response_body, '')))`);
  const migrated = new PostgresLogStore({ connectionString: DATABASE_URL, connectTimeoutMs: CONNECT_TIMEOUT_MS, schema });
  await migrated.init();
  try {
    const index = await client.query('SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2', [schema, 'log_bodies_search']);
    t.regex(String(index.rows[0]?.indexdef), /log_search_vector\(request_body\)/);
    t.deepEqual((await migrated.list({ limit: 10, search: 'walrus' })).data.map((row) => row.id), [stored.id]);
    t.deepEqual((await migrated.list({ limit: 10, search: 'role' })).data, [], 'a JSON key is not searched');
    // A body that is not JSON, or JSON jsonb refuses (a NUL escape), is stored and searched as text.
    const plain = makeRecord({ time: at(1000), request_body: '{"cut": "walrus gpt-4o…[truncated, 99999 in all]', response_body: '{"text":"walrus \\u0000"}' });
    await migrated.insert([plain]);
    t.deepEqual((await migrated.list({ limit: 10, search: 'walrus' })).data.map((row) => row.id), [plain.id, stored.id]);
    t.deepEqual((await migrated.list({ limit: 10, search: 'cut gpt-4o' })).data.map((row) => row.id), [plain.id]);
    // The fallback is an exception block, which parallel workers cannot run: the function must keep them out.
    await client.query("SELECT set_config(name, 'on', false) FROM pg_settings WHERE name IN ('force_parallel_mode', 'debug_parallel_query')");
    const counted = await client.query(`SELECT count(*) AS n FROM ${schema}.log_bodies WHERE ${schema}.log_search_vector(request_body) @@ plainto_tsquery('simple', 'walrus')`);
    t.is(Number(counted.rows[0].n), 2);
  } finally {
    await client.end();
    await migrated.close();
  }
});

test('sqlite: a version 5 log database gains the errors index and the body search index, filled from the bodies it holds', async (t) => {
  const { DatabaseSync } = await import('node:sqlite');
  const path = databaseFile();
  const first = new SqliteLogStore(path);
  await first.init();
  const stored = makeRecord({ request_body: 'stored before the upgrade: walrus' });
  await first.insert([stored]);
  await first.close();
  const database = new DatabaseSync(path);
  database.exec('DROP TRIGGER log_bodies_search_delete; DROP TABLE log_search; DROP INDEX logs_errors; PRAGMA user_version = 5;');
  database.close();
  const migrated = new SqliteLogStore(path);
  await migrated.init();
  try {
    t.deepEqual((await migrated.list({ limit: 10, search: 'walrus' })).data.map((row) => row.id), [stored.id]);
    const later = makeRecord({ request_body: 'after the upgrade: walrus' });
    await migrated.insert([later]);
    t.is((await migrated.list({ limit: 10, search: 'walrus' })).data.length, 2);
    const reader = new DatabaseSync(path);
    t.truthy(reader.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'logs_errors'").get());
    t.is(Number((reader.prepare('PRAGMA user_version').get() as { user_version: number }).user_version), 8);
    reader.close();
  } finally {
    await migrated.close();
  }
});

/** How many times the index holds `word` (a body indexed twice counts twice), read as another client would. */
async function indexedMatches(path: string, word: string): Promise<{ matches: number; indexedTo: number; top: number }> {
  const { DatabaseSync } = await import('node:sqlite');
  const reader = new DatabaseSync(path);
  try {
    const matches = Number((reader.prepare('SELECT count(*) AS n FROM log_search WHERE log_search MATCH ?').get(word) as { n: number }).n);
    const indexedTo = Number((reader.prepare('SELECT indexed_to FROM log_search_state').get() as { indexed_to: number }).indexed_to);
    const top = Number((reader.prepare('SELECT coalesce(max(rowid), 0) AS top FROM log_bodies').get() as { top: number }).top);
    return { matches, indexedTo, top };
  } finally {
    reader.close();
  }
}

test('sqlite: bodies are indexed behind the inserts, in a batch of their own: a search sees every body at once, and without one the batch comes within about a second', async (t) => {
  const path = databaseFile();
  const store = new SqliteLogStore(path);
  await store.init();
  try {
    const first = makeRecord({ request_body: JSON.stringify({ messages: [{ role: 'user', content: 'narwhal one' }] }) });
    await store.insert([first]);
    t.deepEqual(await indexedMatches(path, 'narwhal'), { matches: 0, indexedTo: 0, top: 1 }, 'stored, not yet indexed');
    t.deepEqual((await store.list({ limit: 10, search: 'narwhal' })).data.map((row) => row.id), [first.id], 'a search indexes what is behind first');
    t.deepEqual(await indexedMatches(path, 'narwhal'), { matches: 1, indexedTo: 1, top: 1 });
    const second = makeRecord({ request_body: 'narwhal two' });
    await store.insert([second]);
    const deadline = Date.now() + 5000;
    while ((await indexedMatches(path, 'narwhal')).matches < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    t.deepEqual(await indexedMatches(path, 'narwhal'), { matches: 2, indexedTo: 2, top: 2 }, 'indexed by the delayed batch, with no search');
  } finally {
    await store.close();
  }
});

test('sqlite: two stores on one file (GATEWAY_WORKERS) index each body exactly once, and close indexes what is behind', async (t) => {
  const path = databaseFile();
  const one = new SqliteLogStore(path);
  const two = new SqliteLogStore(path);
  await one.init();
  await two.init();
  try {
    const rows = Array.from({ length: 6 }, (_, index) => makeRecord({ time: at(index * 1000), request_body: `okapi ${index}` }));
    await one.insert(rows.slice(0, 2));
    await two.insert(rows.slice(2, 4));
    await one.insert(rows.slice(4, 5));
    t.is((await two.list({ limit: 10, search: 'okapi' })).data.length, 5, 'the search indexes the other store\'s bodies too');
    await two.insert(rows.slice(5));
    t.is((await one.list({ limit: 10, search: 'okapi' })).data.length, 6);
    t.is((await two.list({ limit: 10, search: 'okapi' })).data.length, 6);
    t.deepEqual(await indexedMatches(path, 'okapi'), { matches: 6, indexedTo: 6, top: 6 }, 'no body indexed twice');
    await one.insert([makeRecord({ request_body: 'okapi last' })]);
    await one.close();
    t.deepEqual(await indexedMatches(path, 'okapi'), { matches: 7, indexedTo: 7, top: 7 }, 'closing indexed the last body');
  } finally {
    await one.close();
    await two.close();
  }
});

test('sqlite: when retention has emptied the bodies and their rowids start again, the new bodies are still indexed', async (t) => {
  const path = databaseFile();
  const store = new SqliteLogStore(path, { maxAgeMs: 60_000, maxBytes: 0 });
  await store.init();
  try {
    const now = Date.now();
    await store.insert(Array.from({ length: 3 }, (_, index) => makeRecord({ time: new Date(now - 10_000 + index).toISOString(), request_body: `old quokka ${index}` })));
    t.is((await store.list({ limit: 10, search: 'quokka' })).data.length, 3);
    t.is(await store.prune(now + 120_000), 3);
    const fresh = makeRecord({ time: new Date(now + 120_000).toISOString(), request_body: 'new quokka' });
    await store.insert([fresh]);
    t.deepEqual(await indexedMatches(path, 'quokka'), { matches: 0, indexedTo: 0, top: 1 }, 'the rowid used again moved the mark back');
    t.deepEqual((await store.list({ limit: 10, search: 'quokka' })).data.map((row) => row.id), [fresh.id]);
  } finally {
    await store.close();
  }
});

test('sqlite: a version 7 log database (each body indexed as it was inserted) gains the mark at its newest body and indexes nothing twice', async (t) => {
  const { DatabaseSync } = await import('node:sqlite');
  const path = databaseFile();
  const first = new SqliteLogStore(path);
  await first.init();
  const stored = makeRecord({ request_body: 'stored before the upgrade: ibex' });
  await first.insert([stored]);
  await first.close();
  const database = new DatabaseSync(path);
  database.exec('DROP TABLE log_search_state; PRAGMA user_version = 7;');
  database.close();
  const migrated = new SqliteLogStore(path);
  await migrated.init();
  try {
    t.deepEqual(await indexedMatches(path, 'ibex'), { matches: 1, indexedTo: 1, top: 1 });
    const later = makeRecord({ request_body: 'after the upgrade: ibex' });
    await migrated.insert([later]);
    t.deepEqual((await migrated.list({ limit: 10, search: 'ibex' })).data.map((row) => row.id).sort(), [stored.id, later.id].sort());
    t.deepEqual(await indexedMatches(path, 'ibex'), { matches: 2, indexedTo: 2, top: 2 });
  } finally {
    await migrated.close();
  }
});

/** The search index of schema versions 5 and 6: the bodies' whole JSON text, with positions, filled by a trigger. */
const VERSION_6_SEARCH = `DROP TRIGGER log_bodies_search_delete; DROP TABLE log_search;
CREATE VIRTUAL TABLE log_search USING fts5(request_body, response_body, content='', contentless_delete=1);
CREATE TRIGGER log_bodies_search_insert AFTER INSERT ON log_bodies BEGIN
  INSERT INTO log_search (rowid, request_body, response_body) VALUES (new.rowid, new.request_body, new.response_body);
END;
CREATE TRIGGER log_bodies_search_delete AFTER DELETE ON log_bodies BEGIN
  DELETE FROM log_search WHERE rowid = old.rowid;
END;
INSERT INTO log_search (rowid, request_body, response_body) SELECT rowid, request_body, response_body FROM log_bodies;
PRAGMA user_version = 6;`;

test('sqlite: a version 6 log database has its search index made again over the string values, without the insert trigger', async (t) => {
  const { DatabaseSync } = await import('node:sqlite');
  const path = databaseFile();
  const first = new SqliteLogStore(path);
  await first.init();
  const now = Date.now();
  const stored = makeRecord({ time: new Date(now - 600_000).toISOString(), request_body: JSON.stringify({ messages: [{ role: 'user', content: 'stored before the upgrade: walrus' }] }) });
  await first.insert([stored]);
  await first.close();
  const database = new DatabaseSync(path);
  database.exec(VERSION_6_SEARCH);
  t.truthy(database.prepare("SELECT rowid FROM log_search WHERE log_search MATCH 'role'").get(), 'the old index holds the JSON keys');
  database.close();
  const migrated = new SqliteLogStore(path, { maxAgeMs: 3_600_000, maxBytes: 0 });
  await migrated.init();
  try {
    t.deepEqual((await migrated.list({ limit: 10, search: 'walrus' })).data.map((row) => row.id), [stored.id], 'the stored body is indexed again');
    t.deepEqual((await migrated.list({ limit: 10, search: 'role' })).data, [], 'without its keys');
    const later = makeRecord({ time: new Date(now).toISOString(), request_body: 'after the upgrade: walrus' });
    await migrated.insert([later]);
    t.deepEqual((await migrated.list({ limit: 10, search: 'walrus' })).data.map((row) => row.id), [later.id, stored.id]);
    await migrated.prune(now + 3_600_000 - 300_000); // retention's delete reaches the new index
    t.deepEqual((await migrated.list({ limit: 10, search: 'walrus' })).data.map((row) => row.id), [later.id]);
    const reader = new DatabaseSync(path);
    const schema = reader.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'log_bodies_search%' OR name = 'log_search' ORDER BY name").all() as Array<{ name: string }>;
    const deleteMerge = reader.prepare("SELECT v FROM log_search_config WHERE k = 'deletemerge'").get() as { v: number } | undefined;
    reader.close();
    t.deepEqual(schema.map((row) => row.name), ['log_bodies_search_delete', 'log_search'], 'the insert trigger is gone: the store indexes with a statement of its own');
    t.is(deleteMerge?.v, 30);
  } finally {
    await migrated.close();
  }
});

test('sqlite: an open that finds another process writing the file (a worker migrating it) fails at once, and the next one migrates', async (t) => {
  const { DatabaseSync } = await import('node:sqlite');
  const path = databaseFile();
  const first = new SqliteLogStore(path);
  await first.init();
  const stored = makeRecord({ request_body: JSON.stringify({ messages: [{ role: 'user', content: 'walrus' }] }) });
  await first.insert([stored]);
  await first.close();
  const other = new DatabaseSync(path);
  other.exec(VERSION_6_SEARCH);
  other.exec('BEGIN IMMEDIATE');
  const store = new SqliteLogStore(path);
  try {
    await t.throwsAsync(store.init(), { message: /locked/ });
    other.exec('ROLLBACK');
    other.close();
    await store.init();
    t.deepEqual((await store.list({ limit: 10, search: 'walrus' })).data.map((row) => row.id), [stored.id]);
    t.deepEqual((await store.list({ limit: 10, search: 'role' })).data, []);
  } finally {
    if (other.isOpen) other.close();
    await store.close();
  }
});

test('sqlite: REBUILD_SEARCH re-indexes every stored body in plain SQL (after a full VACUUM)', async (t) => {
  const { DatabaseSync } = await import('node:sqlite');
  const path = databaseFile();
  const store = new SqliteLogStore(path);
  await store.init();
  const records = [
    makeRecord({ time: at(0), request_body: JSON.stringify({ messages: [{ role: 'user', content: 'tapir gpt-4o' }] }) }),
    makeRecord({ time: at(1000), request_body: 'plain tapir', response_body: JSON.stringify({ error: { code: 'insufficient_quota' } }) }),
  ];
  await store.insert(records);
  await store.close();
  const searched = async () => {
    const reopened = new SqliteLogStore(path);
    await reopened.init();
    try {
      t.deepEqual((await reopened.list({ limit: 10, search: 'tapir' })).data.map((row) => row.id), [records[1].id, records[0].id]);
      t.deepEqual((await reopened.list({ limit: 10, search: 'gpt-4o' })).data.map((row) => row.id), [records[0].id]);
      t.deepEqual((await reopened.list({ limit: 10, search: 'insufficient_quota' })).data.map((row) => row.id), [records[1].id]);
      t.deepEqual((await reopened.list({ limit: 10, search: 'role' })).data, []);
    } finally {
      await reopened.close();
    }
  };
  // Another client, without the gateway's functions: the shell an operator would use.
  const database = new DatabaseSync(path);
  database.exec(`INSERT INTO log_search (log_search) VALUES ('delete-all'); VACUUM;`);
  database.exec(REBUILD_SEARCH);
  database.close();
  await searched();
  // The other way docs/logs.md gives: the table dropped by hand (its delete trigger stays) is made again as the store opens.
  const shell = new DatabaseSync(path);
  shell.exec('DROP TABLE log_search;');
  shell.close();
  await searched();
});

const searchSwitch: Array<[string, (search: boolean, place: string) => LogStore, boolean]> = [
  ['sqlite', (search, place) => new SqliteLogStore(place, undefined, undefined, search), true],
  ['sqlite-worker', (search, place) => new SqliteWorkerStore(place, undefined, undefined, search), true],
  ['postgres', (search, place) => new PostgresLogStore({ connectionString: DATABASE_URL, connectTimeoutMs: CONNECT_TIMEOUT_MS, schema: place, search }), postgres.ok],
];
for (const [name, make, available] of searchSwitch) {
  (available ? test : test.skip)(`${name}: with search off the index is dropped and a search refused; on again, it is rebuilt from the stored bodies`, async (t) => {
    const place = name === 'postgres' ? uniqueSchema('search') : databaseFile();
    if (name === 'postgres') schemas.push(place);
    const first = make(true, place);
    await first.init();
    const before = makeRecord({ time: at(0), request_body: 'indexed narwhal' });
    await first.insert([before]);
    t.true(first.searchable);
    await first.close();

    const off = make(false, place);
    await off.init();
    t.false(off.searchable);
    const during = makeRecord({ time: at(1000), request_body: 'unindexed narwhal' });
    await off.insert([during]);
    await t.throwsAsync(off.list({ limit: 10, search: 'narwhal' }), { message: /search is off/ });
    t.is((await off.list({ limit: 10 })).data.length, 2, 'the rest works');
    await off.close();

    const on = make(true, place);
    await on.init();
    try {
      t.deepEqual((await on.list({ limit: 10, search: 'narwhal' })).data.map((row) => row.id), [during.id, before.id]);
    } finally {
      await on.close();
    }
  });
}
