// The cost of a virtual-key lookup on the request path, in µs per request, measured in one run:
// the in-memory hit (the common case), the whole resolver (lookup + cached decrypted credential),
// a cold lookup that reads the store, and the atomic limit admission, on the embedded SQLite store
// and, when REDIS_URL answers, on Redis. Prints figures only.
//   npm run build && npx node dist/bench/vk-lookup.js     (or: npm run bench:vk)
import { createClient } from '@keyv/redis';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { periodsOf } from '../core/vault/limits.js';
import { VaultService } from '../core/vault/service.js';
import { VirtualKeys } from '../core/vault/virtual-keys.js';

async function timeAsync(label: string, iterations: number, work: (index: number) => Promise<unknown>): Promise<void> {
  for (let index = 0; index < Math.min(iterations, 2000); index += 1) await work(index);
  const started = process.hrtime.bigint();
  for (let index = 0; index < iterations; index += 1) await work(index);
  const micros = Number(process.hrtime.bigint() - started) / 1000 / iterations;
  process.stdout.write(`${label.padEnd(58)} ${micros.toFixed(2).padStart(9)} µs/op  (${iterations} ops)\n`);
}

async function measure(kind: string, environment: NodeJS.ProcessEnv): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-vk-'));
  const prefix = `bench-vk-${process.pid}-${randomBytes(3).toString('hex')}`;
  const service = new VaultService({
    dataDir,
    redisUrl: environment.REDIS_URL,
    redisPrefix: prefix,
    environment: { GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') },
    credentialCacheMs: 60_000,
    outputTokenEstimate: 1024,
  });
  await service.start();
  try {
    const credential = await service.credentials.create({ name: 'bench', secret: { api_key: 'sk-bench-0123456789' } });
    const values: string[] = [];
    for (let index = 0; index < 500; index += 1) {
      const { key } = await service.keys.create({ name: `bench-${index}`, provider: 'openai', credential_id: credential.id });
      values.push(key);
    }
    const hot = values[0];
    await service.resolver.resolve(hot, {});
    process.stdout.write(`\n${kind}\n`);
    await timeAsync('lookup, in-memory hit (request path, common case)', 200_000, () => service.keys.lookup(hot));
    await timeAsync('resolve: lookup + cached credential + resolution', 200_000, () => service.resolver.resolve(hot, {}));
    await timeAsync('lookup, cold (store read: hash → id → record)', 2_000, async (index) => new VirtualKeys(service.parts.state).lookup(values[index % values.length]));
    await timeAsync('unknown key (negative cache)', 200_000, () => service.keys.lookup('vk-unknown-value-0000000000000000000000000000'));
    let request = 0;
    const admission = (keyId: string, requestsPerMinute: number | undefined) => () => {
      const periods = periodsOf(keyId, Date.now());
      return service.parts.state.admit({
        now: Date.now(),
        requestId: `r${(request += 1)}`,
        levels: [
          {
            minuteWindowKey: periods.minuteWindow,
            dayCounterKey: periods.requestsDay,
            totalCounterKey: periods.requestsTotal,
            spentKey: periods.spent.total,
            reservedKey: periods.reserved.total,
            tokensWindowKey: `usage:${keyId}:tokens`,
            concurrentKey: `usage:${keyId}:inflight`,
            ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}),
            requestsPerDay: 100_000_000,
            budgetNanos: 1e15,
          },
        ],
        reservationNanos: 1000,
        tokens: 0,
        msUntilDayEnds: periods.msUntilDayEnds,
      });
    };
    // Each figure on its own key, so the per-minute window holds only that figure's requests.
    await timeAsync('limit admission: rpd + budget (atomic)', 5_000, admission('bench-a', undefined));
    await timeAsync('limit admission: rpm window of up to 1000 + rpd + budget', 5_000, admission('bench-b', 1000));
    await timeAsync('limit admission: rpm window of up to 5000 + rpd + budget', 5_000, admission('bench-c', 1_000_000));
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (environment.REDIS_URL) await clearPrefix(environment.REDIS_URL, prefix);
  }
}

async function clearPrefix(url: string, prefix: string): Promise<void> {
  const client = createClient({ url });
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) if (keys.length) await client.del(keys);
  await client.close();
}

await measure('embedded SQLite store', {});
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
try {
  await measure(`Redis store (${redisUrl})`, { REDIS_URL: redisUrl });
} catch (error) {
  process.stdout.write(`\nRedis store: skipped (${(error as Error).message})\n`);
}
