import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { registerLimitCases } from './limit-cases.js';
import { admin, chatWithKey, clearRedisPrefix, createKey, fixedUsageHandler, REDIS_URL, redisAvailable } from './vault-harness.js';

let fake: Fake;
let a: TestGateway;
let b: TestGateway;
const prefix = `test-vault-${process.pid}-${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');
let available = false;

test.before(async () => {
  available = await redisAvailable();
  if (!available) return;
  fake = await startFake(fixedUsageHandler());
  // Two instances: separate data dirs, one Redis, one master key.
  const environment = () => ({ REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });
  a = await startGateway({}, environment());
  b = await startGateway({}, environment());
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  if (available) await clearRedisPrefix(prefix);
});

/** A serial test that passes with a note when Redis is unreachable outside CI (redisAvailable fails under CI=true). */
const serial = (title: string, implementation: (t: ExecutionContext) => void | Promise<void>) =>
  test.serial(title, async (t) => {
    if (!available) {
      t.pass('Redis unreachable: skipped (see the printed reason)');
      return;
    }
    await implementation(t);
  });

registerLimitCases(serial, () => ({ a, b, upstream: fake.baseUrl }), 'two instances on Redis');

async function refusedWithin(gateway: TestGateway, key: string, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs + 500) {
    if ((await chatWithKey(gateway, key)).status === 401) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Number.POSITIVE_INFINITY;
}

serial('a key deleted on instance A is refused on instance B within 1 s', async (t) => {
  const { id, key } = await createKey(t, a, { name: `deleted-${prefix}`, provider: 'openai', provider_key: 'sk-deleted-secret-0123456789', custom_host: fake.baseUrl });
  t.is((await chatWithKey(b, key)).status, 200, 'B knows (and now caches) the key');
  t.is((await chatWithKey(b, key)).status, 200);
  t.is((await admin(a, 'DELETE', `/admin/virtual-keys/${id}`)).status, 204);
  const elapsed = await refusedWithin(b, key, 1000);
  t.log(`refused on B ${elapsed.toFixed(1)} ms after the deletion on A answered`);
  t.true(elapsed < 1000, `took ${elapsed} ms`);
  const refused = await chatWithKey(b, key);
  t.is(refused.status, 401);
  t.is(refused.json.error.code, 'invalid_api_key');
});

serial('a key rotated on A: the old value is refused on B within 1 s, the new one works on B', async (t) => {
  const { id, key } = await createKey(t, a, { name: `rotated-${prefix}`, provider: 'openai', provider_key: 'sk-rotated-secret-0123456789', custom_host: fake.baseUrl });
  t.is((await chatWithKey(b, key)).status, 200);
  const rotated = await admin(a, 'POST', `/admin/virtual-keys/${id}/rotate`);
  t.is(rotated.status, 200);
  t.not(rotated.json.key, key);
  t.true((await refusedWithin(b, key, 1000)) < 1000);
  t.is((await chatWithKey(b, rotated.json.key)).status, 200);
});

serial('a key changed on A (allowed models) is enforced on B within 1 s', async (t) => {
  const { id, key } = await createKey(t, a, { name: `changed-${prefix}`, provider: 'openai', provider_key: 'sk-changed-secret-0123456789', custom_host: fake.baseUrl });
  t.is((await chatWithKey(b, key)).status, 200);
  t.is((await admin(a, 'PATCH', `/admin/virtual-keys/${id}`, { limits: { allowed_models: ['gpt-4.1'] } })).status, 200);
  const started = performance.now();
  let status = 200;
  while (status === 200 && performance.now() - started < 1500) {
    status = (await chatWithKey(b, key)).status;
    if (status === 200) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.is(status, 403);
  t.true(performance.now() - started < 1000);
});
