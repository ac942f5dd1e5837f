import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { type RedisCluster, startRedisCluster } from '../redis-cluster-harness.js';
import { registerLevelCases } from '../vault/level-cases.js';
import { registerLimitCases } from '../vault/limit-cases.js';
import { fixedUsageHandler } from '../vault/vault-harness.js';
import { budgetedKey, checkKilledUnderLoad, COST_NANOS, loadWhile, settled } from './failover-load.js';

// Two gateway instances on a real Redis Cluster: the limit and level cases of two instances on one
// Redis (budgets and rates exact under concurrent requests across both, every level of a request
// admitted atomically: key, team, user, organization, end user, tag), then the primary holding the
// counters failed over in the middle of a load, planned (CLUSTER FAILOVER) and by a kill.

let cluster: RedisCluster;
let fake: Fake;
let slow: Fake;
let a: TestGateway;
let b: TestGateway;
const prefix = `test-cluster-gw-${process.pid}-${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');
/** The hash tag every admission counter of this deployment carries on a cluster. */
const COUNTERS = `{${prefix}:counters}`;

test.before(async () => {
  cluster = await startRedisCluster();
  fake = await startFake(fixedUsageHandler(5));
  slow = await startFake(fixedUsageHandler(1500));
  const environment = () => ({ REDIS_URL: cluster.url, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });
  a = await startGateway({}, environment());
  b = await startGateway({}, environment());
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  await slow?.close();
  await cluster?.stop();
});

const serial = (title: string, implementation: (t: ExecutionContext) => void | Promise<void>) => test.serial(title, implementation);

registerLimitCases(serial, () => ({ a, b, upstream: fake.baseUrl }), 'two instances on Redis Cluster');
registerLevelCases(serial, () => ({ a, b, upstream: fake.baseUrl, slowUpstream: slow.baseUrl }), 'two instances on Redis Cluster');

serial('a planned failover of the counters\' primary (CLUSTER FAILOVER) under load: every request succeeds, spend exact', async (t) => {
  const { id, key } = await budgetedKey(t, a, `planned-${prefix}`, fake.baseUrl);
  const before = await cluster.primaryOf(COUNTERS);
  const failover = new Promise((resolve) => setTimeout(resolve, 300)).then(() => cluster.failoverPrimaryOf(COUNTERS));
  const results = await loadWhile(a, b, key, failover.then(() => new Promise((resolve) => setTimeout(resolve, 500))));
  const { promoted } = await failover;
  t.not(promoted.port, before.port);
  const failed = results.filter((result) => result.status !== 200);
  t.deepEqual(failed, [], 'no request failed');
  const usage = await settled(a, id);
  t.is(usage.reserved, 0);
  t.is(usage.spent, results.length * COST_NANOS, `${results.length} requests, each charged once`);
  t.is(usage.requests, results.length);
});

serial('the counters\' primary killed under load: requests succeed or fail with 503 state_unavailable, none is charged twice, admission resumes exact on the promoted replica', async (t) => {
  const { id, key } = await budgetedKey(t, a, `killed-${prefix}`, fake.baseUrl);
  const failover = new Promise((resolve) => setTimeout(resolve, 300)).then(() => cluster.killPrimaryOf(COUNTERS));
  const results = await loadWhile(a, b, key, failover.then(() => new Promise((resolve) => setTimeout(resolve, 1000))));
  const { killed, promoted } = await failover;
  t.not(killed.port, promoted.port);
  await checkKilledUnderLoad(t, a, b, id, key, results);
});
