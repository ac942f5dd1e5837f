import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { RedisCacheStore } from '../../core/cache/redis-store.js';
import { GatewayError } from '../../core/errors.js';
import { connectRedis } from '../../core/store/redis-connect.js';
import { MemoryQuotaStore, type QuotaStore } from '../../core/store/quota-state.js';
import { RedisState } from '../../core/store/redis-state.js';
import type { InvalidationEvent, SharedState } from '../../core/store/state.js';
import { type RedisCluster, startRedisCluster } from '../redis-cluster-harness.js';
import { cli } from '../redis-processes.js';
import { type RedisSentinelSet, startRedisSentinel } from '../redis-sentinel-harness.js';
import { admission, settleOne, stateContract } from './state-contract.js';

// The shared state on a real Redis Cluster (six loopback redis-server) and behind Sentinel (a
// primary, a replica, three sentinels, with a password): the whole store contract, then what only
// they add: hash slots, pub/sub across nodes, and a primary failed over.

const prefix = `test-cluster-${process.pid}-${randomBytes(4).toString('hex')}`;
const PASSWORD = 'sentinel-test-secret';
let cluster: RedisCluster;
let sentinel: RedisSentinelSet;
const opened: SharedState[] = [];

test.before(async () => {
  [cluster, sentinel] = await Promise.all([startRedisCluster(), startRedisSentinel({ password: PASSWORD })]);
});
test.after.always(async () => {
  await Promise.allSettled(opened.map((state) => state.close()));
  await Promise.allSettled([cluster?.stop(), sentinel?.stop()]);
});

const open = (url: () => string) => async () => {
  const state = await RedisState.connect(url(), prefix);
  return state;
};

stateContract('Redis Cluster', open(() => cluster.url), opened);
stateContract('Redis Sentinel', open(() => sentinel.url), opened);

async function connected(url: string): Promise<RedisState> {
  const state = await RedisState.connect(url, prefix);
  opened.push(state);
  return state;
}

test.serial('cluster: every counter of a several-level admission is in one hash slot; records spread over the primaries', async (t) => {
  const state = await connected(cluster.url);
  const key = admission({ budgetNanos: 100, reservationNanos: 10, requestsPerMinute: 5, tokensPerMinute: 1000, maxConcurrent: 3 });
  const team = admission({ requestsPerMinute: 5, tokens: 0 });
  t.true((await state.admit({ ...key, levels: [key.levels[0]!, team.levels[0]!] })).admitted);
  const names = [key.minuteWindowKey, key.dayCounterKey, key.totalCounterKey, key.reservedKey, key.tokensWindowKey, key.concurrentKey, team.minuteWindowKey, team.dayCounterKey];
  const slots = new Set(await Promise.all(names.map((name) => cli(cluster.nodes[0]!.port, ['CLUSTER', 'KEYSLOT', `${prefix}:{${prefix}:counters}:${name}`]))));
  t.is(slots.size, 1, 'one slot for every level');
  const primary = await cluster.primaryOf(`{${prefix}:counters}`);
  t.is(await cli(primary.port, ['EXISTS', `${prefix}:{${prefix}:counters}:${key.reservedKey}`]), '1', 'the counters are where the tag says');

  for (let index = 0; index < 30; index++) await state.records.set(`spread:${index}`, { index });
  const holders = new Set<number>();
  for (const node of cluster.nodes) {
    const keys = await cli(node.port, ['--scan', '--pattern', `${prefix}::spread:*`]);
    if (keys.trim() !== '') holders.add(node.port);
  }
  t.true(holders.size >= 2, `records on ${holders.size} primaries`);
  t.deepEqual(await state.records.get('spread:7'), { index: 7 });
});

test.serial('cluster: an event published through one node reaches a subscriber on another; a shared channel keeps its hash', async (t) => {
  const [first, second] = [await connected(cluster.url), await connected(cluster.url)];
  const received = new Promise<InvalidationEvent>((resolve) => second.subscribe(resolve));
  await first.publish({ kind: 'route', id: 'r1' });
  t.deepEqual(await received, { kind: 'route', id: 'r1' });
  let resolveMessage!: (message: string) => void;
  const message = new Promise<string>((resolve) => (resolveMessage = resolve));
  await second.openChannel('routing:test', (text) => resolveMessage(text));
  const channel = await first.openChannel('routing:test', () => {});
  await channel.set({ a: '1', b: '2' });
  await channel.remove(['a']);
  await channel.publish('hello');
  t.is(await message, 'hello');
  t.deepEqual(await channel.all(), { b: '2' });
});

