import test from 'ava';
import fc from 'fast-check';
import { ACCOUNT_KEY, PROVIDER_KEY } from '../harness.js';
import { headerText } from './arbitraries.js';
import { type FuzzAnswer, type FuzzRequest, type FuzzTarget, fuzzSuite, notAClientError } from './fuzz-setup.js';

// Issue 31, items 1 and 2: route names and ids in x-gateway-config for a virtual key (only its own
// route and its allowed_routes pass; anything else is 403 route_not_allowed), and gateway keys in
// the headers that would go upstream (400 gateway_key_not_forwardable, nothing sent).

interface Fixture {
  /** A key naming the route `own`, granted `granted`. */
  routeKey: string;
  /** A key bound to openai, granted `bearer`. */
  boundKey: string;
  /** Names and ids of the routes each key may take. */
  routeKeyAllows: Set<string>;
  boundKeyAllows: Set<string>;
  /** Every stored route's name and id. */
  stored: string[];
}
let fixture: Fixture;

const suite = fuzzSuite(test, async (target) => {
  const post = async (path: string, body: object) => {
    const answer = await target.send({ method: 'POST', path, headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) });
    if (answer.status !== 201) throw new Error(`${path}: ${answer.status} ${answer.text}`);
    return JSON.parse(answer.text) as { id: string; key: string; name: string };
  };
  const credential = await post('/admin/credentials', { name: 'fuzz-route-credential', provider: 'openai', api_key: 'sk-fuzz-route' });
  const targetKey = await post('/admin/virtual-keys', { name: 'fuzz-route-target', provider: 'openai', provider_key: 'sk-fuzz-target' });
  const route = (name: string, targets: object[]) => post('/admin/routes', { name, route: { targets } });
  const own = await route('own', [{ provider: 'openai', credential: credential.id }]);
  const granted = await route('granted', [{ provider: 'openai', credential: credential.id }]);
  const foreign = await route('foreign', [{ virtual_key: targetKey.key }, { provider: 'openai', credential: credential.id }]);
  const bearer = await route('bearer', [{ provider: 'openai' }]);
  const routeKey = await post('/admin/virtual-keys', { name: 'fuzz-route-key', route: 'own', allowed_routes: ['granted'] });
  const boundKey = await post('/admin/virtual-keys', { name: 'fuzz-bound-key', provider: 'openai', provider_key: 'sk-fuzz-bound', allowed_routes: ['bearer'] });
  fixture = {
    routeKey: routeKey.key,
    boundKey: boundKey.key,
    routeKeyAllows: new Set(['own', own.id, 'granted', granted.id]),
    boundKeyAllows: new Set(['bearer', bearer.id]),
    stored: [own, granted, foreign, bearer].flatMap((entry) => [entry.name, entry.id]),
  };
});

