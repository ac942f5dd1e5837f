import test from 'ava';
import type { GatewayError } from '../errors.js';
import { mayTakeRoute } from './access.js';
import { findRoute, type RouteCatalog } from './resolve.js';
import { parseRoute } from './route.js';
import type { StoredRoute } from './sources.js';

const route = parseRoute({ targets: [{ provider: 'p' }] });
const stored = (id: string, name: string): StoredRoute => ({ id, name, version: 1, route, updated_at: new Date(0).toISOString() });
const ours = stored('route_ours', 'ours');
const theirs = stored('route_theirs', 'theirs');
const granted = stored('route_granted', 'granted');
const catalog: RouteCatalog = {
  routes: new Map([['config-open', route], ['config-granted', route]]),
  models: new Map([['fast', route]]),
  source: {
    route: async (idOrName) => [ours, theirs, granted].find((entry) => entry.id === idOrName || entry.name === idOrName),
    alias: async () => undefined,
  },
};

test('mayTakeRoute: the account key takes any route; a virtual key its own, its grants (stored by id, config by name), nothing else', (t) => {
  t.true(mayTakeRoute({ account: true }, { kind: 'stored', id: 'route_x', name: 'x' }));
  t.true(mayTakeRoute({ account: true }, { kind: 'config', name: 'anything' }));
  const key = { account: false, keyRoute: 'route_ours', allowedRoutes: ['route_granted', 'config-granted'] };
  t.true(mayTakeRoute(key, { kind: 'stored', id: 'route_ours', name: 'ours' }));
  t.true(mayTakeRoute(key, { kind: 'stored', id: 'route_granted', name: 'granted' }));
  t.true(mayTakeRoute(key, { kind: 'config', name: 'config-granted' }));
  t.false(mayTakeRoute(key, { kind: 'stored', id: 'route_theirs', name: 'theirs' }));
  t.false(mayTakeRoute(key, { kind: 'config', name: 'config-open' }));
  // A grant of a stored route is by id: a grant of its name (which another route may take after a rename) does not pass.
  t.false(mayTakeRoute({ account: false, allowedRoutes: ['granted'] }, { kind: 'stored', id: 'route_granted', name: 'granted' }));
  t.false(mayTakeRoute({ account: false }, { kind: 'stored', id: 'route_ours', name: 'ours' }));
});

test('findRoute: a virtual key naming a route it was not given, or one that does not exist, gets 403 route_not_allowed; its own, granted ones and aliases pass', async (t) => {
  const key = { account: false, keyRoute: 'route_ours', allowedRoutes: ['route_granted', 'config-granted'] } as const;
  for (const header of ['ours', 'route_ours', 'granted', 'route_granted', 'config-granted']) {
    t.truthy(await findRoute(catalog, { ...key, header }), header);
  }
  for (const header of ['theirs', 'route_theirs', 'config-open', 'no-such-route', 'route_0000']) {
    const refused = (await findRoute(catalog, { ...key, header }).catch((error: GatewayError) => error)) as GatewayError;
    t.is(refused.status, 403, header);
    t.like(refused.body, { type: 'permission_error', code: 'route_not_allowed', param: 'x-gateway-config' });
  }
  // No header: the key's own route, then an alias.
  t.like(await findRoute(catalog, { ...key }), { label: { id: 'route_ours', source: 'key' } });
  t.like(await findRoute(catalog, { account: false, model: 'fast' }), { label: { name: 'fast', source: 'alias' } });
  // The account key still takes every route, and an unknown name is still 400 unknown_route for it.
  t.like(await findRoute(catalog, { account: true, header: 'theirs' }), { label: { id: 'route_theirs' } });
  const unknown = (await findRoute(catalog, { account: true, header: 'no-such-route' }).catch((error: GatewayError) => error)) as GatewayError;
  t.like(unknown.body, { code: 'unknown_route' });
});