for (const [name, url] of [
  ['cluster', () => cluster.url],
  ['sentinel', () => sentinel.url],
] as const) {
  test.serial(`${name}: the response cache stores, reads and clears its entries (on every primary)`, async (t) => {
    const cache = await RedisCacheStore.connect(url(), prefix);
    try {
      // Entries are stored as the JSON text they are (core/cache/store.ts RAW_JSON).
      const entry = (index: number) => JSON.stringify({ storedAt: index, provider: 'p', answer: index }) as never;
      for (let index = 0; index < 40; index++) await cache.entries.set(`ns-a/${index}`, entry(index));
      for (let index = 0; index < 10; index++) await cache.entries.set(`ns-b/${index}`, entry(index));
      await cache.vectors.append('ns-a', { partition: 'p', ref: 'r', guard: 'g', vector: new Float32Array([1, 2]) }, 100);
      t.is((await cache.vectors.since('ns-a', undefined)).length, 1);
      t.is(await cache.deleteNamespace('ns-b'), 10);
      t.like(await cache.entries.get('ns-a/3'), { answer: 3 });
      t.is(await cache.clear(), 40);
      t.is(await cache.entries.get('ns-a/3'), undefined);
    } finally {
      await cache.close();
    }
  });
}

test.serial('cluster: providers\' quotas decide as the in-memory store does', async (t) => {
  const state = await connected(cluster.url);
  const memory = new MemoryQuotaStore();
  const start = 1_800_000_000_000;
  const ask = (store: QuotaStore, team: string, now: number) => store.acquire({ key: `quota-${prefix}`, windowMs: 60_000, idleMs: 5000, team, weight: 1, now, tokensPerMinute: 1000, tokens: 100 });
  for (let index = 0; index < 14; index++) {
    const team = index % 3 === 0 ? 'a' : 'b';
    t.deepEqual(await ask(state.quota, team, start + index), await ask(memory, team, start + index), `request ${index}`);
  }
});

test.serial('cluster: a prefix with a brace is refused (it would put every key in one slot)', async (t) => {
  await t.throwsAsync(RedisState.connect(cluster.url, 'bad{prefix}'), { message: /brace/ });
});

