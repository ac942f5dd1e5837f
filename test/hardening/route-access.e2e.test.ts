import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, createKey, fixedUsageHandler } from '../vault/vault-harness.js';

// Issue 31, item 1: a virtual key takes only its own route, the routes an admin granted it
// (`allowed_routes`) and model aliases. Two teams each have a stored route with their own
// credential and a shared cache namespace; team A's key naming team B's route by name or id must
// not reach team B's provider with team B's credential.

let fakeA: Fake;
let fakeB: Fake;
let gateway: TestGateway;
const SECRET_A = 'sk-team-a-credential-0123456789';
const SECRET_B = 'sk-team-b-credential-0123456789';
let routeA: { id: string; name: string };
let routeB: { id: string; name: string };
let keyA: { id: string; key: string };

test.before(async () => {
  fakeA = await startFake(fixedUsageHandler(0));
  fakeB = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({
    routes: { 'config-open': { strategy: { mode: 'single' }, targets: [{ provider: 'openai', custom_host: 'http://127.0.0.1:9/v1' }] } },
  });
  const teamRoute = async (team: string, secret: string, fake: Fake) => {
    const credential = await admin(gateway, 'POST', '/admin/credentials', { name: `team ${team}`, provider: 'openai', api_key: secret });
    const stored = await admin(gateway, 'POST', '/admin/routes', {
      name: `team-${team}`,
      route: { targets: [{ name: team, provider: 'openai', credential: credential.json.id, custom_host: fake.baseUrl, override_params: { model: `model-of-${team}` } }], cache: { mode: 'simple', namespace: `team-${team}-shared` } },
    });
    if (stored.status !== 201) throw new Error(stored.text);
    return { id: stored.json.id as string, name: stored.json.name as string };
  };
  routeA = await teamRoute('a', SECRET_A, fakeA);
  routeB = await teamRoute('b', SECRET_B, fakeB);
});

test.after.always(async () => {
  await gateway?.close();
  await fakeA?.close();
  await fakeB?.close();
});

test.beforeEach(() => {
  fakeA.requests.length = 0;
  fakeB.requests.length = 0;
});

