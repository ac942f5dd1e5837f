import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import test from 'ava';
import { openAIChatHandler, startFake } from '../fakes/openai-fake.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { type Instance, killInstance, removeTemporaryDirectories, startInstance, stablePort, stopAll, temporaryDirectory, adminCall, waitFor as waitUntil } from './instances-harness.js';

// Issue 39, "budgets exact": a gateway process SIGKILLed with requests in flight leaves their budget
// reservations counted; with a lease (here GATEWAY_RESERVATION_LEASE_MS, short for the test) the
// next admission after it ends releases them, so another instance admits up to the full budget
// again (docs/limits.md, "Reservations and their lease").

const ACCOUNT_KEY = 'gw-scale-reservation-lease-account-key-01';
const LEASE_MS = 15_000;

const redis = await redisAvailable();
if (!redis && process.env.CI === 'true') throw new Error('reservation-lease test: Redis missing under CI=true');

const prefix = `gw-lease-${process.pid}-${randomBytes(4).toString('hex')}`;
test.after.always(async () => {
  await stopAll();
  removeTemporaryDirectories();
  if (redis) await clearRedisPrefix(prefix).catch(() => {});
});

const admin = (base: Instance, method: string, path: string, body?: unknown) => adminCall(base, ACCOUNT_KEY, method, path, body);
const waitFor = (what: string, check: () => Promise<boolean> | boolean, limitMs = 60_000) => waitUntil(what, check, limitMs, 50);

(redis ? test.serial : test.skip)('a gateway SIGKILLed with requests in flight: once their lease ends, another instance admits up to the full budget', async (t) => {
  t.timeout(3 * 60_000);
  // The upstream holds every request whose prompt starts with "hold" (the requests in flight at the SIGKILL).
  const held: ServerResponse[] = [];
  const fake = await startFake((request, response) => {
    if (String(request.json().messages?.[0]?.content).startsWith('hold')) held.push(response);
    else return openAIChatHandler(request, response);
  });
  const environment = {
    GATEWAY_API_KEY: ACCOUNT_KEY,
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    REDIS_URL,
    GATEWAY_REDIS_PREFIX: prefix,
    GATEWAY_RESERVATION_LEASE_MS: String(LEASE_MS),
  };
  let a: Instance | undefined;
  let b: Instance | undefined;
  try {
    [a, b] = await Promise.all([
      startInstance('a', await stablePort(), temporaryDirectory('lease-a'), environment),
      startInstance('b', await stablePort(), temporaryDirectory('lease-b'), environment),
    ]);
    const credential = await admin(a, 'POST', '/admin/credentials', { name: `${prefix}-openai`, provider: 'openai', api_key: 'sk-lease-secret-0123456789' });
    const key = await admin(a, 'POST', '/admin/virtual-keys', {
      name: `${prefix}-key`,
      provider: 'openai',
      credential_id: credential.id,
      custom_host: fake.baseUrl,
      limits: { budget_usd: 1000, budget_period: 'total' },
    });
    let sent = 0;
    const send = (instance: Instance) =>
      fetch(`${instance.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': key.key, 'content-type': 'application/json' },
        // Each prompt its own (the response cache would make identical ones wait for the first).
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hold ${sent++} ${prefix}` }], max_tokens: 4000 }),
      });
    const inFlight: Array<Promise<unknown>> = [];
    const hold = async (instance: Instance) => {
      const before = held.length;
      inFlight.push(send(instance).catch(() => undefined));
      await waitFor('the request upstream', () => held.length === before + 1);
    };
    const usage = async (instance: Instance) => (await admin(instance, 'GET', `/admin/virtual-keys/${key.id}/usage`)) as { reserved_usd: number; spend_usd: { total: number } };

    // What one request reserves; then a budget of 3.5 such reservations.
    const firstSent = Date.now();
    await hold(a);
    const one = (await usage(a)).reserved_usd;
    t.true(one > 0);
    await admin(a, 'PATCH', `/admin/virtual-keys/${key.id}`, { limits: { budget_usd: one * 3.5, budget_period: 'total' } });
    await hold(a);
    await hold(a);
    t.is((await send(a)).status, 403, 'three reservations fill the budget');
    t.is(held.length, 3);

    await killInstance(a);
    // The killed instance's reservations are still counted: B refuses (while the first lease holds).
    if (Date.now() + 2000 < firstSent + LEASE_MS) {
      const refused = await send(b);
      t.is(refused.status, 403, 'the dead instance’s reservations still count before their lease ends');
    } else t.log('the lease ended before B could be asked: the refusal before it is not checked');
    t.true(Math.abs((await usage(b)).reserved_usd - 3 * one) < 1e-9, 'three reservations of the dead instance counted');

    // Once the last lease has ended, B's first admission releases them: it admits three again.
    const leaseEnds = Date.now() + LEASE_MS;
    await new Promise((resolve) => setTimeout(resolve, leaseEnds - Date.now() + 200));
    await hold(b);
    await hold(b);
    await hold(b);
    t.is((await send(b)).status, 403, 'and no more than the budget');
    const after = await usage(b);
    t.true(Math.abs(after.reserved_usd - 3 * one) < 1e-9, `only B's three reservations are counted (${after.reserved_usd} USD, one ${one} USD)`);
    t.is(after.spend_usd.total, 0, 'nothing was charged: no request was answered');
    t.log(`one reservation ${one} USD; budget ${one * 3.5} USD; lease ${LEASE_MS} ms`);
    for (const response of held) response.destroy();
    await Promise.all(inFlight);
  } catch (error) {
    for (const instance of [a, b]) if (instance) t.log(`instance ${instance.name} output:\n${instance.output().slice(-4000)}`);
    throw error;
  } finally {
    for (const response of held) response.destroy();
    await stopAll();
    await fake.close();
  }
});
