import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import nock from 'nock';
import OpenAI from 'openai';
import { resolveConfig } from '../../config/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, clearRedisPrefix, createKey, FIXED_COST_USD, FIXED_MESSAGES, fixedUsageHandler, REDIS_URL, redisAvailable } from './vault-harness.js';

const OLD_SECRET = 'sk-credential-old-secret-0123456789abcdef';
const NEW_SECRET = 'sk-credential-new-secret-fedcba9876543210';
const HOOK = 'http://alerts.test';
const HOOK_TOKEN = 'Bearer alert-hook-token-0123456789';
/** Five requests of the fake's fixed usage, 80 % after the fourth, 100 % after the fifth (5 × FIXED_COST_USD written out: the product in floats is 0.00007500000000000001). */
const BUDGET_USD = 0.000075;

let fake: Fake;
let gateway: TestGateway;
const answers: string[] = [];

async function call(method: string, path: string, body?: unknown, target: TestGateway = gateway) {
  const result = await admin(target, method, path, body);
  answers.push(result.text);
  return result;
}

const sdk = (key: string, target: TestGateway = gateway) =>
  new OpenAI({ apiKey: 'unused', baseURL: `${target.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': key } });
const ask = (key: string, target?: TestGateway) => sdk(key, target).chat.completions.create({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10 });

/** Webhook posts received by nock, and a way to wait for the n-th. */
function hookRecorder() {
  const received: Array<{ body: any; headers: Record<string, string> }> = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const record = (body: any, headers: Record<string, string>) => {
    received.push({ body, headers });
    for (const waiter of waiters.filter((entry) => received.length >= entry.count)) waiter.resolve();
  };
  const reached = (count: number) => (received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })));
  // nock 15 hands the reply function the request as a fetch Request.
  const reply = (status: number) => async (request: Request) => {
    record(JSON.parse(await request.text()), Object.fromEntries(request.headers));
    return [status, ''] as [number, string];
  };
  return { received, reached, reply };
}

test.before(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1/);
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({ alerts: { webhook: { url: `${HOOK}/budget`, headers: { authorization: HOOK_TOKEN } } } });
});

test.after.always(async () => {
  nock.cleanAll();
  nock.enableNetConnect();
  await gateway?.close();
  await fake?.close();
});

test.serial('credentials: listed by name with the keys using each; delete refused (409) while used; rotate keeps the id and the key works with the new secret', async (t) => {
  for (const name of ['zeta', 'Alpha', 'mid']) t.is((await call('POST', '/admin/credentials', { name: `${name} creds`, provider: 'openai', api_key: OLD_SECRET })).status, 201);
  const listed = (await call('GET', '/admin/credentials')).json.data as Array<{ id: string; name: string; used_by: unknown[] }>;
  t.deepEqual(listed.map((credential) => credential.name), ['Alpha creds', 'mid creds', 'zeta creds'], 'sorted by name, case-insensitively');
  t.true(listed.every((credential) => Array.isArray(credential.used_by) && credential.used_by.length === 0));
  const credential = listed[1];

  const key = await createKey(t, gateway, { name: 'uses-mid', provider: 'openai', credential_id: credential.id, custom_host: fake.baseUrl });
  const used = await call('GET', `/admin/credentials/${credential.id}`);
  t.is(used.status, 200);
  t.deepEqual(used.json.used_by, [{ id: key.id, name: 'uses-mid' }]);
  t.deepEqual((await call('GET', '/admin/credentials')).json.data.find((entry: { id: string }) => entry.id === credential.id).used_by, [{ id: key.id, name: 'uses-mid' }]);

  t.truthy((await ask(key.key)).id);
  t.is(fake.requests.at(-1)!.headers.authorization, `Bearer ${OLD_SECRET}`);

  const refused = await call('DELETE', `/admin/credentials/${credential.id}`);
  t.is(refused.status, 409);
  t.is(refused.json.error.code, 'credential_in_use');
  t.regex(refused.json.error.message, /used by 1 virtual key\(s\): uses-mid/);
  t.is((await call('GET', `/admin/credentials/${credential.id}`)).status, 200, 'still there');

  // Rotation: same id, new secret, no secret in the answer; the key's next request carries the new one
  // (the decrypted value cached for 60 s is dropped at once).
  const rotated = await call('POST', `/admin/credentials/${credential.id}/rotate`, { api_key: NEW_SECRET });
  t.is(rotated.status, 200);
  t.is(rotated.json.id, credential.id);
  t.truthy(rotated.json.rotated_at);
  t.is(rotated.json.sealed, undefined);
  t.truthy((await ask(key.key)).id);
  t.is(fake.requests.at(-1)!.headers.authorization, `Bearer ${NEW_SECRET}`);

  // After the key is deleted, the credential can go.
  t.is((await call('DELETE', `/admin/virtual-keys/${key.id}`)).status, 204);
  t.deepEqual((await call('GET', `/admin/credentials/${credential.id}`)).json.used_by, []);
  t.is((await call('DELETE', `/admin/credentials/${credential.id}`)).status, 204);
  t.is((await call('GET', `/admin/credentials/${credential.id}`)).status, 404);
});

test.serial('credential rotation refuses a bad body with the field named, and an unknown id with 404', async (t) => {
  const created = await call('POST', '/admin/credentials', { name: 'to rotate', api_key: OLD_SECRET });
  const id = created.json.id;
  const unknownField = await call('POST', `/admin/credentials/${id}/rotate`, { api_key: NEW_SECRET, name: 'renamed' });
  t.is(unknownField.status, 400);
  t.is(unknownField.json.error.param, 'name');
  const empty = await call('POST', `/admin/credentials/${id}/rotate`, {});
  t.is(empty.status, 400);
  t.is(empty.json.error.param, 'api_key');
  const blank = await call('POST', `/admin/credentials/${id}/rotate`, { api_key: '' });
  t.is(blank.status, 400);
  t.is(blank.json.error.param, 'api_key');
  t.is((await call('POST', '/admin/credentials/cred_missing/rotate', { api_key: NEW_SECRET })).status, 404);
  t.is((await call('GET', '/admin/credentials/cred_missing')).status, 404);
});

test.serial('budget alerts: 80 % and 100 % are posted once each to the webhook, listed by /admin/alerts and the key usage; the budget is then exhausted', async (t) => {
  const hook = hookRecorder();
  const scope = nock(HOOK)
    .post('/budget')
    .times(2)
    .reply(hook.reply(204));
  const { id, key } = await createKey(t, gateway, { name: 'alerted', provider: 'openai', provider_key: OLD_SECRET, custom_host: fake.baseUrl, limits: { budget_usd: BUDGET_USD, budget_period: 'day', requests_per_minute: 100 } });
  const plain = await createKey(t, gateway, { name: 'no-budget', provider: 'openai', provider_key: OLD_SECRET, custom_host: fake.baseUrl });
  for (let index = 0; index < 3; index++) t.is((await chatWithKey(gateway, key)).status, 200);
  for (let index = 0; index < 5; index++) t.is((await chatWithKey(gateway, plain.key)).status, 200);
  t.deepEqual((await call('GET', '/admin/alerts')).json.data, [], 'no alert at 60 %, none for a key without a budget');
  const plainUsage = (await call('GET', `/admin/virtual-keys/${plain.id}/usage`)).json;
  t.like(plainUsage, { budget_used: null, budget_exhausted: null, budget_resets_at: null, remaining_requests_this_minute: null, alerts: [] });
  t.is(plainUsage.requests.minute, null, 'no per-minute window is kept without a per-minute limit');
  t.is(plainUsage.requests.day, 5);

  t.is((await chatWithKey(gateway, key)).status, 200);
  await hook.reached(1);
  t.like(hook.received[0].body, { type: 'budget.threshold', key_id: id, key_name: 'alerted', threshold: 80, budget_usd: BUDGET_USD, period: 'day' });
  t.is(hook.received[0].headers.authorization, HOOK_TOKEN);
  t.regex(hook.received[0].body.resets_at, /T00:00:00\.000Z$/);
  t.deepEqual((await call('GET', '/admin/alerts')).json.data.map((alert: { threshold: number }) => alert.threshold), [80]);

  t.is((await chatWithKey(gateway, key)).status, 200);
  await hook.reached(2);
  t.like(hook.received[1].body, { key_id: id, threshold: 100 });
  const refused = await chatWithKey(gateway, key);
  t.is(refused.status, 403);
  t.is(refused.json.error.code, 'budget_exceeded');

  const alerts = (await call('GET', '/admin/alerts')).json.data;
  t.deepEqual(alerts.map((alert: { key_name: string; threshold: number }) => [alert.key_name, alert.threshold]), [['alerted', 100], ['alerted', 80]]);
  const usage = (await call('GET', `/admin/virtual-keys/${id}/usage`)).json;
  t.true(usage.budget_exhausted);
  t.is(usage.budget_used, 1);
  t.regex(usage.budget_resets_at, /T00:00:00\.000Z$/);
  t.is(usage.requests.minute, 5, 'admitted requests of the last minute (the refused one is not counted)');
  t.is(usage.remaining_requests_this_minute, 95);
  t.deepEqual(usage.alerts.map((alert: { threshold: number }) => alert.threshold), [100, 80]);
  t.true(scope.isDone());
  // A refused request is not charged: nothing more is sent for this period.
  t.is((await chatWithKey(gateway, key)).status, 403);
  t.is(hook.received.length, 2);

  // A higher budget is a new scale: its alerts start again (the old ones no longer show).
  t.is((await call('PATCH', `/admin/virtual-keys/${id}`, { limits: { budget_usd: BUDGET_USD * 4, budget_period: 'day' } })).status, 200);
  t.deepEqual((await call('GET', '/admin/alerts')).json.data, []);
  t.is((await call('GET', `/admin/virtual-keys/${id}/usage`)).json.budget_exhausted, false);
});

test.serial('a webhook answering 503 is retried', async (t) => {
  const hook = hookRecorder();
  nock(HOOK).post('/budget').reply(503, 'busy');
  nock(HOOK)
    .post('/budget')
    .times(2)
    .reply(hook.reply(200));
  const { key } = await createKey(t, gateway, { name: 'retried', provider: 'openai', provider_key: OLD_SECRET, custom_host: fake.baseUrl, limits: { budget_usd: FIXED_COST_USD } });
  t.is((await chatWithKey(gateway, key)).status, 200);
  await hook.reached(2);
  // Both thresholds are crossed by the one request: two posts; the first attempt of one was answered 503.
  t.deepEqual(hook.received.map((entry) => entry.body.threshold).sort(), [100, 80]);
});

test.serial('a webhook that keeps failing is logged once, without its URL, headers or any secret', async (t) => {
  const failures = nock(HOOK).post('/budget').times(6).reply(500, 'down');
  const logged = gateway.lines.length;
  const { key } = await createKey(t, gateway, { name: 'failing', provider: 'openai', provider_key: OLD_SECRET, custom_host: fake.baseUrl, limits: { budget_usd: FIXED_COST_USD } });
  t.is((await chatWithKey(gateway, key)).status, 200);
  while (gateway.lines.slice(logged).filter((line) => line.msg === 'budget alert webhook failed').length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  const lines = gateway.lines.slice(logged).filter((line) => line.msg === 'budget alert webhook failed');
  t.like(lines[0], { status: 500, attempts: 3 });
  t.true(failures.isDone());
  const text = gateway.rawLog();
  for (const secret of [HOOK_TOKEN, 'alerts.test', OLD_SECRET, NEW_SECRET, ACCOUNT_KEY]) t.false(text.includes(secret), secret);
});

test('alerts.webhook is checked at boot: an http(s) URL, string headers, a positive timeout', (t) => {
  const boot = (webhook: unknown) => () => resolveConfig({ providers: [], alerts: { webhook } as never }, {});
  t.throws(boot({ url: 'ftp://hooks.test/x' }), { message: /alerts\.webhook\.url must be an http:\/\/ or https:\/\/ URL/ });
  t.throws(boot({ url: 'not a url' }), { message: /alerts\.webhook\.url/ });
  t.throws(boot({ url: `${HOOK}/x`, headers: { authorization: 42 } }), { message: /alerts\.webhook\.headers must be an object of string values/ });
  t.throws(boot({ url: `${HOOK}/x`, timeoutMs: -1 }), { message: /alerts\.webhook\.timeoutMs/ });
  t.deepEqual(resolveConfig({ providers: [], alerts: { webhook: { url: `${HOOK}/x` } } }, {}).alerts, { webhook: { url: `${HOOK}/x`, headers: {}, timeoutMs: 5000 } });
  t.deepEqual(resolveConfig({ providers: [] }, {}).alerts, {});
});

test.serial('no admin answer carried a secret', (t) => {
  for (const answer of answers) for (const secret of [OLD_SECRET, NEW_SECRET]) t.false(answer.includes(secret));
});

/** Two instances on one Redis: a threshold crossed on both is posted once. */
test.serial('with Redis, two instances post each threshold once', async (t: ExecutionContext) => {
  if (!(await redisAvailable())) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const prefix = `test-alerts-${process.pid}-${randomBytes(4).toString('hex')}`;
  const environment = () => ({ REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: randomKey });
  const randomKey = randomBytes(32).toString('hex');
  const config = { alerts: { webhook: { url: `${HOOK}/shared` } } };
  const a = await startGateway(config, environment());
  const b = await startGateway(config, environment());
  t.teardown(async () => {
    await Promise.all([a.close(), b.close()]);
    await clearRedisPrefix(prefix);
  });
  const hook = hookRecorder();
  nock(HOOK)
    .post('/shared')
    .times(4)
    .reply(hook.reply(204));
  const { key } = await createKey(t, a, { name: 'shared', provider: 'openai', provider_key: OLD_SECRET, custom_host: fake.baseUrl, limits: { budget_usd: 10 * FIXED_COST_USD } });
  // Spend to 90 % alternating instances, then the last 10 % concurrently on both.
  for (let index = 0; index < 9; index++) t.is((await chatWithKey(index % 2 === 0 ? a : b, key)).status, 200);
  await hook.reached(1);
  const statuses = await Promise.all([chatWithKey(a, key), chatWithKey(b, key), chatWithKey(a, key), chatWithKey(b, key)]);
  t.is(statuses.filter((answer) => answer.status === 200).length, 1);
  await hook.reached(2);
  // Both instances have now seen spend past 80 % and at 100 %; one more charge-free look on each changes nothing.
  t.is((await chatWithKey(a, key)).status, 403);
  t.is((await chatWithKey(b, key)).status, 403);
  t.deepEqual(hook.received.map((entry) => entry.body.threshold), [80, 100]);
  t.deepEqual((await admin(b, 'GET', '/admin/alerts')).json.data.map((alert: { threshold: number }) => alert.threshold), [100, 80]);
});
