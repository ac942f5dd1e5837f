import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { ACCOUNT_KEY, gatewayHeaders, startGateway, type TestGateway } from './harness.js';

// Issue item 12: wrong keys are limited per client address and in total (429 too_many_failed_auth
// with Retry-After), on the API, the admin routes and the dashboard sign-in; a valid key is never
// refused by it. The client address comes from X-Forwarded-For only past `server.trustProxy` hops.
// The addresses below are header values only: nothing connects to them.

const WRONG = 'gw-wrong-key-0123456789abcdef';
let fake: Fake;
const gateways: TestGateway[] = [];

test.before(async () => {
  fake = await startFake();
});
test.after.always(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  await fake?.close();
});

async function gatewayWith(failedAuth: { perAddress: number; global: number }, trustProxy: number): Promise<TestGateway> {
  const gateway = await startGateway({ server: { trustProxy, failedAuth: { ...failedAuth, windowMs: 60_000 } } });
  gateways.push(gateway);
  return gateway;
}

const chat = (gateway: TestGateway, headers: Record<string, string>) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });

async function errorOf(response: Response): Promise<{ status: number; code: string; retryAfter: string | null }> {
  const body = (await response.json()) as { error: { code: string } };
  return { status: response.status, code: body.error.code, retryAfter: response.headers.get('retry-after') };
}

test('API: after N wrong keys from one address, more get 429 with Retry-After; a valid key from it still works', async (t) => {
  const gateway = await gatewayWith({ perAddress: 3, global: 1000 }, 1);
  const from = { 'x-forwarded-for': '203.0.113.1' };
  for (let attempt = 0; attempt < 3; attempt++) {
    t.like(await errorOf(await chat(gateway, { ...from, 'x-gateway-api-key': WRONG })), { status: 401, code: 'invalid_api_key' });
  }
  const refused = await errorOf(await chat(gateway, { ...from, 'x-gateway-api-key': WRONG }));
  t.like(refused, { status: 429, code: 'too_many_failed_auth' });
  t.true(Number(refused.retryAfter) >= 1 && Number(refused.retryAfter) <= 60, `Retry-After ${refused.retryAfter}`);
  t.is((await chat(gateway, { ...from, 'x-gateway-api-key': ACCOUNT_KEY })).status, 200, 'the valid key is not refused');
  t.like(await errorOf(await chat(gateway, { 'x-forwarded-for': '203.0.113.2', 'x-gateway-api-key': WRONG })), { status: 401 }, 'another address is not throttled');
});

test('trustProxy 1: the client is the entry the proxy appended; addresses the client wrote further left are ignored', async (t) => {
  const gateway = await gatewayWith({ perAddress: 2, global: 1000 }, 1);
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const forged = { 'x-forwarded-for': `198.51.100.${attempt}, 203.0.113.7`, 'x-gateway-api-key': WRONG };
    statuses.push((await chat(gateway, forged)).status);
  }
  t.deepEqual(statuses, [401, 401, 429]);
});

test('trustProxy 0 (default): X-Forwarded-For is ignored and the socket address counts', async (t) => {
  const gateway = await gatewayWith({ perAddress: 2, global: 1000 }, 0);
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    statuses.push((await chat(gateway, { 'x-forwarded-for': `203.0.113.${10 + attempt}`, 'x-gateway-api-key': WRONG })).status);
  }
  t.deepEqual(statuses, [401, 401, 429]);
});

test('the global limit: wrong keys from many addresses get 429 once all together passed it', async (t) => {
  const gateway = await gatewayWith({ perAddress: 100, global: 3 }, 1);
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    statuses.push((await chat(gateway, { 'x-forwarded-for': `203.0.113.${20 + attempt}`, 'x-gateway-api-key': WRONG })).status);
  }
  t.deepEqual(statuses, [401, 401, 401, 429]);
  t.is((await chat(gateway, { 'x-forwarded-for': '203.0.113.99', 'x-gateway-api-key': ACCOUNT_KEY })).status, 200);
});

test('admin routes and the dashboard sign-in are limited the same way; the account key still works', async (t) => {
  const gateway = await gatewayWith({ perAddress: 2, global: 1000 }, 1);
  const admin = (key: string, address: string) => fetch(`${gateway.url}/admin/policies`, { headers: { 'x-gateway-api-key': key, 'x-forwarded-for': address } });
  const signIn = (key: string, address: string) =>
    fetch(`${gateway.url}/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ api_key: key }),
    });
  for (const [name, call, address] of [
    ['admin', admin, '203.0.113.30'],
    ['dashboard', signIn, '203.0.113.31'],
  ] as const) {
    const statuses = [];
    for (let attempt = 0; attempt < 3; attempt++) statuses.push((await call(WRONG, address)).status);
    t.deepEqual(statuses, [401, 401, 429], name);
    const refused = await errorOf(await call(WRONG, address));
    t.like(refused, { status: 429, code: 'too_many_failed_auth' }, name);
    t.truthy(refused.retryAfter, name);
    t.true((await call(ACCOUNT_KEY, address)).ok, `${name}: the account key still works`);
  }
});
