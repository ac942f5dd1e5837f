import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, fixedUsageHandler } from '../vault/vault-harness.js';

let fake: Fake;
let gateway: TestGateway;
let credentialId: string;
let providerKey: string;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway();
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'openai-main', provider: 'openai', api_key: 'sk-route-store-secret-0123456789' });
  credentialId = credential.json.id;
  providerKey = (await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'backup-key', provider: 'openai', credential_id: credentialId, custom_host: fake.baseUrl })).json.key;
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const twoTargets = () => ({
  strategy: { mode: 'fallback' },
  targets: [
    { name: 'primary', provider: 'openai', credential: credentialId, override_params: { model: 'gpt-4o-mini' } },
    { name: 'backup', virtual_key: providerKey },
  ],
});

test.serial('a stored route: created as version 1, replaced as version 2, every version kept oldest first, deleted', async (t) => {
  const created = await admin(gateway, 'POST', '/admin/routes', { name: 'crud-route', route: twoTargets() });
  t.is(created.status, 201, created.text);
  t.regex(created.json.id, /^route_[0-9a-f]{32}$/);
  t.is(created.json.name, 'crud-route');
  t.is(created.json.version, 1);
  t.is(created.json.route.targets[0].credential, credentialId);
  t.truthy(Date.parse(created.json.updated_at));
  const id = created.json.id as string;

  const replacement = { targets: [{ name: 'only', provider: 'openai', credential: credentialId }] };
  const replaced = await admin(gateway, 'PUT', `/admin/routes/${id}`, { route: replacement });
  t.is(replaced.status, 200, replaced.text);
  t.is(replaced.json.version, 2);
  t.is(replaced.json.name, 'crud-route', 'the name stays when the body gives none');
  t.deepEqual(replaced.json.route.strategy, { mode: 'single' });

  const current = await admin(gateway, 'GET', `/admin/routes/${id}`);
  t.is(current.json.version, 2);
  const versions = await admin(gateway, 'GET', `/admin/routes/${id}/versions`);
  t.deepEqual(versions.json.data.map((version: { version: number }) => version.version), [1, 2]);
  t.is(versions.json.data[0].route.targets.length, 2, 'version 1 kept as it was');
  const listed = await admin(gateway, 'GET', '/admin/routes');
  t.deepEqual(listed.json.data.filter((route: { id: string }) => route.id === id).map((route: { version: number }) => route.version), [2]);

  t.is((await gateway.gateway.routes.route('crud-route'))?.version, 2, 'the RouteSource finds it by name');
  t.is((await gateway.gateway.routes.route(id))?.id, id, 'and by id');

  t.is((await admin(gateway, 'DELETE', `/admin/routes/${id}`)).status, 204);
  t.is((await admin(gateway, 'GET', `/admin/routes/${id}`)).status, 404);
  t.is((await admin(gateway, 'GET', `/admin/routes/${id}/versions`)).status, 404, 'versions are deleted with the route');
  t.is((await admin(gateway, 'PUT', `/admin/routes/${id}`, { route: replacement })).status, 404);
  t.is(await gateway.gateway.routes.route('crud-route'), undefined, 'the cached read was invalidated');
  const again = await admin(gateway, 'POST', '/admin/routes', { name: 'crud-route', route: replacement });
  t.is(again.status, 201, 'the name is free again');
});

test.serial('a duplicate name is refused with 409, on create and on rename', async (t) => {
  const route = { targets: [{ provider: 'openai' }] };
  t.is((await admin(gateway, 'POST', '/admin/routes', { name: 'dup-route', route })).status, 201);
  const duplicate = await admin(gateway, 'POST', '/admin/routes', { name: 'dup-route', route });
  t.is(duplicate.status, 409);
  t.is(duplicate.json.error.code, 'duplicate_name');
  t.is(duplicate.json.error.param, 'name');
  const other = await admin(gateway, 'POST', '/admin/routes', { name: 'other-route', route });
  const renamed = await admin(gateway, 'PUT', `/admin/routes/${other.json.id}`, { name: 'dup-route', route });
  t.is(renamed.status, 409);
  t.is((await admin(gateway, 'GET', `/admin/routes/${other.json.id}`)).json.version, 1, 'a refused change makes no version');
});

