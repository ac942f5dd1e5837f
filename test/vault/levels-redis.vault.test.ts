import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { registerLevelCases } from './level-cases.js';
import { clearRedisPrefix, fixedUsageHandler, REDIS_URL, redisAvailable } from './vault-harness.js';

/** Every level's limits with two gateway instances sharing one Redis (docs/limits.md#levels). */
let fake: Fake;
let slow: Fake;
let a: TestGateway;
let b: TestGateway;
const prefix = `test-levels-${process.pid}-${randomBytes(4).toString('hex')}`;
let available = false;

test.before(async () => {
  available = await redisAvailable();
  if (!available) return;
  fake = await startFake(fixedUsageHandler());
  slow = await startFake(fixedUsageHandler(1500));
  const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
  a = await startGateway({}, { ...environment });
  b = await startGateway({}, { ...environment });
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  await slow?.close();
  if (available) await clearRedisPrefix(prefix);
});

const serial = (title: string, implementation: (t: ExecutionContext) => void | Promise<void>) =>
  test.serial(title, async (t) => {
    if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
    await implementation(t);
  });

registerLevelCases(serial, () => ({ a, b, upstream: fake.baseUrl, slowUpstream: slow.baseUrl }), 'two instances on Redis');