test.serial("a key naming another team's route, by name or id, a config route or a name nothing holds: 403 route_not_allowed, nothing sent", async (t) => {
  keyA = await createKey(t, gateway, { name: 'team-a-key', route: routeA.name, limits: { allowed_models: ['gpt-4o-mini'] } });
  for (const header of [routeB.name, routeB.id, ` ${routeB.name} `, 'config-open', 'no-such-route', 'route_00000000000000000000000000000000']) {
    const refused = await chatWithKey(gateway, keyA.key, {}, { 'x-gateway-config': header });
    t.is(refused.status, 403, header);
    t.like(refused.json.error, { type: 'permission_error', code: 'route_not_allowed', param: 'x-gateway-config' }, header);
    t.false(JSON.stringify(refused.json).includes(SECRET_B));
  }
  t.is(fakeB.requests.length, 0, "team B's provider got nothing");
  // The key in Authorization (a tool that sets only an API key) is refused the same way.
  const viaBearer = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keyA.key}`, 'content-type': 'application/json', 'x-gateway-config': routeB.name },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(viaBearer.status, 403);
  t.is(fakeB.requests.length, 0);
});

test.serial('a key naming its own route (by name or id) or none takes it', async (t) => {
  const headerSets: Array<Record<string, string>> = [{ 'x-gateway-config': routeA.name }, { 'x-gateway-config': routeA.id }, {}];
  for (const headers of headerSets) {
    // no-store: each request reaches the provider (the route caches).
    const answer = await chatWithKey(gateway, keyA.key, {}, { ...headers, 'x-gateway-cache': 'no-store' });
    t.is(answer.status, 200, JSON.stringify(answer.json));
  }
  t.is(fakeA.requests.length, 3);
  t.true(fakeA.requests.every((request) => request.headers.authorization === `Bearer ${SECRET_A}`));
  t.is(fakeB.requests.length, 0);
});

test.serial('allowed_routes grants other routes: set by name and stored by id, checked on create and update, renaming keeps the grant', async (t) => {
  const unknown = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'granted-bad', route: routeA.name, allowed_routes: [routeB.name, 'no-such-route'] });
  // A route that does not exist (or belongs to a team the caller cannot see) is 404 naming the entry (issue 33).
  t.is(unknown.status, 404);
  t.like(unknown.json.error, { param: 'allowed_routes[1]', code: 'route_not_found' });
  for (const [value, param] of [['team-b', 'allowed_routes'], [[''], 'allowed_routes[0]'], [[42], 'allowed_routes[0]'], [Array.from({ length: 101 }, () => 'team-b'), 'allowed_routes']] as const) {
    const refused = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'granted-bad', route: routeA.name, allowed_routes: value });
    t.is(refused.status, 400, JSON.stringify(value));
    t.is(refused.json.error.param, param);
  }

  const granted = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'granted', route: routeA.name, allowed_routes: [routeB.name, routeB.id, 'config-open'] });
  t.is(granted.status, 201, granted.text);
  t.deepEqual(granted.json.allowed_routes, [routeB.id, 'config-open'], 'a stored route by id (once), a config route by name');
  const viaB = await chatWithKey(gateway, granted.json.key, {}, { 'x-gateway-config': routeB.name });
  t.is(viaB.status, 200, JSON.stringify(viaB.json));
  t.is(fakeB.requests.at(-1)?.headers.authorization, `Bearer ${SECRET_B}`);

  // The grant is by id: renamed, the route stays granted under its new name; its old name is nothing.
  t.is((await admin(gateway, 'PUT', `/admin/routes/${routeB.id}`, { name: 'team-b-renamed', route: (await admin(gateway, 'GET', `/admin/routes/${routeB.id}`)).json.route })).status, 200);
  t.is((await chatWithKey(gateway, granted.json.key, {}, { 'x-gateway-config': 'team-b-renamed' })).status, 200);
  t.is((await chatWithKey(gateway, granted.json.key, {}, { 'x-gateway-config': routeB.name })).status, 403);
  await admin(gateway, 'PUT', `/admin/routes/${routeB.id}`, { name: routeB.name, route: (await admin(gateway, 'GET', `/admin/routes/${routeB.id}`)).json.route });

  // A route granted to a key is not deleted under it.
  const inUse = await admin(gateway, 'DELETE', `/admin/routes/${routeB.id}`);
  t.is(inUse.status, 409);
  t.like(inUse.json.error, { code: 'route_in_use' });
  t.regex(inUse.json.error.message, /granted/);

  // PATCH: an unknown route is refused with its index; null removes every grant.
  const badPatch = await admin(gateway, 'PATCH', `/admin/virtual-keys/${granted.json.id}`, { allowed_routes: ['config-open', 'nope'] });
  t.is(badPatch.status, 404);
  t.is(badPatch.json.error.param, 'allowed_routes[1]');
  const cleared = await admin(gateway, 'PATCH', `/admin/virtual-keys/${granted.json.id}`, { allowed_routes: null });
  t.is(cleared.status, 200);
  t.is(cleared.json.allowed_routes, undefined);
  const refused = await chatWithKey(gateway, granted.json.key, {}, { 'x-gateway-config': routeB.name });
  t.is(refused.status, 403, 'the change applies to the next request');
  t.is(refused.json.error.code, 'route_not_allowed');
});

test.serial('a key bound to a provider may be granted routes too; the account key still takes any route', async (t) => {
  const bound = await createKey(t, gateway, { name: 'bound-granted', provider: 'openai', provider_key: 'sk-bound-0123456789', custom_host: fakeA.baseUrl, allowed_routes: [routeB.id] });
  t.is((await chatWithKey(gateway, bound.key, {}, { 'x-gateway-config': routeB.name })).status, 200);
  t.is((await chatWithKey(gateway, bound.key, {}, { 'x-gateway-config': routeA.name })).status, 403);
  t.is((await chatWithKey(gateway, bound.key)).status, 200, 'without the header: its own provider');
  const account = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': (await import('../harness.js')).ACCOUNT_KEY, 'content-type': 'application/json', 'x-gateway-config': routeB.name },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(account.status, 200);
});

test.serial('the admin API describes allowed_routes and the CLI has --routes', async (t) => {
  const document = (await (await fetch(`${gateway.url}/admin/openapi.json`)).json()) as any;
  const schemas = document.components.schemas;
  t.deepEqual(schemas.VirtualKeyInput.properties.allowed_routes, { $ref: '#/components/schemas/AllowedRoutes' });
  t.truthy(schemas.VirtualKeyPatch.properties.allowed_routes);
  t.truthy(schemas.VirtualKey.properties.allowed_routes);
  t.regex(schemas.AllowedRoutes.description, /route_not_allowed/);
  const { COMMAND_HELP } = await import('../../core/cli/help.js');
  t.regex(COMMAND_HELP.keys, /keys create[^]*--routes a,b[^]*keys update[^]*--routes a,b/);
});
