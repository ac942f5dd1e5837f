// `npm run bench:cache` (also run by `npm run bench`): the response cache's three figures, in one run.
// 1. A hit's latency at a fixed rate (1000 req/s, 10 connections) through a real gateway process
//    with the cache on, against the floor (node:http → undici to the mock upstream): the hit's added
//    latency is gateway p50 − floor p50 (goal under 0.3 ms).
// 2. The gateway's CPU per request for a hit and for a miss's full pipeline (`x-gateway-cache:
//    refresh`: lookup skipped, the upstream asked, the answer mapped, logged and stored), same rate,
//    measured alternately in rounds on the same process (goal: the hit uses less).
// 3. A semantic lookup at 10 000 entries, in this process: the index search alone (256, 1536 and
//    3072 dimensions), and the whole `nearest` (log sync, search, reading the answer) on the
//    embedded store. The embeddings call itself is the provider's time and is not counted.
// Prints figures and PASS/MISS; a MISS does not fail the run.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ResponseCache } from '../core/cache/response-cache.js';
import { SqliteCacheStore } from '../core/cache/store.js';
import { unit, VectorIndex } from '../core/cache/vector-index.js';
import { killAllServers, startServer, stopAllServers } from './children.js';
import { measurePacedInterleaved, type PacedFigures } from './load.js';
import { CHILD_ENVIRONMENT } from './protocol.js';
import { median } from './stats.js';

const RATE = Number(process.env.BENCH_RATE ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_RATE_CONNECTIONS ?? 10);
const DURATION_S = Number(process.env.BENCH_CACHE_DURATION ?? 10);
const ROUNDS = 5;
const HIT_GOAL_MS = 0.3;
const ENTRIES = 10_000;
const LOOKUPS = 200;
const BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Summarise the plot of a well-known novel in two sentences.' }] });

function progress(message: string): void {
  process.stderr.write(`bench:cache: ${message}\n`);
}

async function hitAndMiss(): Promise<{ floor: PacedFigures; hit: PacedFigures; miss: PacedFigures }> {
  const apiKey = `bench-${randomBytes(16).toString('hex')}`;
  const mock = await startServer('mock', { [CHILD_ENVIRONMENT.streamChunks]: '1', [CHILD_ENVIRONMENT.streamGapMs]: '0' });
  const [floor, gateway] = await Promise.all([
    startServer('floor', { [CHILD_ENVIRONMENT.upstreamUrl]: mock.url }),
    startServer('gateway', { [CHILD_ENVIRONMENT.gatewayApiKey]: apiKey, [CHILD_ENVIRONMENT.gatewayCache]: 'simple' }),
  ]);
  const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-bench', 'x-gateway-api-key': apiKey, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1` };
  // Store the answer, and check that the gateway then serves it from the cache.
  const path = '/v1/chat/completions';
  const stored = await fetch(`${gateway.url}${path}`, { method: 'POST', headers, body: BODY });
  await stored.arrayBuffer();
  if (stored.status !== 200) throw new Error(`the gateway answered ${stored.status} to the first request`);
  const check = await fetch(`${gateway.url}${path}`, { method: 'POST', headers, body: BODY });
  await check.arrayBuffer();
  if (check.headers.get('x-gateway-cache') !== 'HIT') throw new Error(`the gateway answered x-gateway-cache: ${check.headers.get('x-gateway-cache')} after storing the answer`);
  const plan = (label: string, baseUrl: string) => ({ label, baseUrl, connections: CONNECTIONS, ratePerSecond: RATE, durationSeconds: DURATION_S, warmUpSeconds: 2, rssSampleMs: 500 });
  progress(`${RATE} req/s, c=${CONNECTIONS}: floor, gateway hit and gateway miss (refresh) in ${ROUNDS} rounds of ${DURATION_S / ROUNDS} s each`);
  const [floorFigures, hit, miss] = await measurePacedInterleaved(
    [
      { plan: plan('floor', floor.url), request: { path, headers, body: BODY }, proxy: floor },
      { plan: plan('gateway, cache hit', gateway.url), request: { path, headers, body: BODY }, proxy: gateway },
      { plan: plan('gateway, miss (x-gateway-cache: refresh)', gateway.url), request: { path, headers: { ...headers, 'x-gateway-cache': 'refresh' }, body: BODY }, proxy: gateway },
    ],
    ROUNDS,
  );
  for (const figures of [floorFigures, hit, miss]) {
    if (figures.result.non2xx > 0 || figures.result.errors > 0) throw new Error(`${figures.label}: ${figures.result.non2xx} non-2xx answers, ${figures.result.errors} errors (${figures.result.firstError ?? ''})`);
  }
  return { floor: floorFigures, hit, miss };
}

/** Median microseconds of `run` over `count` calls (after a warm-up). */
async function timed(count: number, run: (index: number) => unknown): Promise<number> {
  for (let index = 0; index < 20; index++) await run(index);
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const startedAt = performance.now();
    await run(index);
    times.push((performance.now() - startedAt) * 1000);
  }
  return median(times);
}

