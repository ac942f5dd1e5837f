// `npm run bench:single-flight`: what single flight (issue 39) adds to a plain miss, and how soon a
// waiting follower gets the leader's answer, for each place leases live:
// - memory (one process), cache.sqlite (the workers of GATEWAY_WORKERS), Redis (instances; skipped
//   when no Redis answers on REDIS_URL or 127.0.0.1:6379);
// - "lease per miss": what a miss adds: its claim, its second look at the key and its release (three
//   store calls), median µs;
// - "follower served": from the leader's release to a waiting follower's answer, read through a
//   second connection to the store (another worker or instance: woken by polling on cache.sqlite,
//   by pub/sub on Redis), median ms.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ResponseCache } from '../core/cache/response-cache.js';
import { SingleFlight } from '../core/cache/single-flight.js';
import { type CacheStore, openCacheStore, SqliteCacheStore } from '../core/cache/store.js';
import { median } from './stats.js';

const MISSES = 2000;
const FOLLOWS = 50;
const logger = pino({ level: 'silent' });
const entry = { storedAt: Date.now(), provider: 'openai', answer: { text: 'the answer' } };

function cacheOver(open: () => Promise<CacheStore>): ResponseCache {
  return new ResponseCache({ open, clock: { now: () => Date.now() }, logger, timeoutMs: 1000, maxEntryBytes: 1 << 20, semanticMaxEntries: 10 });
}
const flightOver = (cache: ResponseCache) => new SingleFlight(cache, { waitMs: 30_000, leaseMs: 10_000, timeoutMs: 1000, logger });

async function measure(label: string, leaderCache: ResponseCache, followerCache: ResponseCache): Promise<void> {
  const leader = flightOver(leaderCache);
  // One process has one SingleFlight: its own releases wake its followers.
  const follower = followerCache === leaderCache ? leader : flightOver(followerCache);
  const run = randomBytes(4).toString('hex');
  const perMiss: number[] = [];
  for (let index = 0; index < MISSES; index++) {
    const startedAt = performance.now();
    const key = `bench/${run}/miss-${index}`;
    const flight = await leader.claim(key);
    if (flight?.role !== 'leader') throw new Error(`${label}: the lease was not taken`);
    // The leader's second look at the key, as the hook makes it after its claim.
    if ((await leaderCache.get(key, 60_000)) !== undefined) throw new Error(`${label}: a fresh key was found`);
    await flight.release();
    perMiss.push((performance.now() - startedAt) * 1000);
  }
  const served: number[] = [];
  for (let index = 0; index < FOLLOWS; index++) {
    const key = `bench/${run}/follow-${index}`;
    const flight = await leader.claim(key);
    if (flight?.role !== 'leader') throw new Error(`${label}: the lease was not taken`);
    const waiting = follower.wait(key, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    await leaderCache.put(key, entry, 60_000);
    const releasedAt = performance.now();
    await flight.release();
    if ((await waiting) === undefined) throw new Error(`${label}: the follower got no answer`);
    served.push(performance.now() - releasedAt);
  }
  console.log(`  ${label.padEnd(34)} lease per miss ${median(perMiss).toFixed(0).padStart(4)} µs   follower served ${median(served).toFixed(2).padStart(6)} ms after the release`);
}

async function main(): Promise<void> {
  console.log(`Single flight (median of ${MISSES} misses, ${FOLLOWS} followers):`);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-single-flight-'));
  try {
    const memory = cacheOver(async () => new SqliteCacheStore(join(dataDir, 'memory'), { maxBytes: 1 << 26 }));
    await measure('memory (one process)', memory, memory);
    await memory.close();
    const shared = join(dataDir, 'shared');
    const [one, two] = [0, 1].map(() => cacheOver(async () => new SqliteCacheStore(shared, { maxBytes: 1 << 26, writeThrough: true })));
    await measure('cache.sqlite (workers, polling)', one!, two!);
    await Promise.all([one!.close(), two!.close()]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `bench-single-flight-${randomBytes(4).toString('hex')}`;
  const open = () => openCacheStore({ dataDir: tmpdir(), redisUrl, redisPrefix: prefix, maxBytes: 0 });
  const [one, two] = [cacheOver(open), cacheOver(open)];
  try {
    await one.start();
    await two.start();
  } catch {
    console.log('  Redis: unreachable, skipped');
    return;
  }
  await measure('Redis (instances, pub/sub)', one, two);
  await one.remove(undefined).catch(() => {});
  await Promise.all([one.close(), two.close()]);
}

await main();
