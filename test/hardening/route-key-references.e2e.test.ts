import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, createKey, fixedUsageHandler } from '../vault/vault-harness.js';

// Issue 31, item 4: a virtual key used as a route target is stored and shown as a reference (its
// id and hint), never its value: in POST/GET/PUT /admin/routes, the versions the dashboard shows as
// JSON, model aliases and the configuration's routes. Routes stored before (holding a value) are
// rewritten to the reference as they are read.

const CONFIG_VALUE = 'vk-a-value-written-in-the-config-file-wxyz';
const SECRET = 'sk-target-key-credential-0123456789';

let fake: Fake;
let gateway: TestGateway;
let key: { id: string; key: string; hint: string };

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({
    routes: { 'config-with-key': { strategy: { mode: 'single' }, targets: [{ name: 'cfg', virtual_key: CONFIG_VALUE }] } },
  });
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'target credential', provider: 'openai', api_key: SECRET });
  const created = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'target-key', provider: 'openai', credential_id: credential.json.id, custom_host: fake.baseUrl });
  key = { id: created.json.id, key: created.json.key, hint: created.json.key_hint };
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

/** A chat request with the account key naming a route. */
async function chatThrough(route: string) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json', 'x-gateway-config': route },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, json: (await response.json()) as any };
}

/** Every raw record of a stored route (current and each version) in the state store, as text. */
async function rawRoute(id: string): Promise<string> {
  const records = gateway.gateway.vault.parts.state.records;
  const current = (await records.get<{ version: number }>(`route:${id}`)) ?? { version: 0 };
  const versions = await Promise.all(Array.from({ length: current.version }, (_, index) => records.get(`routever:${id}:${index + 1}`)));
  return JSON.stringify([current, versions]);
}

test.serial('a key given by value is stored and shown by id and hint: POST, GET, list, versions, PUT of what GET showed', async (t) => {
  const created = await admin(gateway, 'POST', '/admin/routes', {
    name: 'through-key',
    route: { targets: [{ name: 'k', virtual_key: key.key }], cache: { mode: 'semantic', embedding: { virtual_key: key.key, model: 'text-embedding-3-small' } } },
  });
  t.is(created.status, 201, created.text);
  t.false(created.text.includes(key.key), 'the answer does not carry the value');
  t.deepEqual(created.json.route.targets[0], { name: 'k', virtual_key: key.id, virtual_key_hint: key.hint });
  t.like(created.json.route.cache.embedding, { virtual_key: key.id, virtual_key_hint: key.hint, model: 'text-embedding-3-small' });
  const id = created.json.id as string;
  t.false((await rawRoute(id)).includes(key.key), 'nor does the store');
  t.false((await rawRoute(id)).includes('virtual_key_hint'), 'the hint is shown, not stored');

  for (const path of ['/admin/routes', `/admin/routes/${id}`, `/admin/routes/${id}/versions`]) {
    const read = await admin(gateway, 'GET', path);
    t.is(read.status, 200);
    t.false(read.text.includes(key.key), path);
    t.true(read.text.includes(key.hint), path);
  }
  // The dashboard's route form and JSON editor send back what GET showed, the hint included.
  const shown = (await admin(gateway, 'GET', `/admin/routes/${id}`)).json;
  const replaced = await admin(gateway, 'PUT', `/admin/routes/${id}`, { route: shown.route });
  t.is(replaced.status, 200, replaced.text);
  t.is(replaced.json.version, 2);
  t.deepEqual(replaced.json.route.targets[0], { name: 'k', virtual_key: key.id, virtual_key_hint: key.hint });
  const versions = await admin(gateway, 'GET', `/admin/routes/${id}/versions`);
  t.deepEqual(versions.json.data.map((version: any) => version.route.targets[0].virtual_key), [key.id, key.id]);
  await admin(gateway, 'DELETE', `/admin/routes/${id}`);
});

