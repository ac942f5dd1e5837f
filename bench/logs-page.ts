/**
 * Load time of the dashboard's logs list over 1 000 000 log rows, in SQLite and in PostgreSQL: the
 * rows are bulk-inserted (7 days, one in ten with bodies), a real gateway is started on that log,
 * and the admin API calls the page makes are timed over HTTP (first page, filtered pages, all
 * errors, search, the start and the whole of an export, a tail's opening), then the page itself in
 * headless Chromium (from navigation to the table on screen).
 *
 *   npm run build && npx node dist/bench/logs-page.js
 *
 * BENCH_PAGE_ROWS (default 1 000 000), BENCH_LOG_STORES=sqlite|postgres, BENCH_BROWSER=0 skips
 * Chromium. PostgreSQL is DATABASE_URL (default the loopback server), in a schema of its own that
 * is dropped at the end.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, type Gateway } from '../core/app.js';
import { PostgresLogStore } from '../core/logs/postgres-store.js';
import { SqliteLogStore } from '../core/logs/sqlite-store.js';
import type { LogStore } from '../core/logs/store.js';
import { openai } from '../plugins/providers/openai/index.js';
import { CHROMIUM_PATH, openBrowser, signIn } from '../test/browser/browser.js';
import { makeRows, random, WORDS } from './log-rows.js';
import { connectOrSkip } from './postgres-probe.js';

const ROWS = Number(process.env.BENCH_PAGE_ROWS ?? 1_000_000);
const STORES = (process.env.BENCH_LOG_STORES ?? 'sqlite,postgres').split(',');
const BROWSER = process.env.BENCH_BROWSER !== '0' && existsSync(CHROMIUM_PATH);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const KEY = 'gw-bench-account-key-0123456789abcdef';
const DAY = 86_400_000;
const BATCH = 2000;

/** A word found in one body only: the answer id of a row with bodies in the middle of the set. */
let uniqueWord = '';

async function bulkLoad(store: LogStore, now: number): Promise<number> {
  const next = random(11);
  const options = { start: now - 7 * DAY, spanMs: 7 * DAY, total: ROWS, bodyShare: 0.1 };
  const started = performance.now();
  for (let written = 0; written < ROWS; written += BATCH) {
    const rows = makeRows(Math.min(BATCH, ROWS - written), written, next, options);
    if (!uniqueWord && written >= ROWS / 2) uniqueWord = JSON.parse(rows.find((row) => row.response_body)!.response_body!).id;
    await store.insert(rows);
    if ((written + BATCH) % 200_000 === 0) process.stdout.write(`  ${store.kind}: ${written + BATCH} rows\n`);
  }
  return ROWS / ((performance.now() - started) / 1000);
}

