/**
 * Log store benchmark: write throughput of each store, then the dashboard's queries on a table of
 * BENCH_LOG_ROWS rows (default 1 000 000) spread over the last 7 days.
 *
 *   npm run build && npx node dist/bench/log-store.js
 *
 * BENCH_LOG_ROWS sets the table size, BENCH_LOG_STORES=sqlite|postgres runs one store.
 *
 * PostgreSQL is taken from DATABASE_URL (default the loopback server), in a schema of its own that
 * is dropped at the end; it is skipped with a message when unreachable.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresLogStore } from '../core/logs/postgres-store.js';
import { timeOrderedId } from '../core/ids.js';
import type { LogRecord } from '../core/logs/record.js';
import { SqliteWorkerStore } from '../core/logs/sqlite-worker-store.js';
import type { LogQuery, LogStore, UsageQuery } from '../core/logs/store.js';
import { KEYS, MODELS, PROVIDERS, random } from './log-rows.js';
import { busyPercent, readMachineCpuTimes } from './machine.js';
import { connectOrSkip } from './postgres-probe.js';

const ROWS = Number(process.env.BENCH_LOG_ROWS ?? 1_000_000);
const BATCH = 500;
const THROUGHPUT_ROWS = Math.min(100_000, ROWS);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DAY = 86_400_000;
/** `BENCH_LOG_STORES=sqlite` or `postgres` to run one. */
const STORES = (process.env.BENCH_LOG_STORES ?? 'sqlite,postgres').split(',');

const BODY = JSON.stringify({ model: 'model-1', messages: [{ role: 'user', content: 'Summarise the following text. '.repeat(8) }] });

/** Rows in time order over the 7 days before `now`, as traffic arrives (with a little jitter). */
function makeRows(count: number, now: number, next: () => number, offset: number): LogRecord[] {
  return Array.from({ length: count }, (_, index): LogRecord => {
    const key = next() < 0.3 ? undefined : KEYS[Math.floor(next() * KEYS.length)];
    const roll = next();
    const status = roll < 0.93 ? 200 : roll < 0.97 ? 429 : roll < 0.99 ? 400 : 502;
    const latency = 50 + next() * 2000;
    return {
      id: timeOrderedId(),
      time: new Date(now - 7 * DAY + Math.floor(((offset + index) * 7 * DAY) / ROWS) + Math.floor(next() * 1000)).toISOString(),
      trace_id: `bench-trace-${offset + index}`,
      caller_type: key ? 'virtual-key' : 'account',
      key_id: key ?? null,
      key_name: key ? `key ${key}` : null,
      end_user: index % 2 === 0 ? `user-${(offset + index) % 997}` : null,
      provider: PROVIDERS[Math.floor(next() * PROVIDERS.length)],
      model: MODELS[Math.floor(next() * MODELS.length)],
      operation: 'chat',
      method: 'POST',
      path: '/v1/chat/completions',
      status,
      outcome: status < 400 ? 'ok' : 'error',
      error_type: status < 400 ? null : 'upstream_error',
      error_code: null,
      error_message: status < 400 ? null : 'failed',
      streaming: next() < 0.5,
      latency_ms: latency,
      gateway_ms: 0.4 + next(),
      upstream_ms: latency - 1,
      ttft_ms: null,
      prompt_tokens: Math.floor(next() * 2000),
      completion_tokens: Math.floor(next() * 500),
      cached_tokens: null,
      reasoning_tokens: null,
      total_tokens: 0,
      cost_usd: next() / 100,
      cache_status: null,
      cache_saved_usd: null,
      metadata: next() < 0.2 ? { team: `team-${Math.floor(next() * 10)}` } : {},
      guardrails: [],
      // One row in ten carries bodies, as with body logging on for some keys.
      request_body: index % 10 === 0 ? BODY : null,
      response_body: index % 10 === 0 ? '{"choices":[{"message":{"content":"ok"}}]}' : null,
    };
  });
}

async function load(store: LogStore, rows: number, now: number): Promise<{ throughput: number; loadRate: number }> {
  const next = random(42);
  let written = 0;
  let throughput = 0;
  const started = performance.now();
  while (written < rows) {
    const batch = makeRows(Math.min(BATCH, rows - written), now, next, written);
    await store.insert(batch);
    written += batch.length;
    if (written === THROUGHPUT_ROWS) throughput = THROUGHPUT_ROWS / ((performance.now() - started) / 1000);
    if (written % 100_000 === 0) process.stdout.write(`  ${store.kind}: ${written} rows\n`);
  }
  return { throughput, loadRate: rows / ((performance.now() - started) / 1000) };
}

async function time<T>(run: () => Promise<T>, repeats = 5): Promise<{ first: number; median: number; result: T }> {
  const times: number[] = [];
  let result!: T;
  for (let index = 0; index < repeats; index++) {
    const started = performance.now();
    result = await run();
    times.push(performance.now() - started);
  }
  const first = times[0];
  times.sort((a, b) => a - b);
  return { first, median: times[Math.floor(times.length / 2)], result };
}

