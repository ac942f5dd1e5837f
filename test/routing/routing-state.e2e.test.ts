import test from 'ava';
import { regex } from '../../plugins/guardrails/regex/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { MemoryRoutingState } from '../../core/routing/state.js';
import type { RouteSource, StoredRoute, TargetCredentials } from '../../core/routing/sources.js';
import type { Route } from '../../core/routing/route.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { admin, createKey, FIXED_COST_USD, FIXED_MESSAGES, fixedUsageHandler } from '../vault/vault-harness.js';

// A second gateway with the routing dependencies injected: a breaker state on a clock the test
// moves, in-memory stored routes and aliases (RouteSource), and in-memory stored credentials and
// virtual keys (TargetCredentials), as the vault's state store provides them in production.
let a: Fake;
let b: Fake;
let gateway: TestGateway;
let now = 1_000_000;
const STORED_B = 'sk-stored-credential-for-b-0123456789';
const VK_B = 'sk-virtual-key-credential-for-b-0123456789';

const fail503 = (_request: unknown, response: import('node:http').ServerResponse) => {
  response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down","type":"server_error","code":null}}');
};

test.before(async () => {
  a = await startFake();
  b = await startFake();
  const fallback = (model = 'gpt-4o-mini'): Route => ({
    strategy: { mode: 'fallback' },
    targets: [
      { name: 'a', provider: 'openai', custom_host: a.baseUrl, override_params: { model } },
      { name: 'b', provider: 'openai', custom_host: b.baseUrl, override_params: { model } },
    ],
  });
  const stored: StoredRoute = { id: 'route_abc', name: 'stored', version: 3, route: fallback(), updated_at: new Date(0).toISOString() };
  const source: RouteSource = {
    route: async (idOrName) => (idOrName === stored.id || idOrName === stored.name ? stored : undefined),
    alias: async (model) => (model === 'smart' ? fallback() : undefined),
  };
  const targetCredentials: TargetCredentials = {
    credential: async (id) => (id === 'cred_b' ? { apiKey: STORED_B } : undefined),
    virtualKey: async (key) => (key === 'vk-target-b' ? { caller: { type: 'virtual-key', id: 'vk_1', name: 'target' }, provider: 'openai', credentials: { apiKey: VK_B }, customHost: b.baseUrl } : undefined),
  };
  gateway = await startGateway(
    {
      providers: [openai()],
      policies: { watch: { input: [regex({ pattern: 'secret', mode: 'redact', replacement: 'hidden' })], output: [regex({ pattern: 'forbidden-output' })] } },
      defaultPolicy: 'watch',
      routes: {
        flaky: fallback(),
        lonely: { strategy: { mode: 'single' }, targets: [{ name: 'only', provider: 'openai', custom_host: a.baseUrl }] },
        stored_credential: { strategy: { mode: 'single' }, targets: [{ name: 'cred', provider: 'openai', credential: 'cred_b', custom_host: b.baseUrl }] },
        key_target: { strategy: { mode: 'single' }, targets: [{ name: 'vk', virtual_key: 'vk-target-b' }] },
        missing_key: { strategy: { mode: 'single' }, targets: [{ virtual_key: 'vk-not-there' }] },
        missing_credential: { strategy: { mode: 'single' }, targets: [{ provider: 'openai', credential: 'cred_missing', custom_host: b.baseUrl }] },
      },
    },
    {},
    { routing: { source, targetCredentials, state: new MemoryRoutingState({ failures: 2, failureRatio: 1, minRequests: 1000, windowMs: 60_000, cooldownMs: 10_000 }, () => now) } },
  );
});

test.after.always(async () => {
  await gateway?.close();
  await a?.close();
  await b?.close();
});

test.beforeEach(() => {
  a.handle(fixedUsageHandler(0));
  b.handle(fixedUsageHandler(0));
  a.requests.length = 0;
  b.requests.length = 0;
});

async function chat(headers: Record<string, string>, body: Record<string, unknown> = {}, key = ACCOUNT_KEY) {
  const trace = traceId('route-state');
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-trace-id': trace, ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10, ...body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as any) : undefined, trace };
}

test.serial('a breaker opens after two failures and the target is skipped; with every target open: 503 no_healthy_target with Retry-After; after the cooldown a probe closes it', async (t) => {
  a.handle(fail503);
  for (let index = 0; index < 2; index++) t.is((await chat({ 'x-gateway-config': 'lonely' })).status, 503);
  t.is(a.requests.length, 2);
  const refused = await chat({ 'x-gateway-config': 'lonely' });
  t.is(refused.status, 503);
  t.is(refused.json.error.code, 'no_healthy_target');
  t.is(refused.headers.get('retry-after'), '10');
  t.is(refused.headers.get('x-gateway-attempts'), '0');
  t.is(a.requests.length, 2, 'nothing sent while open');
  const entry = await loggedOnce(gateway, refused.trace);
  t.deepEqual(entry.attempts, []);

  now += 10_000;
  a.handle(fixedUsageHandler(0));
  const probe = await chat({ 'x-gateway-config': 'lonely' });
  t.is(probe.status, 200);
  t.is(a.requests.length, 3);
  t.is((await chat({ 'x-gateway-config': 'lonely' })).status, 200);
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  t.regex(metrics, /gateway_route_breaker_state\{target="route:lonely\/targets\[0\]"\} 0/);
});