const CHAT = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
const chat = (headers: Record<string, string>): FuzzRequest => ({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', ...headers }, body: CHAT });

/** Names and ids near the stored ones, made-up ids, other text, inline JSON. */
const routeReference = fc.oneof(
  fc.constantFrom('own', 'granted', 'foreign', 'bearer').chain((name) => fc.constantFrom(name, ` ${name} `, name.toUpperCase(), `${name}x`, `${name}/`, `${name}%20`)),
  fc.constant(undefined).map(() => fixture.stored).chain((stored) => fc.constantFrom(...stored)).chain((reference) => fc.constantFrom(reference, `${reference}0`, reference.slice(0, -1), reference.toUpperCase())),
  fc.stringMatching(/^[0-9a-f]{32}$/).map((hex) => `route_${hex}`),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
  fc.constantFrom('route_', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'x-gateway-config', '0', '-', '.', '..'),
  fc.constantFrom('{"targets":[{"provider":"openai"}]}', '{', '{}', '{"targets":[]}', '{"targets":[{"virtual_key":"vk-x"}]}'),
  headerText(80),
);

/** Which answer a virtual key naming `reference` must get: route_not_allowed, inline_route_forbidden, or anything 4xx. */
function routeCheck(allowed: Set<string>) {
  return (answer: FuzzAnswer, request: FuzzRequest): string | undefined => {
    const problem = notAClientError(answer);
    if (problem) return problem;
    const reference = String(request.headers['x-gateway-config'] ?? '').trim();
    if (reference === '' || allowed.has(reference)) return undefined;
    const expected = reference.startsWith('{') ? 'inline_route_forbidden' : 'route_not_allowed';
    const code = JSON.parse(answer.text).error.code;
    return answer.status === 403 && code === expected ? undefined : `expected 403 ${expected} for a route the key was not given, got ${answer.status} ${code}`;
  };
}

/** A virtual key (in x-gateway-api-key or as the Bearer) naming a generated route. */
const keyNamesRoute = (which: 'routeKey' | 'boundKey') => (_target: FuzzTarget) =>
  fc.tuple(routeReference, fc.boolean()).map(([reference, asBearer]) => {
    const key = fixture[which];
    return chat({ ...(asBearer ? { authorization: `Bearer ${key}` } : { 'x-gateway-api-key': key }), 'x-gateway-config': reference });
  });

suite.property('a virtual key naming a route it was not given gets 403 route_not_allowed (a key naming a route)', keyNamesRoute('routeKey'), {
  runs: 400,
  batches: 2,
  check: (answer, request) => routeCheck(fixture.routeKeyAllows)(answer, request),
});
suite.property('a virtual key naming a route it was not given gets 403 route_not_allowed (a key bound to a provider)', keyNamesRoute('boundKey'), {
  runs: 300,
  check: (answer, request) => routeCheck(fixture.boundKeyAllows)(answer, request),
});

/** A gateway key as a header would carry it: alone, after a scheme, as name=value, in a list. */
const gatewayKey = fc.oneof(
  fc.constantFrom('account', 'route', 'bound').map((which) => (which === 'account' ? ACCOUNT_KEY : which === 'route' ? fixture.routeKey : fixture.boundKey)),
  fc.string({ minLength: 0, maxLength: 40 }).map((text) => `vk-${text.replace(/[^\x21-\x7e]/g, '').replace(/[,;=]/g, '')}`),
);
const carried = fc.tuple(gatewayKey, fc.constantFrom('', 'Bearer ', 'Token ', 'key=', 'a, ', 'x; ')).map(([key, before]) => `${before}${key}`);

/** Requests that would send a gateway key upstream, each of which must be refused before anything is sent. */
const keyUpstream = (_target: FuzzTarget): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(
    // Authorization next to x-gateway-api-key: the provider credential of the plain path, of a route target without one.
    fc.tuple(gatewayKey, fc.constantFrom<Record<string, string>>({ 'x-gateway-provider': 'openai' }, { 'x-gateway-config': 'bearer' })).map(([key, where]) =>
      chat({ 'x-gateway-api-key': ACCOUNT_KEY, ...where, authorization: `Bearer ${key}` }),
    ),
    gatewayKey.map((key) => chat({ 'x-gateway-api-key': fixture.boundKey, 'x-gateway-config': 'bearer', authorization: `Bearer ${key}` })),
    // A header named in x-gateway-forward-headers.
    fc.tuple(carried, fc.constantFrom('x-extra', 'x-upstream-auth', 'openai-project')).map(([value, name]) =>
      chat({ 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-forward-headers': `accept, ${name}`, [name]: value }),
    ),
    // The caller's own key, sent in Authorization, named for forwarding on a route.
    fc.constant(null).map(() => chat({ authorization: `Bearer ${ACCOUNT_KEY}`, 'x-gateway-config': 'bearer', 'x-gateway-forward-headers': 'authorization' })),
  );

suite.property('a gateway key in a header that would go upstream is refused: 400 gateway_key_not_forwardable', keyUpstream, {
  runs: 400,
  check: (answer) => {
    const problem = notAClientError(answer);
    if (problem) return problem;
    const code = JSON.parse(answer.text).error.code;
    return answer.status === 400 && code === 'gateway_key_not_forwardable' ? undefined : `expected 400 gateway_key_not_forwardable, got ${answer.status} ${code}`;
  },
});
