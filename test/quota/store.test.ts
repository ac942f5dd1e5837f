import { randomBytes } from 'node:crypto';
import { createClient, type RedisClientType } from '@keyv/redis';
import test from 'ava';
import { RedisQuotaStore } from '../../core/store/quota-redis.js';
import { MemoryQuotaStore, type QuotaAcquire } from '../../core/store/quota-state.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';

// The two quota stores decide alike (the Redis script is `decide` in Lua), and the fair-share rules
// hold at the level of single decisions.

const base = { key: 'q', windowMs: 60_000, idleMs: 5000 } as const;
const start = 1_800_000_000_000;

test('a team within its share is granted; past it, the unused share of an active team is held back; an idle team lends it', async (t) => {
  const store = new MemoryQuotaStore();
  const ask = (team: string, weight: number, now: number, tokens = 100) => store.acquire({ ...base, team, weight, now, tokensPerMinute: 1000, tokens });
  const first = await ask('a', 1, start);
  t.true(first.granted, 'A asks first');
  // A's answer ends (a team with a request in flight is active whatever its last ask).
  await store.release({ key: 'q', team: 'a', bucket: first.granted ? first.bucket : 0, now: start + 10, windowMs: 60_000, tokensDelta: 0, concurrent: true });
  // B (weight 1) may use its share of 500, not A's unused 400 while A is active.
  for (let index = 0; index < 5; index++) t.true((await ask('b', 1, start + 1)).granted);
  const refused = await ask('b', 1, start + 2);
  t.like(refused, { granted: false, dimension: 'tokens', scope: 'share' });
  // Six seconds later A is idle: B borrows A's unused share.
  for (let index = 0; index < 4; index++) t.true((await ask('b', 1, start + 6001)).granted, `borrow ${index}`);
  t.like(await ask('b', 1, start + 6002), { granted: false, scope: 'quota' }, 'the quota itself is full');
  // A comes back: refused for the quota (B holds it all), but B may not take A's share again.
  t.like(await ask('a', 1, start + 7000), { granted: false, scope: 'quota' });
  t.like(await ask('b', 1, start + 7001), { granted: false });
  // The window slides past A's first request (61 buckets): A is served first.
  const later = start + 61_000;
  t.true((await ask('a', 1, later)).granted);
});

test('a release frees the concurrency slot and gives tokens back in the request\'s bucket', async (t) => {
  const store = new MemoryQuotaStore();
  const acquire: QuotaAcquire = { ...base, team: 'a', weight: 1, now: start, tokensPerMinute: 1000, maxConcurrent: 1, tokens: 200 };
  const first = await store.acquire(acquire);
  t.true(first.granted);
  t.like(await store.acquire({ ...acquire, now: start + 1 }), { granted: false, dimension: 'concurrent', retryAfterMs: -1 });
  await store.release({ key: 'q', team: 'a', bucket: first.granted ? first.bucket : 0, now: start + 2, windowMs: 60_000, tokensDelta: -150, concurrent: true });
  t.deepEqual((await store.snapshot('q', start + 3, 60_000)).teams.map((team) => [team.tokens, team.concurrent]), [[50, 0]]);
  t.true((await store.acquire({ ...acquire, now: start + 4 })).granted, 'the slot is free again');
});

test.serial('the Redis script decides as the embedded store does, on a random sequence of acquires and releases', async (t) => {
  if (!(await redisAvailable())) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const prefix = `test-quota-store-${process.pid}-${randomBytes(4).toString('hex')}`;
  const client = createClient({ url: REDIS_URL }) as RedisClientType;
  await client.connect();
  try {
    const redis = new RedisQuotaStore(client, (name) => `${prefix}:${name}`);
    const memory = new MemoryQuotaStore();
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let now = start;
    const held: Array<{ team: string; bucket: number }> = [];
    for (let step = 0; step < 600; step++) {
      now += Math.floor(random() * 1500);
      const team = ['a', 'b', 'c'][Math.floor(random() * 3)];
      if (random() < 0.3 && held.length > 0) {
        const lease = held.splice(Math.floor(random() * held.length), 1)[0];
        const release = { key: 'q', team: lease.team, bucket: lease.bucket, now, windowMs: 60_000, tokensDelta: -Math.floor(random() * 50), concurrent: true };
        await redis.release(release);
        await memory.release(release);
        continue;
      }
      const acquire: QuotaAcquire = { ...base, team, weight: team === 'c' ? 3 : 1, now, requestsPerMinute: 40, tokensPerMinute: 4000, maxConcurrent: 6, tokens: 50 + Math.floor(random() * 100) };
      const [fromRedis, fromMemory] = [await redis.acquire(acquire), await memory.acquire(acquire)];
      t.deepEqual(fromRedis, fromMemory, `step ${step}`);
      if (fromMemory.granted) held.push({ team, bucket: fromMemory.bucket });
    }
    t.deepEqual(await redis.snapshot('q', now, 60_000), await memory.snapshot('q', now, 60_000));
  } finally {
    await client.close();
    await clearRedisPrefix(prefix);
  }
});
