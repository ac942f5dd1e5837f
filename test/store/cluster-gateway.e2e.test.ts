import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { type RedisCluster, startRedisCluster } from '../redis-cluster-harness.js';
import { registerLimitCases } from '../vault/limit-cases.js';
import { admin, chatWithKey, createKey, FIXED_COST_USD, fixedUsageHandler } from '../vault/vault-harness.js';

// Two gateway instances on a real Redis Cluster: the limit cases of two instances on one Redis
// (budgets and rates exact under concurrent requests across both), then the primary holding the
// counters failed over in the middle of a load, planned (CLUSTER FAILOVER) and by a kill.

let cluster: RedisCluster;
let fake: Fake;
let a: TestGateway;
let b: TestGateway;
const prefix = `test-cluster-gw-${process.pid}-${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');
/** The hash tag every admission counter of this deployment carries on a cluster. */
const COUNTERS = `{${prefix}:counters}`;
const COST_NANOS = Math.round(FIXED_COST_USD * 1e9);

test.before(async () => {
  cluster = await startRedisCluster();
  fake = await startFake(fixedUsageHandler(5));
  const environment = () => ({ REDIS_URL: cluster.url, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });
  a = await startGateway({}, environment());
  b = await startGateway({}, environment());
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  await cluster?.stop();
});

const serial = (title: string, implementation: (t: ExecutionContext) => void | Promise<void>) => test.serial(title, implementation);

registerLimitCases(serial, () => ({ a, b, upstream: fake.baseUrl }), 'two instances on Redis Cluster');

/** The key's spend and reservations in nano-USD, and its admitted requests, as the admin API reports them. */
async function usageOf(id: string): Promise<{ spent: number; reserved: number; requests: number }> {
  const usage = (await admin(a, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  return { spent: Math.round(usage.spend_usd.total * 1e9), reserved: Math.round(usage.reserved_usd * 1e9), requests: usage.requests.total };
}

/** Waits until no reservation is left (settlements run as responses close), or 5 s. */
async function settled(id: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const usage = await usageOf(id);
    if (usage.reserved === 0 || Date.now() > deadline) return usage;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Four loops (two per instance) send requests with `key` until `during` resolves, then stop.
 * Returns every answer's status and error code.
 */
async function loadWhile(key: string, during: Promise<unknown>): Promise<Array<{ status: number; code?: string }>> {
  const results: Array<{ status: number; code?: string }> = [];
  let done = false;
  void during.finally(() => (done = true)).catch(() => {});
  await Promise.all(
    [a, b, a, b].map(async (gateway) => {
      while (!done) {
        const answer = await chatWithKey(gateway, key).catch((error: Error) => ({ status: 0, json: { error: { code: error.message } } }));
        results.push({ status: answer.status, ...(answer.status === 200 ? {} : { code: answer.json?.error?.code }) });
      }
    }),
  );
  return results;
}

async function budgetedKey(t: ExecutionContext, name: string) {
  return createKey(t, a, { name: `${name}-${prefix}`, provider: 'openai', provider_key: 'sk-failover-secret-0123456789', custom_host: fake.baseUrl, limits: { budget_usd: 100_000 * FIXED_COST_USD } });
}

serial('a planned failover of the counters\' primary (CLUSTER FAILOVER) under load: every request succeeds, spend exact', async (t) => {
  const { id, key } = await budgetedKey(t, 'planned');
  const before = await cluster.primaryOf(COUNTERS);
  const failover = new Promise((resolve) => setTimeout(resolve, 300)).then(() => cluster.failoverPrimaryOf(COUNTERS));
  const results = await loadWhile(key, failover.then(() => new Promise((resolve) => setTimeout(resolve, 500))));
  const { promoted } = await failover;
  t.not(promoted.port, before.port);
  const failed = results.filter((result) => result.status !== 200);
  t.deepEqual(failed, [], 'no request failed');
  const usage = await settled(id);
  t.is(usage.reserved, 0);
  t.is(usage.spent, results.length * COST_NANOS, `${results.length} requests, each charged once`);
  t.is(usage.requests, results.length);
});

serial('the counters\' primary killed under load: requests succeed or fail with 503 state_unavailable, none is charged twice, admission resumes exact on the promoted replica', async (t) => {
  const { id, key } = await budgetedKey(t, 'killed');
  const failover = new Promise((resolve) => setTimeout(resolve, 300)).then(() => cluster.killPrimaryOf(COUNTERS));
  const results = await loadWhile(key, failover.then(() => new Promise((resolve) => setTimeout(resolve, 1000))));
  const { killed, promoted } = await failover;
  t.not(killed.port, promoted.port);
  const succeeded = results.filter((result) => result.status === 200).length;
  const failures = new Set(results.filter((result) => result.status !== 200).map((result) => `${result.status} ${result.code}`));
  t.log(`${results.length} requests during the load: ${succeeded} succeeded; failures: ${[...failures].join(', ') || 'none'}`);
  t.deepEqual([...failures].filter((failure) => failure !== '503 state_unavailable'), [], 'every failure is the documented one');
  const during = await settled(id);
  // Never charged twice: what is spent is at most what succeeded. (A request whose settlement hit the
  // failover keeps its reservation, and the killed primary may have acknowledged writes its replica
  // had not received yet: Redis replicates asynchronously.)
  t.true(during.spent <= succeeded * COST_NANOS, `spent ${during.spent} for ${succeeded} answers`);
  t.true(during.requests <= results.length, 'no admission counted twice');

  // After the failover: admission and settlement on the new primary, exact.
  const after = await Promise.all(Array.from({ length: 20 }, (_, index) => chatWithKey(index % 2 ? a : b, key)));
  t.deepEqual(
    after.map((answer) => answer.status),
    Array.from({ length: 20 }, () => 200),
  );
  const now = await settled(id);
  t.is(now.spent - during.spent, 20 * COST_NANOS);
  t.is(now.requests - during.requests, 20);
  t.is(now.reserved, during.reserved);
});
