/**
 * What the body search index costs: write throughput, time per row and size on disk of each log
 * store with its search index and without it (the store opened with `logs.search` off), on rows
 * that all carry bodies (about 1.2 KB of chat JSON each), plus the time of a search.
 *
 *   npm run build && npx node dist/bench/log-search.js
 *
 * BENCH_SEARCH_ROWS (default 100 000) rows in batches of 500, as the log writer sends them.
 * BENCH_LOG_STORES=sqlite|postgres runs one store. SQLite runs in this thread (the time per row is
 * what the log worker thread spends); PostgreSQL is the loopback server (DATABASE_URL), in a schema
 * of its own, dropped at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresLogStore } from '../core/logs/postgres-store.js';
import { SqliteLogStore } from '../core/logs/sqlite-store.js';
import type { LogStore } from '../core/logs/store.js';
import { makeRows, random, WORDS } from './log-rows.js';
import { busyPercent, readMachineCpuTimes } from './machine.js';
import { connectOrSkip } from './postgres-probe.js';

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 100_000);
const BATCH = 500;
const STORES = (process.env.BENCH_LOG_STORES ?? 'sqlite,postgres').split(',');
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Result {
  rowsPerSecond: number;
  microsPerRow: number;
  cpuMicrosPerRow: number;
  bytes: number;
  searchMs: { unique: number; tenth: number; common: number; split: number; apart: number };
  busy: number;
}

async function load(store: LogStore): Promise<{ rowsPerSecond: number; microsPerRow: number; cpuMicrosPerRow: number; busy: number }> {
  const next = random(7);
  const options = { start: Date.now() - 86_400_000, spanMs: 86_400_000, total: ROWS, bodyShare: 1 };
  // Rows are made before the clock starts: only the store's work is timed.
  const batches = Array.from({ length: Math.ceil(ROWS / BATCH) }, (_, index) => makeRows(Math.min(BATCH, ROWS - index * BATCH), index * BATCH, next, options));
  const before = readMachineCpuTimes();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const batch of batches) await store.insert(batch);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { rowsPerSecond: ROWS / seconds, microsPerRow: (seconds * 1e6) / ROWS, cpuMicrosPerRow: (used.user + used.system) / ROWS, busy: busyPercent(before, readMachineCpuTimes()) };
}

async function median(run: () => Promise<unknown>, repeats = 5): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < repeats; index++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(repeats / 2)];
}

async function searchTimes(store: LogStore): Promise<Result['searchMs']> {
  return {
    // The answer id of one row: a word in one body.
    unique: await median(() => store.list({ limit: 50, search: `chatcmpl-${Math.floor(ROWS / 2)}` })),
    tenth: await median(() => store.list({ limit: 50, search: WORDS[4990] })),
    common: await median(() => store.list({ limit: 50, search: WORDS[0] })),
    // A word the tokenizer splits, whose tokens are in every body: found in many (the answer ids' prefix).
    split: await median(() => store.list({ limit: 50, search: 'chatcmpl-1' })),
    // Two common words joined by a hyphen, which no body holds together: a search that finds nothing.
    apart: await median(() => store.list({ limit: 50, search: `${WORDS[0]}-${WORDS[1]}` })),
  };
}

async function sqlite(indexed: boolean): Promise<Result> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-log-search-'));
  const path = join(directory, 'logs.db');
  const store = new SqliteLogStore(path, undefined, undefined, indexed);
  try {
    await store.init();
    const loaded = await load(store);
    return { ...loaded, bytes: store.usedBytes(), searchMs: indexed ? await searchTimes(store) : { unique: Number.NaN, tenth: Number.NaN, common: Number.NaN, split: Number.NaN, apart: Number.NaN } };
  } finally {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

async function postgres(indexed: boolean, probe: pg.Client): Promise<Result> {
  const schema = `gw_bench_search_${process.pid}_${indexed ? 'on' : 'off'}`;
  const store = new PostgresLogStore({ connectionString: DATABASE_URL, schema, search: indexed });
  try {
    await store.init();
    const loaded = await load(store);
    await probe.query(`VACUUM ANALYZE ${schema}.logs, ${schema}.log_bodies`);
    const size = await probe.query(`SELECT pg_total_relation_size('${schema}.logs') + pg_total_relation_size('${schema}.log_bodies') AS bytes`);
    return { ...loaded, bytes: Number(size.rows[0].bytes), searchMs: indexed ? await searchTimes(store) : { unique: Number.NaN, tenth: Number.NaN, common: Number.NaN, split: Number.NaN, apart: Number.NaN } };
  } finally {
    await store.close();
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

function report(name: string, without: Result, withIndex: Result): void {
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  process.stdout.write(`\n${name}, ${ROWS} rows with bodies, batches of ${BATCH}\n`);
  const line = (result: Result) =>
    `${Math.round(result.rowsPerSecond)} rows/s, ${result.microsPerRow.toFixed(1)} µs/row, this thread's CPU ${result.cpuMicrosPerRow.toFixed(1)} µs/row, ${mb(result.bytes)} (machine busy ${result.busy.toFixed(0)}%)`;
  process.stdout.write(`  without the search index: ${line(without)}\n`);
  process.stdout.write(`  with the search index:    ${line(withIndex)}\n`);
  process.stdout.write(
    `  index cost: +${(withIndex.microsPerRow - without.microsPerRow).toFixed(1)} µs/row (${((withIndex.microsPerRow / without.microsPerRow - 1) * 100).toFixed(0)}%), +${mb(withIndex.bytes - without.bytes)} (${((withIndex.bytes / without.bytes - 1) * 100).toFixed(0)}%)\n`,
  );
  const { unique, tenth, common, split, apart } = withIndex.searchMs;
  process.stdout.write(`  search, first page of 50: a word in one body ${unique.toFixed(1)} ms, in a tenth ${tenth.toFixed(1)} ms, in every body ${common.toFixed(1)} ms (medians of 5)\n`);
  process.stdout.write(`  a split word in many bodies ${split.toFixed(1)} ms, one in none whose parts are in every body ${apart.toFixed(1)} ms\n`);
}

async function main(): Promise<void> {
  process.stdout.write(`log search index benchmark, node ${process.version}\n`);
  if (STORES.includes('sqlite')) report('SQLite (node:sqlite FTS5, in this thread)', await sqlite(false), await sqlite(true));
  if (!STORES.includes('postgres')) return;
  const probe = await connectOrSkip(DATABASE_URL);
  if (!probe) return;
  try {
    const server = await probe.query('SHOW server_version');
    report(`PostgreSQL ${server.rows[0].server_version} (GIN over to_tsvector('simple'), loopback)`, await postgres(false, probe), await postgres(true, probe));
  } finally {
    await probe.end();
  }
}

await main();