test.serial('a route naming a key by id routes with that key; rotating the key keeps the route working and shows the new hint', async (t) => {
  const created = await admin(gateway, 'POST', '/admin/routes', { name: 'by-id', route: { targets: [{ name: 'k', virtual_key: key.id }] } });
  t.is(created.status, 201, created.text);
  t.is((await chatThrough('by-id')).status, 200);
  t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${SECRET}`);
  const rotated = await admin(gateway, 'POST', `/admin/virtual-keys/${key.id}/rotate`);
  key = { id: key.id, key: rotated.json.key, hint: rotated.json.key_hint };
  const answer = await chatThrough('by-id');
  t.is(answer.status, 200, 'a value would have stopped working with the rotation; the id does not');
  t.is((await admin(gateway, 'GET', `/admin/routes/${created.json.id}`)).json.route.targets[0].virtual_key_hint, key.hint);

  const refusals: Array<[unknown, string]> = [
    ['vk_00000000000000000000000000000000', 'route.targets[0].virtual_key'],
    ['vk-not-a-current-key', 'route.targets[0].virtual_key'],
    ['some-other-text', 'route.targets[0].virtual_key'],
  ];
  for (const [reference, param] of refusals) {
    const refused = await admin(gateway, 'POST', '/admin/routes', { route: { targets: [{ virtual_key: reference }] } });
    t.is(refused.status, 400, String(reference));
    t.like(refused.json.error, { param, code: 'invalid_route' });
  }
  const badEmbedding = await admin(gateway, 'POST', '/admin/routes', { route: { targets: [{ provider: 'openai' }], cache: { mode: 'semantic', embedding: { virtual_key: 'vk_nope', model: 'e' } } } });
  t.is(badEmbedding.json.error.param, 'route.cache.embedding.virtual_key');
  const badHint = await admin(gateway, 'POST', '/admin/routes', { route: { targets: [{ virtual_key: key.id, virtual_key_hint: 42 }] } });
  t.is(badHint.json.error.param, 'route.targets[0].virtual_key_hint');
  // Deleting a key a route names by id is refused.
  const inUse = await admin(gateway, 'DELETE', `/admin/virtual-keys/${key.id}`);
  t.is(inUse.status, 409);
  t.is(inUse.json.error.code, 'virtual_key_in_use');
  await admin(gateway, 'DELETE', `/admin/routes/${created.json.id}`);
});

test.serial('routes and aliases stored with a value before: shown by id, rewritten in place as they are read, still routed', async (t) => {
  const legacyKey = await createKey(t, gateway, { name: 'legacy-target', provider: 'openai', provider_key: 'sk-legacy-target-0123456789', custom_host: fake.baseUrl });
  const { state } = gateway.gateway.vault.parts;
  const legacy = (id: string, value: string, version: number) => ({ id, name: id.replace('route_', 'legacy-'), version, route: { strategy: { mode: 'single' }, targets: [{ name: 'old', virtual_key: value }] }, updated_at: new Date().toISOString() });
  // As the store wrote them: each version under its own key, the current one also as the route's record.
  const id = 'route_0123456789abcdef0123456789abcdef';
  const second = legacy(id, legacyKey.key, 2);
  await state.records.set(`routever:${id}:1`, legacy(id, legacyKey.key, 1));
  await state.records.set(`routever:${id}:2`, second);
  await state.records.set(`route:${id}`, second);
  await state.addToSet('routes', id);
  const dead = 'route_fedcba9876543210fedcba9876543210';
  const only = legacy(dead, 'vk-a-value-no-key-has-any-more-0000', 1);
  await state.records.set(`routever:${dead}:1`, only);
  await state.records.set(`route:${dead}`, only);
  await state.addToSet('routes', dead);
  await state.records.set('alias:legacy-alias', { alias: 'legacy-alias', route: legacy(id, legacyKey.key, 1).route, updated_at: new Date().toISOString() });
  await state.addToSet('model-aliases', 'legacy-alias');

  const listed = await admin(gateway, 'GET', '/admin/routes');
  t.false(listed.text.includes(legacyKey.key));
  t.false(listed.text.includes('vk-a-value-no-key-has-any-more'));
  const current = (await admin(gateway, 'GET', `/admin/routes/${id}`)).json;
  t.deepEqual(current.route.targets[0], { name: 'old', virtual_key: legacyKey.id, virtual_key_hint: `vk-…${legacyKey.key.slice(-4)}` });
  const versions = await admin(gateway, 'GET', `/admin/routes/${id}/versions`);
  t.false(versions.text.includes(legacyKey.key));
  t.false((await rawRoute(id)).includes(legacyKey.key), 'every version was rewritten in the store');
  t.true((await rawRoute(id)).includes(legacyKey.id));
  t.is((await admin(gateway, 'GET', `/admin/routes/${dead}`)).json.route.targets[0].virtual_key, 'vk_unknown');
  t.false((await rawRoute(dead)).includes('vk-a-value-no-key-has-any-more'));

  const aliases = await admin(gateway, 'GET', '/admin/models');
  t.false(aliases.text.includes(legacyKey.key));
  t.is(aliases.json.data.find((alias: any) => alias.alias === 'legacy-alias').route.targets[0].virtual_key, legacyKey.id);
  t.false(JSON.stringify(await state.records.get('alias:legacy-alias')).includes(legacyKey.key));

  t.is((await chatThrough(id)).status, 200, 'the rewritten route still routes');
  t.is(fake.requests.at(-1)?.headers.authorization, 'Bearer sk-legacy-target-0123456789');
  const gone = await chatThrough(dead);
  t.is(gone.status, 400);
  t.is(gone.json.error.code, 'unknown_virtual_key', 'a value no key had was refused before and still is');
  t.is((await admin(gateway, 'DELETE', `/admin/virtual-keys/${legacyKey.id}`)).status, 409, 'the key a rewritten route names is in use');
});

test.serial("the configuration's routes are shown without the value they were written with", async (t) => {
  const configured = await admin(gateway, 'GET', '/admin/config-routes');
  t.is(configured.status, 200);
  t.false(configured.text.includes(CONFIG_VALUE));
  const entry = configured.json.data.find((route: any) => route.name === 'config-with-key');
  t.deepEqual(entry.route.targets[0], { name: 'cfg', virtual_key: 'vk_unknown', virtual_key_hint: 'vk-…wxyz' });
});