const randomUnit = (dimensions: number) => unit(Array.from({ length: dimensions }, () => Math.random() - 0.5))!;

async function semanticLookups(): Promise<Array<{ what: string; microseconds: number }>> {
  const figures: Array<{ what: string; microseconds: number }> = [];
  const searchTime = async (dimensions: number, vectorOf: () => Float32Array, queries: Float32Array[]) => {
    const index = new VectorIndex(ENTRIES);
    index.apply('ns', Array.from({ length: ENTRIES }, (_, position) => ({ id: String(position + 1), partition: 'p', ref: `ns/${position}`, guard: '|0', vector: vectorOf() })));
    return timed(LOOKUPS, (at) => index.search('ns', 'p', queries[at % queries.length], 0.95, '|0'));
  };
  for (const dimensions of [256, 1536, 3072]) {
    const queries = Array.from({ length: 32 }, () => randomUnit(dimensions));
    figures.push({ what: `index search, ${ENTRIES} unrelated entries × ${dimensions} dimensions`, microseconds: await searchTime(dimensions, () => randomUnit(dimensions), queries) });
  }
  // The worst case: every stored vector about 0.9 similar to the query, so no early exit applies.
  const dimensions = 1536;
  const centre = randomUnit(dimensions);
  const near = () => unit(Array.from(centre, (value) => value + (Math.random() - 0.5) * 0.035))!;
  figures.push({ what: `index search, ${ENTRIES} entries × ${dimensions} dimensions all ~0.9 similar (no early exit)`, microseconds: await searchTime(dimensions, near, [centre]) });
  // The whole lookup on the embedded store: 10 000 vectors in the SQLite log, the answer of the best one read back.
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-cache-'));
  try {
    const store = new SqliteCacheStore(dataDir, { maxBytes: 1024 ** 3 });
    const cache = new ResponseCache({ open: async () => store, clock: { now: () => Date.now() }, logger: pino({ level: 'silent' }), timeoutMs: 10_000, maxEntryBytes: 1024 ** 2, semanticMaxEntries: ENTRIES });
    const stored = randomUnit(dimensions);
    const probe = { namespace: 'ns', partition: 'p', guard: '|0' };
    await cache.put('ns/answer', { storedAt: Date.now(), provider: 'openai', model: 'gpt-4o-mini', answer: JSON.parse(BODY) }, 3_600_000);
    for (let position = 0; position < ENTRIES - 1; position++) await store.vectors.append('ns', { ...probe, ref: `ns/${position}`, vector: randomUnit(dimensions) }, ENTRIES);
    await store.vectors.append('ns', { ...probe, ref: 'ns/answer', vector: stored }, ENTRIES);
    const found = await cache.nearest({ ...probe, vector: stored }, 0.95, 3_600_000);
    if (found === undefined) throw new Error('the semantic lookup did not find the stored answer');
    figures.push({ what: `nearest() on the embedded store, ${ENTRIES} entries × ${dimensions} dimensions (a hit)`, microseconds: await timed(LOOKUPS, () => cache.nearest({ ...probe, vector: stored }, 0.95, 3_600_000)) });
    await store.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return figures;
}

async function main(): Promise<void> {
  const { floor, hit, miss } = await hitAndMiss();
  await stopAllServers();
  const added = hit.result.p50Ms - floor.result.p50Ms;
  console.log(`Response cache, ${RATE} req/s over ${CONNECTIONS} connections, ${DURATION_S} s each (medians and p99 of one run):`);
  for (const figures of [floor, hit, miss]) {
    console.log(
      `  ${figures.label.padEnd(42)} p50 ${figures.result.p50Ms.toFixed(3)} ms, p99 ${figures.result.p99Ms.toFixed(3)} ms, ` +
        `CPU ${figures.proxy.cpuMicrosecondsPerRequest.toFixed(0)} µs/request, ${figures.result.requestsPerSecond.toFixed(0)} req/s`,
    );
  }
  console.log(`  a hit's added latency over the floor (p50): ${added.toFixed(3)} ms (goal < ${HIT_GOAL_MS} ms) ${added < HIT_GOAL_MS ? 'PASS' : 'MISS'}`);
  const ratio = hit.proxy.cpuMicrosecondsPerRequest / miss.proxy.cpuMicrosecondsPerRequest;
  console.log(`  CPU of a hit / CPU of a miss: ${ratio.toFixed(2)} (goal < 1) ${ratio < 1 ? 'PASS' : 'MISS'}`);
  progress(`semantic lookups at ${ENTRIES} entries`);
  console.log(`Semantic lookup at ${ENTRIES} entries (median of ${LOOKUPS}):`);
  for (const { what, microseconds } of await semanticLookups()) console.log(`  ${what}: ${(microseconds / 1000).toFixed(2)} ms`);
}

process.on('exit', killAllServers);
try {
  await main();
} finally {
  await stopAllServers();
}