async function timed(run: () => Promise<unknown>, repeats = 5): Promise<{ first: number; median: number }> {
  const times: number[] = [];
  for (let index = 0; index < repeats; index++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  const first = times[0];
  return { first, median: [...times].sort((a, b) => a - b)[Math.floor(repeats / 2)] };
}

async function measure(name: string, gateway: Gateway, url: string, now: number): Promise<void> {
  const headers = { 'x-gateway-api-key': KEY };
  const dayAgo = new Date(now - DAY).toISOString();
  const lines: string[] = [];
  const api = async (label: string, query: Record<string, string>) => {
    let rows = 0;
    const result = await timed(async () => {
      const response = await fetch(`${url}/admin/logs?${new URLSearchParams({ limit: '50', ...query })}`, { headers });
      if (!response.ok) throw new Error(`${label}: ${response.status} ${await response.text()}`);
      rows = ((await response.json()) as { data: unknown[] }).data.length;
    });
    lines.push(`  ${label.padEnd(46)} ${result.median.toFixed(1).padStart(7)} ms median (first ${result.first.toFixed(1)} ms), ${rows} rows`);
  };
  await api('first page (last 24 h, as the page asks)', { from: dayAgo });
  await api('next page (cursor)', await (async () => {
    const response = await fetch(`${url}/admin/logs?from=${dayAgo}&limit=50`, { headers });
    return { from: dayAgo, cursor: ((await response.json()) as { next_cursor: string }).next_cursor };
  })());
  await api('model filter', { from: dayAgo, model: 'model-7' });
  await api('model + 5xx', { from: dayAgo, model: 'model-7', status_class: '5xx' });
  await api('all errors (24 h)', { from: dayAgo, errors: 'true' });
  await api('key filter', { from: dayAgo, key: 'vk_3' });
  await api('trace id (all time)', { trace_id: `bench-trace-${Math.floor(ROWS / 2)}` });
  await api('metadata team=team-3', { from: dayAgo, metadata_key: 'team', metadata_value: 'team-3' });
  await api('search, a word in one body (7 days)', { q: uniqueWord });
  await api('search, a word in ~10% of bodies (24 h)', { from: dayAgo, q: WORDS[4990] });
  await api('search, a word in every body (24 h)', { from: dayAgo, q: WORDS[0] });
  await api('search, two words (7 days)', { q: `${WORDS[40]} ${WORDS[900]}` });
  await api('search + all errors (24 h)', { from: dayAgo, q: WORDS[3], errors: 'true' });

  // Export: time to the first byte, then the whole 24 hours (about 1/7 of the rows).
  const exportStart = await timed(async () => {
    const controller = new AbortController();
    const response = await fetch(`${url}/admin/logs/export?format=csv&from=${dayAgo}`, { headers, signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => {});
  });
  lines.push(`  ${'export start (CSV, first byte, 24 h)'.padEnd(46)} ${exportStart.median.toFixed(1).padStart(7)} ms median (first ${exportStart.first.toFixed(1)} ms)`);
  for (const format of ['csv', 'jsonl']) {
    const started = performance.now();
    const response = await fetch(`${url}/admin/logs/export?format=${format}&from=${dayAgo}`, { headers });
    const text = await response.text();
    const seconds = (performance.now() - started) / 1000;
    const rows = text.split('\n').length - (format === 'csv' ? 2 : 1);
    lines.push(`  ${`whole export, ${format} (24 h)`.padEnd(46)} ${(seconds * 1000).toFixed(0).padStart(7)} ms for ${rows} rows (${Math.round(rows / seconds)} rows/s, ${(text.length / 1024 / 1024).toFixed(1)} MB)`);
  }
  const tailOpen = await timed(async () => {
    const controller = new AbortController();
    const response = await fetch(`${url}/admin/logs/tail?from=${dayAgo}`, { headers, signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
  });
  lines.push(`  ${'tail open (until event: ready)'.padEnd(46)} ${tailOpen.median.toFixed(1).padStart(7)} ms median`);

  if (BROWSER) {
    const browser = await openBrowser();
    try {
      await signIn(browser.page, url, KEY);
      const page = async (label: string, hash: string) => {
        const result = await timed(async () => {
          await browser.page.goto('about:blank');
          await browser.page.goto(`${url}/dashboard${hash}`);
          await browser.page.locator('table.logs tbody tr').first().waitFor();
        });
        lines.push(`  ${`Chromium: ${label}`.padEnd(46)} ${result.median.toFixed(1).padStart(7)} ms median (first ${result.first.toFixed(1)} ms)`);
      };
      await page('logs page, navigation to table', '#/logs');
      await page('logs page, model + 5xx', '#/logs?model=model-7&status_class=5xx');
      await page('logs page, search (a word in one body)', `#/logs?range=7d&q=${uniqueWord}`);
      await page('logs page, all errors', '#/logs?status_class=errors');
      if (browser.consoleErrors.length) lines.push(`  browser console errors: ${browser.consoleErrors.join('; ')}`);
    } finally {
      await browser.close();
    }
  }
  process.stdout.write(`\n${name}\n${lines.join('\n')}\n`);
  void gateway;
}

async function start(dataDir: string, environment: Record<string, string>, schema?: string): Promise<{ gateway: Gateway; url: string }> {
  const gateway = createGateway(
    { providers: [openai()], ...(schema ? { logs: { postgresSchema: schema } } : {}) },
    {
      // No retention at start: the bench's rows are up to 7 days old and the file may pass the size cap.
      environment: { GATEWAY_API_KEY: KEY, GATEWAY_DATA_DIR: dataDir, LOG_LEVEL: 'warn', GATEWAY_LOG_MAX_MB: '0', ...environment },
      logDestination: { write: () => {} },
    },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  return { gateway, url };
}

async function main(): Promise<void> {
  process.stdout.write(`logs page benchmark: ${ROWS} rows over 7 days (1 in 10 with bodies), node ${process.version}\n`);
  const now = Date.now();
  if (STORES.includes('sqlite')) {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-logs-page-'));
    try {
      const path = join(dataDir, 'logs.db');
      const store = new SqliteLogStore(path);
      await store.init();
      const rate = await bulkLoad(store, now);
      await store.close();
      const { gateway, url } = await start(dataDir, {});
      try {
        await measure(`SQLite: ${Math.round(rate)} rows/s bulk load, file ${(statSync(path).size / 1024 / 1024).toFixed(0)} MB`, gateway, url, now);
      } finally {
        await gateway.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  if (!STORES.includes('postgres')) return;
  const probe = await connectOrSkip(DATABASE_URL);
  if (!probe) return;
  const schema = `gw_bench_page_${process.pid}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-logs-page-'));
  try {
    const store = new PostgresLogStore({ connectionString: DATABASE_URL, schema });
    await store.init();
    const rate = await bulkLoad(store, now);
    await store.close();
    await probe.query(`VACUUM ANALYZE ${schema}.logs, ${schema}.log_bodies`);
    const size = await probe.query(`SELECT pg_total_relation_size('${schema}.logs') + pg_total_relation_size('${schema}.log_bodies') AS bytes`);
    const { gateway, url } = await start(dataDir, { DATABASE_URL }, schema);
    try {
      await measure(`PostgreSQL: ${Math.round(rate)} rows/s bulk load, tables ${(Number(size.rows[0].bytes) / 1024 / 1024).toFixed(0)} MB`, gateway, url, now);
    } finally {
      await gateway.close();
    }
  } finally {
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await probe.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
