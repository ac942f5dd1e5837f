// What a provider's quota costs (docs/limits.md, "A provider's quota, shared fairly"), measured in one run:
// - an acquire and its settle on a quota with room, in µs of CPU per request, on the embedded store
//   (in memory) with 1 and 10 active teams, and on Redis when it answers (one round trip each);
// - requests waiting in the queue cost no CPU: the process's CPU over 3 s with 1000 requests waiting
//   against the same 3 s with none (the queue's one timer wakes at most every 2.5 s).
//   npm run build && npx node dist/bench/quota.js
import { createClient } from '@keyv/redis';
import type { RedisClientType } from '@keyv/redis';
import { QuotaScheduler } from '../core/quota/scheduler.js';
import { RedisQuotaStore } from '../core/store/quota-redis.js';
import { MemoryQuotaStore, type QuotaStore } from '../core/store/quota-state.js';

const signal = new AbortController().signal;
const cpuMicros = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** CPU µs per acquire + settle, after a warm-up, for requests spread over `teams` teams. */
async function acquireCost(label: string, store: QuotaStore, teams: number, iterations: number): Promise<number> {
  const scheduler = new QuotaScheduler({ store: () => store });
  const binding = { key: `bench-${label}-${teams}`, quota: { tokens_per_minute: 1e12, requests_per_minute: 1e12, max_concurrent: 1e9 } };
  const one = async (index: number) => {
    const lease = await scheduler.acquire(binding, { team: `team-${index % teams}`, weight: 1 + (index % 3), priority: 'interactive', tokens: 1100, signal });
    lease.settle(900);
  };
  for (let index = 0; index < Math.min(iterations, 2000); index++) await one(index);
  const startedCpu = cpuMicros();
  const started = performance.now();
  for (let index = 0; index < iterations; index++) await one(index);
  const cpu = (cpuMicros() - startedCpu) / iterations;
  const wall = ((performance.now() - started) * 1000) / iterations;
  process.stdout.write(`${`acquire + settle, ${label}, ${teams} team(s)`.padEnd(52)} ${cpu.toFixed(2).padStart(8)} µs CPU  ${wall.toFixed(2).padStart(8)} µs wall  (${iterations} ops)\n`);
  return cpu;
}

/** CPU ms the process spends over `ms` with `waiting` requests queued on a full quota. */
async function idleCpu(waiting: number, ms: number): Promise<number> {
  const store = new MemoryQuotaStore();
  const scheduler = new QuotaScheduler({ store: () => store });
  const binding = { key: `bench-wait-${waiting}`, quota: { requests_per_minute: 1, max_wait_ms: 600_000 } };
  const controller = new AbortController();
  await scheduler.acquire(binding, { team: 'a', weight: 1, priority: 'interactive', tokens: 1, signal: controller.signal });
  const waiters = Array.from({ length: waiting }, () => scheduler.acquire(binding, { team: 'a', weight: 1, priority: 'batch', tokens: 1, signal: controller.signal }).catch(() => undefined));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = cpuMicros();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = (cpuMicros() - started) / 1000;
  controller.abort();
  await Promise.all(waiters);
  process.stdout.write(`${`CPU over ${ms} ms with ${waiting} requests waiting`.padEnd(52)} ${used.toFixed(2).padStart(8)} ms\n`);
  return used;
}

const memory = await acquireCost('embedded', new MemoryQuotaStore(), 1, 50_000);
await acquireCost('embedded', new MemoryQuotaStore(), 10, 50_000);

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const client = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } }) as RedisClientType;
client.on('error', () => {});
let redis: number | undefined;
try {
  await client.connect();
  const prefix = `bench-quota-${process.pid}`;
  const store = new RedisQuotaStore(client, (name) => `${prefix}:${name}`);
  redis = await acquireCost('Redis', store, 1, 5000);
  await acquireCost('Redis', store, 10, 5000);
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*` })) if (keys.length) await client.del(keys);
  await client.close();
} catch (error) {
  process.stdout.write(`Redis at ${url} unreachable: ${(error as Error).message}; its figures are skipped\n`);
}

const quiet = await idleCpu(0, 3000);
const busy = await idleCpu(1000, 3000);
process.stdout.write(`\nan acquire on a quota with room: ${memory.toFixed(2)} µs CPU embedded${redis === undefined ? '' : `, ${redis.toFixed(2)} µs CPU on Redis (one round trip)`}\n`);
process.stdout.write(`1000 waiting requests cost ${(busy - quiet).toFixed(2)} ms of CPU more over 3 s than none (${((busy - quiet) / 3).toFixed(3)} ms per second)\n`);
