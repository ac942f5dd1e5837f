import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { GatewayError } from '../errors.js';
import { parseRoute } from './route.js';
import { routeSchema } from './route-schema.js';
import { startGateway } from '../../test/harness.js';

// The published schema (route.schema.json, compiled with Ajv's default strict schema check; strictTypes, an Ajv preference
// that valid 2020-12 schemas with `if` sub-schemas do not meet) and the gateway's own check (parseRoute) must agree on
// what is a route. Each case runs through both.
const validate = new Ajv2020({ strictTypes: false }).compile(routeSchema);

const accepts = (route: unknown): boolean => {
  try {
    parseRoute(route);
    return true;
  } catch {
    return false;
  }
};

const p = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', ...extra });
const nest = (depth: number): Record<string, unknown> => (depth === 1 ? { targets: [p()] } : { targets: [{ route: nest(depth - 1) }] });
const conditional = (query: unknown) => ({
  strategy: { mode: 'conditional', conditions: [{ query, then: 'a' }], default: 'b' },
  targets: [p({ name: 'a' }), p({ name: 'b' })],
});

const valid: Record<string, unknown> = {
  "Portkey's nested target (its own strategy and targets)": {
    strategy: { mode: 'fallback' },
    targets: [{ name: 'pool', weight: 2, strategy: { mode: 'loadbalance' }, retry: { attempts: 1 }, targets: [p({ weight: 0.7 }), p({ weight: 0.3 })] }, p()],
  },
  'one target, no strategy': { targets: [p()] },
  'single': { strategy: { mode: 'single' }, targets: [p({ credential: 'cred_1', name: 'only' })] },
  'fallback with every route field': {
    strategy: { mode: 'fallback', on_status_codes: [429, 503] },
    retry: { attempts: 2, on_status_codes: [429, 500], max_retry_after: 5000 },
    request_timeout: 30_000,
    deadline: 60_000,
    on_status_codes: [500],
    passthrough_idempotent: true,
    targets: [p({ name: 'primary', credential: 'cred_a', override_params: { model: 'gpt-4o-mini' } }), { name: 'backup', virtual_key: 'vk-b', override_params: { model: 'x' } }],
  },
  'every target field': {
    targets: [
      p({
        name: 'a.b:c-d_e',
        credential: 'cred_1',
        custom_host: 'http://127.0.0.1:9000',
        weight: 0.5,
        override_params: { model: 'm', max_tokens: 10 },
        headers: { 'x-gateway-cloud-a-deployment-id': 'd1' },
        request_timeout: 1000,
        on_status_codes: [429],
      }),
    ],
  },
  'a target with every health check field': {
    targets: [p({ override_params: { model: 'm' }, health_check: { interval_ms: 5000, timeout_ms: 2000, request: 'chat', model: 'm', unhealthy_threshold: 2, healthy_threshold: 1 } }), { virtual_key: 'vk-1', health_check: { interval_ms: 1000 } }],
  },
  'a target with a provider quota': { targets: [p({ quota: { tokens_per_minute: 1000, requests_per_minute: 10, max_concurrent: 2, max_wait_ms: 0 } })] },
  'loadbalance, weights 0 and 1000000': { strategy: { mode: 'loadbalance' }, targets: [p({ weight: 0 }), p({ weight: 1_000_000 })] },
  'loadbalance least_busy': { strategy: { mode: 'loadbalance', policy: 'least_busy' }, targets: [p(), p()] },
  'loadbalance lowest_latency': { strategy: { mode: 'loadbalance', policy: 'lowest_latency' }, targets: [p(), p()] },
  'retry attempts 0 and 10 bounds': { retry: { attempts: 10 }, targets: [p()] },
  'timeouts at 1 and 3600000 ms': { request_timeout: 1, deadline: 3_600_000, targets: [p()] },
  'nested 4 deep': nest(4),
  'conditional $eq plain value and $eq': conditional({ 'metadata.tier': 'gold', model: { $eq: 'fast' } }),
  'conditional $ne $in $nin': conditional({ user: { $ne: 'u1' }, 'caller.id': { $in: ['a'] }, 'caller.name': { $nin: ['b'] } }),
  'conditional $regex $gt $gte $lt $lte': conditional({ model: { $regex: '^gpt-' }, 'metadata.n': { $gt: 1, $gte: '2', $lt: 10, $lte: 9 } }),
  'conditional $and $or nested': conditional({ $and: [{ $or: [{ 'metadata.a': 1 }, { model: { $in: ['m'] } }] }, { user: 'x' }] }),
  'cache simple with every simple field': { cache: { mode: 'simple', max_age: 31_536_000, namespace: 'team.a:1-b_c' }, targets: [p()] },
  'cache off': { cache: { mode: 'off' }, targets: [p()] },
  'cache semantic, embeddings through a provider': {
    cache: { mode: 'semantic', max_age: 1, threshold: 1, embedding: { provider: 'openai', model: 'text-embedding-3-small', credential: 'cred_1', custom_host: 'http://127.0.0.1:9', request_timeout: 500 } },
    targets: [p()],
  },
  'cache semantic, embeddings through a virtual key': { cache: { mode: 'semantic', embedding: { virtual_key: 'vk-e', model: 'e', headers: { 'x-gateway-cloud-b-region': 'r' } } }, targets: [p()] },
  'a key by id, with the hint the admin API shows (read-only, ignored)': {
    targets: [{ name: 'k', virtual_key: 'vk_0123456789abcdef0123456789abcdef', virtual_key_hint: 'vk-…abcd' }],
    cache: { mode: 'semantic', embedding: { virtual_key: 'vk_1', virtual_key_hint: 'vk-…wxyz', model: 'e' } },
  },
};