async function queries(store: LogStore, now: number): Promise<Array<[string, string]>> {
  const page = (query: Omit<LogQuery, 'limit'>) => () => store.list({ limit: 50, ...query });
  const dayEnd = Math.ceil(now / 900_000) * 900_000;
  const usage = (groupBy: UsageQuery['groupBy']) => () => store.usage({ from: dayEnd - DAY, to: dayEnd, bucketMs: 900_000, groupBy });
  const firstPage = await store.list({ limit: 50 });
  const lines: Array<[string, string]> = [];
  const report = async (label: string, run: () => Promise<unknown>, rowsOf: (result: any) => number) => {
    const measured = await time(run);
    lines.push([label, `${measured.median.toFixed(1)} ms median (first ${measured.first.toFixed(1)} ms), ${rowsOf(measured.result)} rows`]);
  };
  const listed = (result: { data: unknown[] }) => result.data.length;
  await report('list, first page (50)', page({}), listed);
  await report('list, second page (cursor)', page({ cursor: firstPage.nextCursor ?? undefined }), listed);
  await report('filter by model', page({ model: 'model-7' }), listed);
  await report('filter by model + 5xx', page({ model: 'model-7', statusClass: 5 }), listed);
  await report('filter by key', page({ key: 'vk_3' }), listed);
  await report('filter by trace id', page({ traceId: `bench-trace-${Math.floor(ROWS / 2)}` }), listed);
  await report('filter by metadata team=team-3', page({ metadataKey: 'team', metadataValue: 'team-3' }), listed);
  await report('usage for a day, by model', usage('model'), (cells: unknown[]) => cells.length);
  await report('usage for a day, no grouping', usage('none'), (cells: unknown[]) => cells.length);
  await report('usage for a day, by end user', usage('user'), (cells: unknown[]) => cells.length);
  await report('usage for a day, by metadata.team', usage('metadata.team'), (cells: unknown[]) => cells.length);
  // What GET /admin/usage/summary asks of the store for a day: the period overall and by key, end
  // user and model (one scan), and the period before (another), together.
  await report(
    'usage summary for a day (2 scans)',
    () => Promise.all([store.usageTotals({ from: dayEnd - DAY, to: dayEnd, groupBys: ['none', 'key', 'user', 'model'] }), store.usageTotals({ from: dayEnd - 2 * DAY, to: dayEnd - DAY, groupBys: ['none'] })]),
    (results: unknown[][][]) => results.flat().reduce((total, cells) => total + cells.length, 0),
  );
  await report('detail (get by id)', () => store.get(firstPage.data[0].id), (record) => (record ? 1 : 0));
  return lines;
}

async function benchStore(name: string, store: LogStore, after?: () => Promise<string>): Promise<void> {
  const now = Date.now();
  await store.init();
  const cpuBefore = readMachineCpuTimes();
  const { throughput, loadRate } = await load(store, ROWS, now);
  const cpu = busyPercent(cpuBefore, readMachineCpuTimes());
  const extra = after ? await after() : '';
  const lines = await queries(store, now);
  process.stdout.write(`\n${name}\n`);
  process.stdout.write(`  write throughput (first ${THROUGHPUT_ROWS} rows, batches of ${BATCH}): ${Math.round(throughput)} entries/s\n`);
  process.stdout.write(`  load of ${ROWS} rows: ${Math.round(loadRate)} entries/s (machine busy ${cpu.toFixed(0)}%)${extra}\n`);
  for (const [label, figure] of lines) process.stdout.write(`  ${label.padEnd(34)} ${figure}\n`);
  process.stdout.write('\n');
  await store.close();
}

async function main(): Promise<void> {
  process.stdout.write(`log store benchmark: ${ROWS} rows over 7 days, node ${process.version}\n`);
  const directory = mkdtempSync(join(tmpdir(), 'bench-log-store-'));
  const path = join(directory, 'logs.db');
  try {
    if (STORES.includes('sqlite')) await benchStore('SQLite (node:sqlite, WAL, in its worker thread)', new SqliteWorkerStore(path), async () => `, file ${(statSync(path).size / 1024 / 1024).toFixed(0)} MB`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }

  if (!STORES.includes('postgres')) return;
  const schema = `gw_bench_${process.pid}`;
  const probe = await connectOrSkip(DATABASE_URL);
  if (!probe) return;
  try {
    await benchStore('PostgreSQL', new PostgresLogStore({ connectionString: DATABASE_URL, schema }), async () => {
      // As autovacuum would soon after a bulk load; without statistics the planner guesses.
      await probe.query(`ANALYZE ${schema}.logs`);
      const size = await probe.query(`SELECT pg_total_relation_size('${schema}.logs') + pg_total_relation_size('${schema}.log_bodies') AS bytes`);
      return `, tables ${(Number(size.rows[0].bytes) / 1024 / 1024).toFixed(0)} MB`;
    });
  } finally {
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await probe.end();
  }
}

await main();