test.serial('an invalid route is refused with 400 and the param naming the field', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ targets: [{ provider: 'openai' }, { provider: 'openai', weight: -1 }], strategy: { mode: 'loadbalance' } }, 'route.targets[1].weight'],
    [{ targets: [] }, 'route.targets'],
    [{ targets: [{ provider: 'openai' }], retry: { attempts: 99 } }, 'route.retry.attempts'],
    [{ targets: [{ provider: 'nope' }] }, 'route.targets[0].provider'],
    [{ targets: [{ virtual_key: 'vk-not-a-key' }] }, 'route.targets[0].virtual_key'],
    [{ targets: [{ route: { targets: [{ provider: 'nope' }] } }] }, 'route.targets[0].route.targets[0].provider'],
    [undefined, 'route'],
  ];
  for (const [route, param] of cases) {
    const refused = await admin(gateway, 'POST', '/admin/routes', { name: 'invalid', route });
    t.is(refused.status, 400, `${param}: ${refused.text}`);
    t.is(refused.json.error.param, param);
  }
  // A credential that does not exist (or of a team the caller cannot see) is 404 naming the target (issue 33).
  const missing = await admin(gateway, 'POST', '/admin/routes', { name: 'invalid', route: { targets: [{ provider: 'openai', credential: 'cred_missing' }] } });
  t.is(missing.status, 404, missing.text);
  t.like(missing.json.error, { param: 'route.targets[0].credential', code: 'credential_not_found' });
  const unknownField = await admin(gateway, 'POST', '/admin/routes', { route: { targets: [{ provider: 'openai' }] }, extra: 1 });
  t.is(unknownField.json.error.param, 'extra');
  const idShaped = await admin(gateway, 'POST', '/admin/routes', { name: 'route_x', route: { targets: [{ provider: 'openai' }] } });
  t.is(idShaped.json.error.param, 'name');
  const created = await admin(gateway, 'POST', '/admin/routes', { route: { targets: [{ provider: 'openai' }] } });
  const badPut = await admin(gateway, 'PUT', `/admin/routes/${created.json.id}`, { route: { targets: [{ provider: 'openai', weight: 'x' }] } });
  t.is(badPut.status, 400);
  t.is(badPut.json.error.param, 'route.targets[0].weight');
});

test.serial('only the account key manages routes and aliases: a virtual key gets 403, no key 401', async (t) => {
  for (const [method, path] of [['GET', '/admin/routes'], ['POST', '/admin/routes'], ['GET', '/admin/models'], ['PUT', '/admin/models/fast']] as const) {
    const body = method === 'GET' ? undefined : { route: { targets: [{ provider: 'openai' }] } };
    t.is((await admin(gateway, method, path, body, providerKey)).status, 403, `${method} ${path}`);
    t.is((await admin(gateway, method, path, body, 'wrong-key')).status, 401, `${method} ${path}`);
  }
});

test.serial('model aliases: set to an inline route or a stored one, read by RouteSource.alias, listed, deleted', async (t) => {
  const stored = await admin(gateway, 'POST', '/admin/routes', { name: 'alias-target', route: twoTargets() });
  const inline = await admin(gateway, 'PUT', '/admin/models/fast', { route: { targets: [{ provider: 'openai', credential: credentialId }] } });
  t.is(inline.status, 200, inline.text);
  t.is(inline.json.alias, 'fast');
  const byName = await admin(gateway, 'PUT', '/admin/models/smart', { route_id: 'alias-target' });
  t.is(byName.json.route_id, stored.json.id, 'a stored route named by name is kept by id');
  t.is((await gateway.gateway.routes.alias('fast'))?.targets[0].provider, 'openai');
  t.is((await gateway.gateway.routes.alias('smart'))?.targets.length, 2);
  t.is(await gateway.gateway.routes.alias('unknown-alias'), undefined);
  // The auth stage's synchronous check: what alias() cached (the absence included); null when nothing is.
  t.is(gateway.gateway.routes.cachedAlias?.('unknown-alias'), undefined);
  t.is(gateway.gateway.routes.cachedAlias?.('never-asked'), null);
  t.is(gateway.gateway.routes.cachedAlias?.('fast')?.targets[0].provider, 'openai');

  // A change of the stored route is seen through the alias at once (the caches are invalidated).
  await admin(gateway, 'PUT', `/admin/routes/${stored.json.id}`, { route: { targets: [{ provider: 'openai' }] } });
  t.is((await gateway.gateway.routes.alias('smart'))?.targets.length, 1);
  const inUse = await admin(gateway, 'DELETE', `/admin/routes/${stored.json.id}`);
  t.is(inUse.status, 409);
  t.is(inUse.json.error.code, 'route_in_use');

  const listed = await admin(gateway, 'GET', '/admin/models');
  t.deepEqual(listed.json.data.map((alias: { alias: string }) => alias.alias).sort(), ['fast', 'smart']);
  t.is((await admin(gateway, 'PUT', '/admin/models/bad', { route: { targets: [{ provider: 'openai', weight: -2 }] } })).json.error.param, 'route.targets[0].weight');
  t.is((await admin(gateway, 'PUT', '/admin/models/bad', { route_id: 'no-such-route' })).json.error.param, 'route_id');
  t.is((await admin(gateway, 'PUT', '/admin/models/bad', {})).json.error.param, 'route');
  t.is((await admin(gateway, 'DELETE', '/admin/models/fast')).status, 204);
  t.is((await admin(gateway, 'DELETE', '/admin/models/fast')).status, 404);
  t.is(gateway.gateway.routes.cachedAlias?.('fast'), null, 'a change drops the cached alias');
  t.is(await gateway.gateway.routes.alias('fast'), undefined);
});

