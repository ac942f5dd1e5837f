import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import test from 'ava';
import pg from 'pg';
import { sdkClient, startGateway, type TestGateway } from '../harness.js';
import { DATABASE_URL, dropSchemas, postgresReachable, uniqueSchema } from './fixtures.js';
import { fastProvider } from './sink-harness.js';

const TOTAL = 20_000;
const CONCURRENCY = 64;
const OUTAGE_FROM = 5_000;
const OUTAGE_TO = 15_000;

// Awaited before any test is declared (ava needs declarations to be synchronous).
const postgres = await postgresReachable();
if (!postgres.ok) console.log(`PostgreSQL zero-loss test skipped: ${postgres.reason}`);

// A bare loopback provider: the shared fake records every request, which 40 000 requests would pile up.
let provider: { url: string; close(): void } | undefined;
let providerUrl = '';
test.before(async () => {
  provider = await fastProvider();
  providerUrl = provider.url;
});
test.after.always(() => provider?.close());

const schemas: string[] = [];
test.after.always(() => dropSchemas(schemas));

/** Sends TOTAL requests through the SDK, CONCURRENCY at a time; calls the hooks when the count of answers passes them. */
async function drive(gateway: TestGateway, label: string, hooks: Record<number, () => Promise<void> | void>): Promise<{ seconds: number }> {
  const client = sdkClient(gateway.url, providerUrl);
  let next = 0;
  let answered = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < TOTAL) {
      const index = next++;
      await client.chat.completions.create(
        { model: 'fast', messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'x-gateway-trace-id': `${label}-${index}` } },
      );
      answered++;
      const hook = hooks[answered];
      if (hook) await hook();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { seconds: (performance.now() - started) / 1000 };
}

function logCounters(text: string): Record<string, number> {
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 'NaN');
  return {
    written: value(/^gateway_log_entries_total\{result="written"\} (\d+)/m),
    spilled: value(/^gateway_log_entries_total\{result="spilled"\} (\d+)/m),
    replayed: value(/^gateway_log_entries_total\{result="replayed"\} (\d+)/m),
    dropped: value(/^gateway_log_entries_dropped_total\{reason="spill_full"\} (\d+)/m),
  };
}

test.serial('sqlite: 20,000 requests give exactly 20,000 entries, through a mid-run outage of the store and its replay', async (t) => {
  t.timeout(240_000);
  const gateway = await startGateway({ logs: { retryMs: 100, queueCapacity: 2_000 } });
  const databasePath = join(gateway.gateway.config.dataDir, 'logs.db');
  // A second connection holding the write lock: every batch the gateway tries fails (SQLITE_BUSY).
  // Its busy timeout lets BEGIN EXCLUSIVE wait for a batch the log worker is committing at that
  // instant (without it the test's own lock failed now and then).
  const blocker = new DatabaseSync(databasePath, { timeout: 10_000 });
  try {
    const { seconds } = await drive(gateway, 'zl-sqlite', {
      [OUTAGE_FROM]: () => blocker.exec('BEGIN EXCLUSIVE'),
      [OUTAGE_TO]: () => blocker.exec('COMMIT'),
    });
    t.log(`${TOTAL} requests in ${seconds.toFixed(1)} s (${Math.round(TOTAL / seconds)} req/s)`);
    await gateway.gateway.flushLogs();
    t.is(await gateway.gateway.logStore.count(), TOTAL);
    const distinct = blocker.prepare("SELECT COUNT(DISTINCT trace_id) AS n FROM logs WHERE trace_id LIKE 'zl-sqlite-%'").get() as { n: number };
    t.is(Number(distinct.n), TOTAL);
    const metrics = await gateway.gateway.metrics.render();
    const counters = logCounters(metrics);
    t.log(counters);
    t.true(counters.spilled > 0, 'the outage sent entries to the spill file');
    t.is(counters.replayed, counters.spilled, 'everything spilled was replayed');
    t.is(counters.written, TOTAL, 'each entry written to the store once');
    t.is(counters.dropped, 0);
    t.regex(metrics, /^gateway_log_spill_bytes 0$/m);
    t.regex(metrics, /^gateway_log_store_up 1$/m);
  } finally {
    if (blocker.isTransaction) blocker.exec('ROLLBACK');
    blocker.close();
    await gateway.close();
  }
});

(postgres.ok ? test.serial : test.skip)('postgres: 20,000 requests give exactly 20,000 entries, through a mid-run outage of the store and its replay', async (t) => {
  t.timeout(240_000);
  const schema = uniqueSchema('zeroloss');
  schemas.push(schema);
  const gateway = await startGateway({ logs: { retryMs: 100, queueCapacity: 2_000, postgresSchema: schema } }, { DATABASE_URL });
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    await gateway.gateway.flushLogs(); // schema created
    t.is(gateway.gateway.logStore.kind, 'postgres');
    // The table disappears under the writer (its inserts fail), then comes back.
    const { seconds } = await drive(gateway, 'zl-pg', {
      [OUTAGE_FROM]: async () => void (await admin.query(`ALTER TABLE ${schema}.logs RENAME TO logs_offline`)),
      [OUTAGE_TO]: async () => void (await admin.query(`ALTER TABLE ${schema}.logs_offline RENAME TO logs`)),
    });
    t.log(`${TOTAL} requests in ${seconds.toFixed(1)} s (${Math.round(TOTAL / seconds)} req/s)`);
    await gateway.gateway.flushLogs();
    const result = await admin.query(`SELECT count(*) AS n, count(DISTINCT trace_id) AS distinct_traces FROM ${schema}.logs WHERE trace_id LIKE 'zl-pg-%'`);
    t.is(Number(result.rows[0].n), TOTAL);
    t.is(Number(result.rows[0].distinct_traces), TOTAL);
    const counters = logCounters(await gateway.gateway.metrics.render());
    t.log(counters);
    t.true(counters.spilled > 0, 'the outage sent entries to the spill file');
    t.is(counters.replayed, counters.spilled);
    t.is(counters.dropped, 0);
  } finally {
    await admin.query(`ALTER TABLE IF EXISTS ${schema}.logs_offline RENAME TO logs`).catch(() => {});
    await admin.end();
    await gateway.close();
  }
});