const invalid: Record<string, unknown> = {
  'not an object': [],
  'no targets': { strategy: { mode: 'fallback' } },
  'empty targets': { targets: [] },
  'unknown route field': { targets: [p()], sticky_sessions: true },
  'unknown target field': { targets: [p({ api_key: 'sk-inline' })] },
  'unknown strategy mode': { strategy: { mode: 'random' }, targets: [p()] },
  'unknown strategy field': { strategy: { mode: 'fallback', policy: 'least_busy' }, targets: [p(), p()] },
  'single with two targets': { strategy: { mode: 'single' }, targets: [p(), p()] },
  'unknown balance policy': { strategy: { mode: 'loadbalance', policy: 'round_robin' }, targets: [p()] },
  'target with provider and virtual_key': { targets: [p({ virtual_key: 'vk-1' })] },
  'target with none of provider, virtual_key, route': { targets: [{ name: 'x' }] },
  'credential without provider': { targets: [{ virtual_key: 'vk-1', credential: 'cred_1' }] },
  'a virtual_key_hint that is not a string': { targets: [{ virtual_key: 'vk_1', virtual_key_hint: 42 }] },
  'negative weight': { targets: [p({ weight: -1 })] },
  'weight over 1000000': { targets: [p({ weight: 1_000_001 })] },
  'retry attempts 11': { retry: { attempts: 11 }, targets: [p()] },
  'retry attempts 1.5': { retry: { attempts: 1.5 }, targets: [p()] },
  'retry without attempts': { retry: { on_status_codes: [429] }, targets: [p()] },
  'unknown retry field': { retry: { attempts: 1, backoff: 'linear' }, targets: [p()] },
  'request_timeout 0': { request_timeout: 0, targets: [p()] },
  'deadline over an hour': { deadline: 3_600_001, targets: [p()] },
  'status 399 in on_status_codes': { on_status_codes: [399], targets: [p()] },
  'bad target name': { targets: [p({ name: 'has space' })] },
  'upper-case provider id': { targets: [p({ provider: 'OpenAI' })] },
  'empty credential': { targets: [p({ credential: '' })] },
  'header that is not x-gateway-*': { targets: [p({ headers: { authorization: 'Bearer x' } })] },
  'x-gateway-api-key header': { targets: [p({ headers: { 'x-gateway-api-key': 'k' } })] },
  'override_params not an object': { targets: [p({ override_params: [] })] },
  'conditional without conditions': { strategy: { mode: 'conditional' }, targets: [p({ name: 'a' })] },
  'condition on an unknown field': conditional({ 'body.messages': 'x' }),
  'unknown operator': conditional({ model: { $exists: true } }),
  '$and among field operators': conditional({ model: { $and: [] } }),
  '$in with a non-array': conditional({ model: { $in: 'gpt' } }),
  '$regex over 256 characters': conditional({ model: { $regex: 'a'.repeat(257) } }),
  '$gt with a boolean': conditional({ 'metadata.n': { $gt: true } }),
  'empty $or': conditional({ $or: [] }),
  '33 targets on one level': { strategy: { mode: 'loadbalance' }, targets: Array.from({ length: 33 }, () => p()) },
  'cache without mode': { cache: { max_age: 60 }, targets: [p()] },
  'cache mode unknown': { cache: { mode: 'lru' }, targets: [p()] },
  'cache field unknown': { cache: { mode: 'simple', ttl: 60 }, targets: [p()] },
  'cache max_age 0': { cache: { mode: 'simple', max_age: 0 }, targets: [p()] },
  'cache max_age over a year': { cache: { mode: 'simple', max_age: 31_536_001 }, targets: [p()] },
  'cache namespace with a slash': { cache: { mode: 'simple', namespace: 'a/b' }, targets: [p()] },
  'cache threshold with simple mode': { cache: { mode: 'simple', threshold: 0.9 }, targets: [p()] },
  'cache threshold 0': { cache: { mode: 'semantic', threshold: 0, embedding: { provider: 'openai', model: 'e' } }, targets: [p()] },
  'cache threshold over 1': { cache: { mode: 'semantic', threshold: 1.01, embedding: { provider: 'openai', model: 'e' } }, targets: [p()] },
  'cache semantic without embedding': { cache: { mode: 'semantic' }, targets: [p()] },
  'cache embedding without model': { cache: { mode: 'semantic', embedding: { provider: 'openai' } }, targets: [p()] },
  'cache embedding with provider and virtual_key': { cache: { mode: 'semantic', embedding: { provider: 'openai', virtual_key: 'vk-1', model: 'e' } }, targets: [p()] },
  'cache embedding with a weight': { cache: { mode: 'semantic', embedding: { provider: 'openai', model: 'e', weight: 1 } }, targets: [p()] },
  'cache embedding credential without provider': { cache: { mode: 'semantic', embedding: { virtual_key: 'vk-1', credential: 'cred_1', model: 'e' } }, targets: [p()] },
  'a nested target with both route and targets': { targets: [{ route: { targets: [p()] }, targets: [p()] }] },
  'a quota with no limit': { targets: [p({ quota: { max_wait_ms: 100 } })] },
  'a health check without its interval': { targets: [p({ health_check: { timeout_ms: 100 } })] },
  'a health check more often than every second': { targets: [p({ health_check: { interval_ms: 999 } })] },
  'a health check with an unknown field': { targets: [p({ health_check: { interval_ms: 1000, path: '/up' } })] },
  'a health check with an unknown request': { targets: [p({ health_check: { interval_ms: 1000, request: 'embeddings' } })] },
  'a health check with a threshold of 0': { targets: [p({ health_check: { interval_ms: 1000, unhealthy_threshold: 0 } })] },
  'a health check on a nested route': { targets: [{ route: { targets: [p()] }, health_check: { interval_ms: 1000 } }] },
  'a quota with an unknown field': { targets: [p({ quota: { tpm: 100 } })] },
  'a quota of 0 tokens per minute': { targets: [p({ quota: { tokens_per_minute: 0 } })] },
  'a quota waiting over 10 minutes': { targets: [p({ quota: { requests_per_minute: 1, max_wait_ms: 600_001 } })] },
  'a quota on a virtual key target': { targets: [{ virtual_key: 'vk-1', quota: { requests_per_minute: 1 } }] },
  'a strategy on a provider target': { targets: [p({ strategy: { mode: 'fallback' } })] },
  'cache on a Portkey nested target': { targets: [{ cache: { mode: 'simple' }, targets: [p()] }] },
  'cache on a nested route': { targets: [{ route: { cache: { mode: 'simple' }, targets: [p()] } }] },
};