test.serial('a fallback route skips a target whose breaker is open: the second answers without the first being tried', async (t) => {
  a.handle(fail503);
  for (let index = 0; index < 2; index++) t.is((await chat({ 'x-gateway-config': 'flaky' })).status, 200);
  t.is(a.requests.length, 2);
  const skipped = await chat({ 'x-gateway-config': 'flaky' });
  t.is(skipped.status, 200);
  t.is(skipped.headers.get('x-gateway-route-target'), 'b');
  t.is(skipped.headers.get('x-gateway-attempts'), '1');
  t.is(a.requests.length, 2);
  now += 10_000;
});

test.serial('a stored route by id or by name, and an alias from the admin source; the log names id, name and version', async (t) => {
  for (const name of ['route_abc', 'stored']) {
    const result = await chat({ 'x-gateway-config': name });
    t.is(result.status, 200);
    const entry = await loggedOnce(gateway, result.trace);
    t.deepEqual(entry.route, { id: 'route_abc', name: 'stored', version: 3, source: 'header' });
  }
  const alias = await chat({}, { model: 'smart' });
  t.is(alias.status, 200);
  t.like((await loggedOnce(gateway, alias.trace)).route, { name: 'smart', source: 'alias' });
});

test.serial('targets naming a stored credential or a virtual key send that credential; an unknown credential is 400 with param', async (t) => {
  t.is((await chat({ 'x-gateway-config': 'stored_credential' })).status, 200);
  t.is(b.requests.at(-1)?.headers.authorization, `Bearer ${STORED_B}`);
  t.is((await chat({ 'x-gateway-config': 'key_target' })).status, 200);
  t.is(b.requests.at(-1)?.headers.authorization, `Bearer ${VK_B}`);
  const missing = await chat({ 'x-gateway-config': 'missing_credential' });
  t.is(missing.status, 400);
  t.like(missing.json.error, { param: 'config.targets[0].credential', code: 'unknown_credential' });
  const missingKey = await chat({ 'x-gateway-config': 'missing_key' });
  t.is(missingKey.status, 400);
  t.like(missingKey.json.error, { param: 'config.targets[0].virtual_key', code: 'unknown_virtual_key' });
  t.is(b.requests.length, 2);
});

test.serial('guardrails under fallback: the input chain runs once and both attempts get its redacted body; the output chain judges the answer given', async (t) => {
  a.handle(fail503);
  now += 20_000; // whatever earlier tests opened has cooled down
  const result = await chat({ 'x-gateway-config': 'flaky' }, { messages: [{ role: 'user', content: 'my secret plan' }] });
  t.is(result.status, 200);
  for (const fake of [a, b]) t.is(fake.requests.at(-1)?.json().messages[0].content, 'my hidden plan');
  const entry = await loggedOnce(gateway, result.trace);
  t.deepEqual(entry.guardrails.map((verdict) => `${verdict.side}:${verdict.action}`), ['input:transform', 'output:allow']);
  t.is(entry.attempts?.length, 2);
});

test.serial('budgets under fallback: the virtual key is charged once, for the answer it got, after two attempts', async (t) => {
  a.handle(fail503);
  now += 20_000;
  const { id, key } = await createKey(t, gateway, { name: 'routed-budget', provider: 'openai', provider_key: 'sk-routed-budget-0123456789', custom_host: b.baseUrl, allowed_routes: ['flaky'], limits: { budget_usd: 1 } });
  const result = await chat({ 'x-gateway-config': 'flaky' }, {}, key);
  t.is(result.status, 200);
  t.is(a.requests.length + b.requests.length, 2);
  const deadline = Date.now() + 3000;
  let usage;
  do {
    usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  } while ((usage.spend_usd.total === 0 || usage.reserved_usd !== 0) && Date.now() < deadline);
  t.is(Math.round(usage.spend_usd.total * 1e9), Math.round(FIXED_COST_USD * 1e9));
});

test.serial('rate limits under fallback: a request of two attempts counts once against requests_per_minute', async (t) => {
  a.handle(fail503);
  now += 20_000;
  const { key } = await createKey(t, gateway, { name: 'routed-rpm', provider: 'openai', provider_key: 'sk-routed-rpm-0123456789', custom_host: b.baseUrl, allowed_routes: ['flaky'], limits: { requests_per_minute: 2 } });
  const first = await chat({ 'x-gateway-config': 'flaky' }, {}, key);
  t.is(first.status, 200);
  t.is(first.headers.get('x-gateway-attempts'), '2');
  now += 20_000;
  const second = await chat({ 'x-gateway-config': 'flaky' }, {}, key);
  t.is(second.status, 200, 'two attempts did not use up the two requests');
  const third = await chat({ 'x-gateway-config': 'flaky' }, {}, key);
  t.is(third.status, 429);
});
