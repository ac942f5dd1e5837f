/**
 * The policies view's query: guardrail verdicts by policy, guardrail, side and action
 * (`LogStore.verdicts`, behind `GET /admin/policies/verdicts`), on a table of BENCH_LOG_ROWS rows
 * (default 1 000 000) spread over the last 7 days, every row judged by a policy (the worst case: a
 * default policy on all traffic) with an input and an output verdict.
 *
 *   npm run build && node dist/bench/policy-verdicts.js
 *
 * BENCH_LOG_STORES=sqlite|postgres runs one store; PostgreSQL is taken from DATABASE_URL (default
 * the loopback server), in a schema of its own dropped at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresLogStore } from '../core/logs/postgres-store.js';
import type { LogRecord } from '../core/logs/record.js';
import { DATABASE_URL, makeRecord } from '../test/logs/fixtures.js';
import { SqliteWorkerStore } from '../core/logs/sqlite-worker-store.js';
import type { LogStore } from '../core/logs/store.js';

const ROWS = Number(process.env.BENCH_LOG_ROWS ?? 1_000_000);
const BATCH = 1000;
const DAY = 86_400_000;
const STORES = (process.env.BENCH_LOG_STORES ?? 'sqlite,postgres').split(',');
const POLICIES = ['pii-redact', 'pii-block', 'strict'];
const ACTIONS = ['allow', 'allow', 'allow', 'allow', 'transform', 'deny'];

/** A logged chat request with two verdicts of one of the policies (the rest as `makeRecord` has it). */
function row(index: number, now: number): LogRecord {
  const policy = POLICIES[index % POLICIES.length];
  return makeRecord({
    time: new Date(now - 7 * DAY + Math.floor((index * 7 * DAY) / ROWS)).toISOString(),
    trace_id: `bench-${index}`,
    caller_type: 'virtual-key',
    key_id: `vk_${index % 50}`,
    latency_ms: 100,
    gateway_ms: 1,
    upstream_ms: 99,
    cost_usd: 0.00001,
    guardrails: [
      { policy, guardrail: 'pii', side: 'input', action: ACTIONS[index % ACTIONS.length], ms: 0.2 },
      { policy, guardrail: 'pii', side: 'output', action: ACTIONS[(index * 7) % ACTIONS.length], ms: 0.3 },
    ],
  });
}

async function bench(name: string, store: LogStore, loaded?: () => Promise<void>): Promise<void> {
  const now = Date.now();
  await store.init();
  for (let written = 0; written < ROWS; written += BATCH) {
    await store.insert(Array.from({ length: Math.min(BATCH, ROWS - written) }, (_, index) => row(written + index, now)));
  }
  await loaded?.();
  process.stdout.write(`\n${name}: ${ROWS} rows over 7 days, 2 verdicts each\n`);
  for (const hours of [1, 24, 168]) {
    const times: number[] = [];
    let judged = 0;
    for (let repeat = 0; repeat < 5; repeat++) {
      const started = performance.now();
      const counts = await store.verdicts({ from: now - hours * 3_600_000, to: now });
      times.push(performance.now() - started);
      judged = counts.requests.reduce((sum, entry) => sum + entry.requests, 0);
    }
    times.sort((a, b) => a - b);
    process.stdout.write(`  last ${String(hours).padStart(3)} h: ${times[2].toFixed(0)} ms median of 5 (${judged} requests judged)\n`);
  }
  // For comparison: the usage view's query over the same day, which reads the same rows.
  const usageTimes: number[] = [];
  for (let repeat = 0; repeat < 5; repeat++) {
    const started = performance.now();
    await store.usage({ from: now - DAY, to: now, bucketMs: 900_000, groupBy: 'none' });
    usageTimes.push(performance.now() - started);
  }
  usageTimes.sort((a, b) => a - b);
  process.stdout.write(`  (usage of the last 24 h, for comparison: ${usageTimes[2].toFixed(0)} ms median of 5)\n`);
  await store.close();
}

const directory = mkdtempSync(join(tmpdir(), 'bench-verdicts-'));
try {
  if (STORES.includes('sqlite')) await bench('SQLite (worker thread)', new SqliteWorkerStore(join(directory, 'logs.db')));
} finally {
  rmSync(directory, { recursive: true, force: true });
}
if (STORES.includes('postgres')) {
  const schema = `gw_bench_verdicts_${process.pid}`;
  const probe = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  await probe.connect();
  try {
    const store = new PostgresLogStore({ connectionString: DATABASE_URL, schema });
    // As autovacuum would soon after a bulk load; without statistics the planner guesses.
    await bench('PostgreSQL', store, async () => void (await probe.query(`ANALYZE ${schema}.logs`)));
  } finally {
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await probe.end();
  }
}