// What the schema cannot express: parseRoute refuses these, the schema accepts them (documented
// in the schema's description and docs/routing.md).
const onlyParseRouteRefuses: Record<string, unknown> = {
  'nested 5 deep': nest(5),
  'a chat health check with no model anywhere': { targets: [p({ health_check: { interval_ms: 1000, request: 'chat' } })] },
  '33 targets in all over two levels': { targets: [{ route: { targets: Array.from({ length: 17 }, () => p()) } }, ...Array.from({ length: 15 }, () => p())] },
  'two targets with one name': { targets: [p({ name: 'a' }), p({ name: 'a' })] },
  'then naming no target': { strategy: { mode: 'conditional', conditions: [{ query: { model: 'm' }, then: 'nope' }] }, targets: [p({ name: 'a' })] },
  'default naming no target': { strategy: { mode: 'conditional', conditions: [{ query: { model: 'm' }, then: 'a' }], default: 'nope' }, targets: [p({ name: 'a' })] },
  'invalid regular expression': conditional({ model: { $regex: '(' } }),
};

for (const [name, route] of Object.entries(valid)) {
  test(`schema and parseRoute both accept: ${name}`, (t) => {
    t.true(validate(route), JSON.stringify(validate.errors));
    t.true(accepts(route));
  });
}