test.serial('cluster: the primary of the counters killed: admissions fail cleanly while it is replaced, none is counted twice, and they resume on the promoted replica', async (t) => {
  const state = await connected(cluster.url);
  const base = admission({ budgetNanos: 1_000_000, reservationNanos: 10, requestsPerDay: 10_000 });
  let admitted = 0;
  let failed = 0;
  const failures = new Set<string>();
  const admitOne = async () => {
    try {
      if ((await state.admit({ ...base, requestId: randomBytes(6).toString('hex') })).admitted) admitted++;
    } catch (error) {
      failed++;
      failures.add(error instanceof GatewayError ? `${error.status} ${error.body.code}` : String(error));
    }
  };
  for (let index = 0; index < 20; index++) await admitOne();
  const failover = cluster.killPrimaryOf(`{${prefix}:counters}`);
  let during = 0;
  let done = false;
  void failover.then(() => (done = true));
  while (!done) {
    await admitOne();
    during++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { killed, promoted } = await failover;
  t.not(killed.port, promoted.port);
  // Admission resumes on the new primary (the client finds it by itself).
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      if ((await state.admit({ ...base, requestId: `after-${attempt}` })).admitted) {
        admitted++;
        break;
      }
    } catch (error) {
      failed++;
      failures.add(error instanceof GatewayError ? `${error.status} ${error.body.code}` : String(error));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  t.true(failed > 0, `some admissions failed during the failover (${failed} of ${during})`);
  t.deepEqual([...failures], ['503 state_unavailable'], 'each failed cleanly, with the documented error');
  // Every admission that answered "admitted" is counted once on the new primary: the day counter
  // and the reservations agree with the count (a replica may lose writes acknowledged in the last
  // instant before the kill; with no other traffic there is none to lose here, and none is doubled).
  const [day, reserved] = await state.read([base.dayCounterKey, base.reservedKey]);
  t.is(day, admitted);
  t.is(reserved, admitted * 10);
  await settleOne(state, base, { reservationNanos: 10, actualNanos: 7 });
  t.deepEqual(await state.read([base.spentKey]), [7]);
  await cluster.restart(killed);
});

test.serial('cluster: the node carrying a subscription killed: the subscriber moves to a live node and hears events again', async (t) => {
  const [publisher, subscriber] = [await connected(cluster.url), await connected(cluster.url)];
  const heard: string[] = [];
  subscriber.subscribe((event) => heard.push(event.id));
  await publisher.publish({ kind: 'route', id: 'before' });
  for (let attempt = 0; attempt < 50 && !heard.includes('before'); attempt++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.true(heard.includes('before'));
  // The subscriber's own connection (node-redis keeps one pub/sub connection, to one primary).
  const client = (subscriber as unknown as { connection: { keyvClient: { pubSubNode?: { address: string } } } }).connection.keyvClient;
  const port = Number(client.pubSubNode!.address.split(':').pop());
  let key = '';
  for (let index = 0; key === ''; index++) if ((await cluster.primaryOf(`probe-${index}`)).port === port) key = `probe-${index}`;
  const { killed } = await cluster.killPrimaryOf(key);
  t.is(killed.port, port);
  let id = '';
  for (let attempt = 0; attempt < 100; attempt++) {
    id = `after-${attempt}`;
    await publisher.publish({ kind: 'route', id }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (heard.some((seen) => seen.startsWith('after-'))) break;
  }
  t.true(heard.some((seen) => seen.startsWith('after-')), 'an event published after the failover is heard');
  t.not(Number(client.pubSubNode?.address.split(':').pop()), port);
  await cluster.restart(killed);
});

test.serial('sentinel: the primary killed: the state follows the promoted replica, pub/sub included', async (t) => {
  const [first, second] = [await connected(sentinel.url), await connected(sentinel.url)];
  const base = admission({ requestsPerDay: 10_000 });
  t.true((await first.admit(base)).admitted);
  await sentinel.killPrimary();
  let admitted = false;
  for (let attempt = 0; attempt < 150 && !admitted; attempt++) {
    try {
      admitted = (await first.admit({ ...base, requestId: `after-${attempt}` })).admitted;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  t.true(admitted, 'admission resumes on the new primary');
  const [day] = await first.read([base.dayCounterKey]);
  t.true(day === 2 || day === 1, `the counter is on the new primary (${day}; 1 if the first write had not reached the replica)`);
  // The subscriber of the second state resubscribed on the new primary.
  let event: InvalidationEvent | undefined;
  second.subscribe((received) => (event = received));
  for (let attempt = 0; attempt < 100 && event === undefined; attempt++) {
    await first.publish({ kind: 'credential', id: `c${attempt}` }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.like(event, { kind: 'credential' });
});

test('REDIS_URL: a plain comma-separated list of nodes is a cluster too', async (t) => {
  const list = cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
  const connection = await connectRedis(list);
  try {
    t.is(connection.mode, 'cluster');
    await connection.commands.set(`${prefix}:plain`, 'yes');
    t.is(await connection.commands.get(`${prefix}:plain`), 'yes');
  } finally {
    await connection.close();
  }
});

test.serial('doctor: a cluster and a Sentinel set-up answer PING through the gateway\'s client; no password is printed', async (t) => {
  const doctor = async (url: string) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'doctor-cluster-'));
    const child = spawn(process.execPath, ['bin/llm-gateway.js', 'doctor', '--json'], {
      env: { PATH: process.env.PATH ?? '', GATEWAY_DATA_DIR: dataDir, REDIS_URL: url, GATEWAY_REDIS_PREFIX: `${prefix}-doctor` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await once(child, 'close');
    rmSync(dataDir, { recursive: true, force: true });
    return stdout;
  };
  const onCluster = JSON.parse(await doctor(cluster.url)) as { checks: Array<{ name: string; status: string; detail: string }> };
  t.like(onCluster.checks.find((check) => check.name === 'redis'), { status: 'ok', detail: `the Redis cluster at ${cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(',')} answers PING` });
  const behindSentinel = await doctor(sentinel.url);
  t.regex(behindSentinel, /"the Redis sentinel at [^"]+\/gateway answers PING"/);
  t.false(behindSentinel.includes(PASSWORD));
});
