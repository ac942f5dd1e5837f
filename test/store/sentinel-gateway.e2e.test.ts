import { randomBytes } from 'node:crypto';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { type RedisSentinelSet, startRedisSentinel } from '../redis-sentinel-harness.js';
import { fixedUsageHandler } from '../vault/vault-harness.js';
import { budgetedKey, checkKilledUnderLoad, loadWhile } from './failover-load.js';

// Two gateway instances behind Sentinel (a primary, a replica, three sentinels, a password): the
// primary killed in the middle of a load. The gateway keeps serving (commands wait for the new
// primary, or fail with 503 state_unavailable), nothing is charged twice, and admission resumes
// exact on the promoted replica.

let sentinel: RedisSentinelSet;
let fake: Fake;
let a: TestGateway;
let b: TestGateway;
const prefix = `test-sentinel-gw-${process.pid}-${randomBytes(4).toString('hex')}`;

test.before(async () => {
  sentinel = await startRedisSentinel({ password: 'sentinel-gateway-secret' });
  fake = await startFake(fixedUsageHandler(5));
  const environment = { REDIS_URL: sentinel.url, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
  a = await startGateway({}, environment);
  b = await startGateway({}, environment);
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  await sentinel?.stop();
});

test.serial('the primary killed under load: requests succeed or fail with 503 state_unavailable, none is charged twice, admission resumes exact on the promoted replica', async (t) => {
  const { id, key } = await budgetedKey(t, a, `killed-${prefix}`, fake.baseUrl);
  const failover = new Promise((resolve) => setTimeout(resolve, 300)).then(() => sentinel.killPrimary());
  const results = await loadWhile(a, b, key, failover.then(() => new Promise((resolve) => setTimeout(resolve, 1000))));
  const { killed, promoted } = await failover;
  t.not(killed.port, promoted.port);
  t.true(results.some((result) => result.status === 200));
  await checkKilledUnderLoad(t, a, b, id, key, results);
});
