import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { createKey, fixedUsageHandler } from '../vault/vault-harness.js';

// Issue 31, item 2: a gateway key (the account key, or any vk-… value) never goes upstream: not as
// the provider credential taken from Authorization next to x-gateway-api-key (plain path, route
// targets without a credential), and not in a header named by x-gateway-forward-headers. Each is
// a 400 gateway_key_not_forwardable naming the header, before anything is sent.

let fake: Fake;
let gateway: TestGateway;
let virtualKey: string;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({
    // A config route whose target has no credential: it takes the caller's Authorization Bearer.
    routes: { bearer: { strategy: { mode: 'single' }, targets: [{ name: 'only', provider: 'openai', custom_host: fake.baseUrl }] } },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

/** A chat request; returns the status and body. */
async function chat(headers: Record<string, string>) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-trace-id': traceId('gateway-key'), ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, json: (await response.json()) as any };
}

/** The plain path with the account key: provider openai, the fake as custom host (added per test). */
const plain = { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai' };

/** Every header value the fake has ever received, joined: a gateway key must never be in it. */
const everythingReceived = () => fake.requests.map((request) => JSON.stringify(request.headers)).join('\n');

test.serial('the key setup', async (t) => {
  virtualKey = (await createKey(t, gateway, { name: 'upstream-probe', provider: 'openai', provider_key: 'sk-upstream-probe-0123456789', custom_host: fake.baseUrl })).key;
  t.pass();
});

test.serial('Authorization holding a gateway key next to x-gateway-api-key is 400 gateway_key_not_forwardable on the plain path and on a route', async (t) => {
  const base = { ...plain, 'x-gateway-custom-host': fake.baseUrl };
  for (const token of [ACCOUNT_KEY, virtualKey, 'vk-not-a-current-key-but-claimed-by-its-prefix']) {
    for (const headers of [base, { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-config': 'bearer' }]) {
      const before = fake.requests.length;
      const refused = await chat({ ...headers, authorization: `Bearer ${token}` });
      t.is(refused.status, 400, `${token.slice(0, 6)} ${JSON.stringify(refused.json)}`);
      t.like(refused.json.error, { type: 'invalid_request_error', code: 'gateway_key_not_forwardable', param: 'authorization' });
      t.false(JSON.stringify(refused.json).includes(token), 'the key is not echoed');
      t.is(fake.requests.length, before, 'nothing was sent');
    }
  }
  // A virtual key in x-gateway-api-key with the account key as Bearer on a route target without a credential.
  const routedKey = await createKey(t, gateway, { name: 'bearer-route-key', provider: 'openai', provider_key: 'sk-x-0123456789', allowed_routes: ['bearer'] });
  const refused = await chat({ 'x-gateway-api-key': routedKey.key, 'x-gateway-config': 'bearer', authorization: `Bearer ${ACCOUNT_KEY}` });
  t.is(refused.status, 400);
  t.is(refused.json.error.code, 'gateway_key_not_forwardable');
  t.false(everythingReceived().includes(ACCOUNT_KEY));
  t.false(everythingReceived().includes(virtualKey));
});

test.serial('a forwarded header holding a gateway key (alone, after a scheme, as name=value, in a list) is refused and names the header', async (t) => {
  const base = { ...plain, 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}` };
  const forms = [ACCOUNT_KEY, virtualKey, `Bearer ${ACCOUNT_KEY}`, `Token ${virtualKey}`, `key=${ACCOUNT_KEY}`, `a, ${virtualKey}; b`, ` ${ACCOUNT_KEY} `];
  for (const value of forms) {
    const before = fake.requests.length;
    const refused = await chat({ ...base, 'x-gateway-forward-headers': 'x-upstream-token', 'x-upstream-token': value });
    t.is(refused.status, 400, value.slice(0, 12));
    t.like(refused.json.error, { code: 'gateway_key_not_forwardable', param: 'x-upstream-token' });
    t.regex(refused.json.error.message, /x-upstream-token/);
    t.is(fake.requests.length, before);
  }
  // On a route, where the caller's own gateway key came in Authorization (no x-gateway-api-key) and
  // authorization is named for forwarding: the key that identified the caller does not go either.
  const viaBearer = await chat({ authorization: `Bearer ${ACCOUNT_KEY}`, 'x-gateway-config': 'bearer', 'x-gateway-forward-headers': 'authorization' });
  t.is(viaBearer.status, 400, JSON.stringify(viaBearer.json));
  t.like(viaBearer.json.error, { code: 'gateway_key_not_forwardable', param: 'authorization' });
  const viaApiKey = await chat({ 'x-api-key': virtualKey, 'x-gateway-config': 'bearer', 'x-gateway-forward-headers': 'x-api-key' });
  t.is(viaApiKey.status, 403, 'the key may not take that route at all');
  t.false(everythingReceived().includes(ACCOUNT_KEY));
  t.false(everythingReceived().includes(virtualKey));
});

test.serial('ordinary values still go: a provider token in Authorization, a forwarded header without a key', async (t) => {
  const base = { ...plain, 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}` };
  const answer = await chat({ ...base, 'x-gateway-forward-headers': 'x-upstream-token', 'x-upstream-token': 'Bearer some-upstream-token-0123456789' });
  t.is(answer.status, 200, JSON.stringify(answer.json));
  const last = fake.requests.at(-1)!;
  t.is(last.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  t.is(last.headers['x-upstream-token'], 'Bearer some-upstream-token-0123456789');
  const routed = await chat({ 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-config': 'bearer', authorization: `Bearer ${PROVIDER_KEY}` });
  t.is(routed.status, 200);
  t.is(fake.requests.at(-1)!.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  // A virtual key with its stored credential ignores the caller's Authorization: a gateway key there is not sent, and not refused.
  const ignored = await chat({ 'x-gateway-api-key': virtualKey, authorization: `Bearer ${ACCOUNT_KEY}` });
  t.is(ignored.status, 200);
  t.is(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-upstream-probe-0123456789');
  t.false(everythingReceived().includes(ACCOUNT_KEY));
});
