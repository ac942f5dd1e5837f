import { randomBytes } from 'node:crypto';
import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';

// Two gateway instances over one Redis share stored routes and aliases: a change on one is seen by
// the other within a second (pub/sub invalidation of the per-instance caches).

let a: TestGateway;
let b: TestGateway;
const prefix = `test-routes-${process.pid}-${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');
let available = false;

test.before(async () => {
  available = await redisAvailable(); // throws under CI=true when Redis is unreachable
  if (!available) return;
  const environment = () => ({ REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });
  a = await startGateway({}, environment());
  b = await startGateway({}, environment());
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  if (available) await clearRedisPrefix(prefix);
});

/** Milliseconds until `check` holds on an instance (polled every 5 ms), or Infinity past `limitMs` + 500. */
async function seenWithin(check: () => Promise<boolean>, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs + 500) {
    if (await check()) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Number.POSITIVE_INFINITY;
}

test.serial('a route created and changed on A is seen on B within 1 s (B had cached the old version)', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const created = await admin(a, 'POST', '/admin/routes', { name: `shared-${prefix}`, route: { targets: [{ provider: 'openai' }] } });
  t.is(created.status, 201, created.text);
  t.is((await b.gateway.routes.route(`shared-${prefix}`))?.version, 1, 'B reads (and caches) version 1');
  const replaced = await admin(a, 'PUT', `/admin/routes/${created.json.id}`, { route: { targets: [{ name: 'x', provider: 'openai' }, { name: 'y', provider: 'openai' }] } });
  t.is(replaced.json.version, 2);
  const elapsed = await seenWithin(async () => (await b.gateway.routes.route(`shared-${prefix}`))?.version === 2, 1000);
  t.log(`version 2 seen on B ${elapsed.toFixed(1)} ms after the PUT on A answered`);
  t.true(elapsed < 1000, `took ${elapsed} ms`);
  t.deepEqual((await admin(b, 'GET', `/admin/routes/${created.json.id}/versions`)).json.data.map((version: { version: number }) => version.version), [1, 2]);

  t.is((await admin(b, 'DELETE', `/admin/routes/${created.json.id}`)).status, 204);
  const gone = await seenWithin(async () => (await a.gateway.routes.route(created.json.id)) === undefined, 1000);
  t.true(gone < 1000, `deletion seen on A after ${gone} ms`);
});

test.serial('an alias set on A is seen on B within 1 s, and its removal too', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const alias = `fast-${prefix}`;
  t.is(await b.gateway.routes.alias(alias), undefined, 'B caches the absence');
  t.is((await admin(a, 'PUT', `/admin/models/${alias}`, { route: { targets: [{ provider: 'openai' }] } })).status, 200);
  t.true((await seenWithin(async () => (await b.gateway.routes.alias(alias)) !== undefined, 1000)) < 1000);
  t.is((await admin(a, 'DELETE', `/admin/models/${alias}`)).status, 204);
  t.true((await seenWithin(async () => (await b.gateway.routes.alias(alias)) === undefined, 1000)) < 1000);
});

test.serial('a virtual key naming a route made on A resolves with its route on B', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const route = await admin(a, 'POST', '/admin/routes', { route: { targets: [{ provider: 'openai' }] } });
  const created = await admin(a, 'POST', '/admin/virtual-keys', { name: `routed-${prefix}`, route: route.json.id });
  t.is(created.status, 201, created.text);
  t.is((await b.gateway.vault.targets.virtualKey(created.json.key))?.route, route.json.id);
});

test.serial('concurrent changes on A and B get distinct versions, none lost', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const created = await admin(a, 'POST', '/admin/routes', { route: { targets: [{ provider: 'openai' }] } });
  const id = created.json.id as string;
  const changes = await Promise.all(
    [a, b, a, b].map((gateway, index) => admin(gateway, 'PUT', `/admin/routes/${id}`, { route: { targets: [{ name: `change-${index}`, provider: 'openai' }] } })),
  );
  t.deepEqual(changes.map((change) => change.status), [200, 200, 200, 200]);
  t.deepEqual(changes.map((change) => change.json.version as number).sort(), [2, 3, 4, 5]);
  const versions = await admin(b, 'GET', `/admin/routes/${id}/versions`);
  t.deepEqual(versions.json.data.map((version: { version: number }) => version.version), [1, 2, 3, 4, 5]);
  for (const gateway of [a, b]) t.is((await admin(gateway, 'GET', `/admin/routes/${id}`)).json.version, 5, 'the current version is the last one');
});