test.serial('a virtual key naming a route: created by name, stored by id, resolved with its route; exactly one of provider or route', async (t) => {
  const stored = await admin(gateway, 'POST', '/admin/routes', { name: 'key-route', route: twoTargets() });
  const created = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'routed-key', route: 'key-route', limits: { allowed_models: ['gpt-4o-mini'] } });
  t.is(created.status, 201, created.text);
  t.is(created.json.route, stored.json.id);
  t.is(created.json.provider, undefined);
  const resolution = await gateway.gateway.vault.targets.virtualKey(created.json.key);
  t.is(resolution?.route, stored.json.id);
  t.deepEqual(resolution?.caller, { type: 'virtual-key', id: created.json.id, name: 'routed-key' });
  t.is(resolution?.credentials, undefined);

  const both = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'both', route: 'key-route', provider: 'openai', credential_id: credentialId });
  t.is(both.status, 400);
  t.is(both.json.error.param, 'provider');
  const neither = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'neither' });
  t.is(neither.json.error.param, 'provider');
  const unknown = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'unknown-route', route: 'no-such-route' });
  t.is(unknown.status, 404);
  t.is(unknown.json.error.param, 'route');
  const rebind = await admin(gateway, 'PATCH', `/admin/virtual-keys/${created.json.id}`, { provider: 'openai' });
  t.is(rebind.json.error.param, 'provider');

  const asTarget = await admin(gateway, 'POST', '/admin/routes', { route: { targets: [{ virtual_key: created.json.key }] } });
  t.is(asTarget.status, 400, 'a key naming a route is no target (it could name the route itself)');
  t.is(asTarget.json.error.param, 'route.targets[0].virtual_key');

  const inUse = await admin(gateway, 'DELETE', `/admin/routes/${stored.json.id}`);
  t.is(inUse.status, 409, 'a route a key names is not deleted under it');
  t.is((await admin(gateway, 'DELETE', `/admin/virtual-keys/${created.json.id}`)).status, 204);
  t.is((await admin(gateway, 'DELETE', `/admin/routes/${stored.json.id}`)).status, 204);
});

test.serial('TargetCredentials: a stored credential opened by id, a virtual key by value', async (t) => {
  const { targets } = gateway.gateway.vault;
  t.deepEqual(await targets.credential(credentialId), { apiKey: 'sk-route-store-secret-0123456789' });
  t.is(await targets.credential('cred_missing'), undefined);
  const bound = await targets.virtualKey(providerKey);
  t.is(bound?.provider, 'openai');
  t.is(bound?.customHost, fake.baseUrl);
  t.deepEqual(bound?.credentials, { apiKey: 'sk-route-store-secret-0123456789' });
  t.is(await targets.virtualKey('vk-unknown'), undefined);
});

test.serial('the OpenAPI description lists the route and model alias endpoints', async (t) => {
  const document = (await (await fetch(`${gateway.url}/admin/openapi.json`)).json()) as any;
  for (const path of ['/admin/routes', '/admin/routes/{id}', '/admin/routes/{id}/versions', '/admin/models', '/admin/models/{alias}']) t.truthy(document.paths[path], path);
  t.deepEqual(Object.keys(document.paths['/admin/routes/{id}']).sort(), ['delete', 'get', 'put']);
  t.truthy(document.components.schemas.VirtualKeyInput.properties.route);
});

test.serial('a credential or a virtual key a stored route or an alias names is not deleted under it (409)', async (t) => {
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'named-by-route', provider: 'openai', api_key: 'sk-named-by-route-0123456789' });
  const key = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'target-key', provider: 'openai', credential_id: credentialId, custom_host: fake.baseUrl });
  const stored = await admin(gateway, 'POST', '/admin/routes', {
    name: 'uses-both',
    route: { targets: [{ route: { targets: [{ provider: 'openai', credential: credential.json.id }] } }, { virtual_key: key.json.key }] },
  });
  t.is(stored.status, 201, stored.text);
  const credentialRefused = await admin(gateway, 'DELETE', `/admin/credentials/${credential.json.id}`);
  t.is(credentialRefused.status, 409);
  t.is(credentialRefused.json.error.code, 'credential_in_use');
  t.regex(credentialRefused.json.error.message, /route uses-both/);
  const keyRefused = await admin(gateway, 'DELETE', `/admin/virtual-keys/${key.json.id}`);
  t.is(keyRefused.status, 409);
  t.is(keyRefused.json.error.code, 'virtual_key_in_use');
  t.false(keyRefused.text.includes(key.json.key), 'the key value is not echoed');

  t.is((await admin(gateway, 'DELETE', `/admin/routes/${stored.json.id}`)).status, 204);
  t.is((await admin(gateway, 'PUT', '/admin/models/uses-credential', { route: { targets: [{ provider: 'openai', credential: credential.json.id }] } })).status, 200);
  t.is((await admin(gateway, 'DELETE', `/admin/credentials/${credential.json.id}`)).json.error.code, 'credential_in_use');
  t.is((await admin(gateway, 'DELETE', '/admin/models/uses-credential')).status, 204);
  t.is((await admin(gateway, 'DELETE', `/admin/credentials/${credential.json.id}`)).status, 204);
  t.is((await admin(gateway, 'DELETE', `/admin/virtual-keys/${key.json.id}`)).status, 204);
});