for (const [name, route] of Object.entries(invalid)) {
  test(`schema and parseRoute both refuse: ${name}`, (t) => {
    t.false(validate(route));
    t.false(accepts(route));
  });
}

for (const [name, route] of Object.entries(onlyParseRouteRefuses)) {
  test(`only parseRoute refuses (beyond JSON Schema): ${name}`, (t) => {
    t.true(validate(route), JSON.stringify(validate.errors));
    t.false(accepts(route));
  });
}

test('parseRoute refuses a field its strategy mode does not have, naming it in param', (t) => {
  const error = t.throws(() => parseRoute({ strategy: { mode: 'loadbalance', on_status_codes: [503] }, targets: [p(), p()] }), { instanceOf: GatewayError });
  t.is(error.status, 400);
  t.is(error.body.param, 'config.strategy.on_status_codes');
  t.is(error.body.code, 'invalid_route');
});

test('parseRoute drops virtual_key_hint: what the admin API shows beside a key id is never stored', (t) => {
  const parsed = parseRoute({ targets: [{ virtual_key: 'vk_1', virtual_key_hint: 'vk-…abcd' }], cache: { mode: 'semantic', embedding: { virtual_key: 'vk_2', virtual_key_hint: 'vk-…wxyz', model: 'e' } } });
  t.deepEqual(parsed.targets[0], { virtual_key: 'vk_1' });
  t.deepEqual(parsed.cache?.embedding, { model: 'e', virtual_key: 'vk_2' });
});

test('the schema describes what it cannot check', (t) => {
  t.regex(String(routeSchema.description), /4 deep.*32 targets in all.*same name.*`then` or `default`.*\$regex.*chat `health_check` with no model/s);
});

test('GET /admin/routes/schema serves the schema without a key, and the admin OpenAPI document uses it for route bodies', async (t) => {
  const gateway = await startGateway();
  try {
    const served = await fetch(`${gateway.url}/admin/routes/schema`);
    t.is(served.status, 200);
    t.deepEqual(await served.json(), routeSchema);
    const openapi = (await (await fetch(`${gateway.url}/admin/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    t.truthy(openapi.paths['/admin/routes/schema']);
    // In the OpenAPI document the schema's $defs are components of their own (Route.strategy, …).
    t.truthy(openapi.components.schemas['Route.target']);
    const ajv = new Ajv2020({ strictTypes: false });
    // The references inside point at #/components/schemas/…: the document is added as a schema whose
    // root holds `components` (a keyword ajv is told to accept here).
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'https://gateway.invalid/admin-openapi.json', components: openapi.components });
    const validateComponent = ajv.compile({ $ref: 'https://gateway.invalid/admin-openapi.json#/components/schemas/Route' });
    t.true(validateComponent(valid['fallback with every route field']));
    t.false(validateComponent(invalid['unknown target field']));
  } finally {
    await gateway.close();
  }
});
