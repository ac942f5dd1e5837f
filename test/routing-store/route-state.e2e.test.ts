import test from 'ava';
import OpenAI from 'openai';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, gatewayClient, startGateway, type TestGateway } from '../harness.js';
import { admin, fixedUsageHandler } from '../vault/vault-harness.js';

// A stored fallback route whose first target is a fake answering 500 to everything: after two
// failures (the configured threshold) its breaker opens, and GET /admin/routes/:id/state says so,
// with the failure counts and the time a probe will be let through. The configuration's own routes
// are listed read-only at GET /admin/config-routes, with their breakers.

const COOLDOWN_MS = 60_000;
let failing: Fake;
let healthy: Fake;
let gateway: TestGateway;
let routeId: string;
let key: string;

test.before(async () => {
  failing = await startFake((_request, response) => {
    response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
  });
  healthy = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({
    routing: { breaker: { failures: 2, cooldownMs: COOLDOWN_MS, minRequests: 1000 } },
    routes: {
      'cfg-flaky': {
        strategy: { mode: 'fallback' },
        targets: [
          { name: 'down', provider: 'openai', custom_host: failing.baseUrl },
          { name: 'up', provider: 'openai', custom_host: healthy.baseUrl },
        ],
      },
    },
  });
  const credential = (await admin(gateway, 'POST', '/admin/credentials', { name: 'state-cred', provider: 'openai', api_key: 'sk-state-secret-0123456789' })).json.id as string;
  const created = await admin(gateway, 'POST', '/admin/routes', {
    name: 'flaky',
    route: {
      strategy: { mode: 'fallback' },
      targets: [
        { name: 'broken', provider: 'openai', credential, custom_host: failing.baseUrl },
        { name: 'spare', provider: 'openai', credential, custom_host: healthy.baseUrl, weight: 2 },
      ],
    },
  });
  if (created.status !== 201) throw new Error(created.text);
  routeId = created.json.id;
  const made = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'flaky-key', route: 'flaky' });
  if (made.status !== 201) throw new Error(made.text);
  key = made.json.key;
  const alias = await admin(gateway, 'PUT', '/admin/models/flaky-alias', { route_id: 'flaky' });
  if (alias.status !== 200) throw new Error(alias.text);
});

test.after.always(async () => {
  await gateway?.close();
  await failing?.close();
  await healthy?.close();
});

const chat = async (client: OpenAI, model = 'gpt-4o-mini') => {
  const { response } = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  return Number(response.headers.get('x-gateway-attempts'));
};

test.serial('before any request every target is closed and untried', async (t) => {
  const state = await admin(gateway, 'GET', `/admin/routes/${routeId}/state`);
  t.is(state.status, 200, state.text);
  t.like(state.json, { object: 'route_state', id: routeId, name: 'flaky', version: 1 });
  t.deepEqual(
    state.json.targets.map((target: Record<string, unknown>) => [target.path, target.name, target.kind, target.provider, target.tried, target.state]),
    [
      ['targets[0]', 'broken', 'provider', 'openai', false, 'closed'],
      ['targets[1]', 'spare', 'provider', 'openai', false, 'closed'],
    ],
  );
  t.deepEqual(state.json.aliases.map((alias: { alias: string }) => alias.alias), ['flaky-alias']);
});

test.serial('a target answering 500 twice opens its breaker: the state shows it open, its failures and when it will be probed', async (t) => {
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0, timeout: 10_000 });
  t.is(await chat(client), 2, 'the first request fails over');
  t.is(await chat(client), 2, 'so does the second, which opens the breaker');
  t.is(await chat(client), 1, 'the third skips the open target');
  t.is(failing.requests.length, 2);

  const state = await admin(gateway, 'GET', `/admin/routes/${routeId}/state`);
  const [broken, spare] = state.json.targets;
  t.like(broken, { name: 'broken', tried: true, state: 'open', consecutive_failures: 2, window_requests: 2, window_failures: 2, in_flight: 0 });
  t.truthy(Date.parse(broken.opened_at));
  t.is(Date.parse(broken.retry_at) - Date.parse(broken.opened_at), COOLDOWN_MS, 'the probe is let through one cooldown after opening');
  t.like(spare, { name: 'spare', tried: true, state: 'closed', consecutive_failures: 0, window_requests: 3, window_failures: 0, opened_at: null, retry_at: null });
  t.is(typeof spare.latency_ms, 'number');

  // A model alias naming the route keeps breakers of its own: one request through it counts there only.
  const account = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY } });
  t.is(await chat(account, 'flaky-alias'), 2);
  const after = await admin(gateway, 'GET', `/admin/routes/${routeId}/state`);
  t.like(after.json.aliases[0].targets[0], { tried: true, state: 'closed', consecutive_failures: 1 });
  t.like(after.json.targets[0], { state: 'open', consecutive_failures: 2 });
});

test.serial('an unknown route id is 404; the state needs the account key', async (t) => {
  const missing = await admin(gateway, 'GET', '/admin/routes/route_00000000000000000000000000000000/state');
  t.is(missing.status, 404);
  t.is(missing.json.error.code, 'route_not_found');
  t.is((await admin(gateway, 'GET', `/admin/routes/${routeId}/state`, undefined, key)).status, 403);
});

test.serial('the configuration’s routes are listed read-only with their breakers', async (t) => {
  const before = await admin(gateway, 'GET', '/admin/config-routes');
  t.is(before.status, 200, before.text);
  t.deepEqual(before.json.data.map((route: { kind: string; name: string }) => [route.kind, route.name]), [['route', 'cfg-flaky']]);
  t.is(before.json.data[0].route.targets[0].custom_host, failing.baseUrl);
  const client = gatewayClient(gateway.url, { 'x-gateway-config': 'cfg-flaky' });
  t.is(await chat(client), 2);
  const after = await admin(gateway, 'GET', '/admin/config-routes');
  t.deepEqual(
    after.json.data[0].targets.map((target: Record<string, unknown>) => [target.name, target.tried, target.state, target.consecutive_failures]),
    [
      ['down', true, 'closed', 1],
      ['up', true, 'closed', 0],
    ],
  );
  const document = (await (await fetch(`${gateway.url}/admin/openapi.json`)).json()) as any;
  for (const path of ['/admin/routes/{id}/state', '/admin/config-routes', '/admin/policies', '/admin/policies/verdicts']) t.truthy(document.paths[path]?.get, path);
  t.truthy(document.components.schemas.TargetState.properties.retry_at);
});
