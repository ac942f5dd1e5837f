import test from 'ava';
import fc from 'fast-check';
import { decodeCursor } from '../../core/logs/store.js';
import { ACCOUNT_KEY } from '../harness.js';
import { deepNesting, invalidJsonText, jsonValue, nonObjectJson } from './arbitraries.js';
import { type FuzzRequest, type FuzzTarget, fuzzSuite } from './fuzz-setup.js';

/** A virtual key and a credential that exist, so that PATCH bodies reach validation (and the key gets 403). */
let existing: { keyId: string; key: string; credentialId: string };

const suite = fuzzSuite(test, async (target) => {
  const create = async (path: string, body: object) => {
    const answer = await target.send({ method: 'POST', path, headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) });
    if (answer.status !== 201) throw new Error(`${path}: ${answer.status} ${answer.text}`);
    return JSON.parse(answer.text) as { id: string; key: string };
  };
  const key = await create('/admin/virtual-keys', { name: 'fuzz-key', provider: 'openai', provider_key: 'sk-fuzz' });
  existing = { credentialId: (await create('/admin/credentials', { name: 'fuzz-credential', api_key: 'sk-fuzz' })).id, keyId: key.id, key: key.key };
});

const admin = (method: string, path: string, body?: string): FuzzRequest => ({
  method,
  path,
  headers: body === undefined ? { 'x-gateway-api-key': ACCOUNT_KEY } : { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' },
  body: body === undefined ? undefined : Buffer.from(body, 'utf8'),
});

const badName = fc.constantFrom(undefined, '', ' x', 'x ', 'n'.repeat(129), 42, null, [], {}, true);
const badString = fc.constantFrom('', 42, null, [], {}, false);
const refusedHost = fc.constantFrom('http://10.0.0.1/v1', 'http://169.254.169.254/', 'http://[fe80::1]/', 'http://0.0.0.0/', 'ftp://10.0.0.1/', 'not a url', 'http://x.invalid/v1', 'http://u:p@127.0.0.1/v1', 'http://127.0.0.1/v1?q=1', '', 42);
const badLimits = fc.constantFrom<unknown>(
  'x',
  [],
  null,
  { budget_usd: -1 },
  { budget_usd: 1e10 },
  { budget_usd: '5' },
  { budget_period: 'day' },
  { budget_usd: 1, budget_period: 'week' },
  { requests_per_minute: 1.5 },
  { requests_per_minute: -1 },
  { requests_per_day: 1e13 },
  { allowed_users: 'x' },
  { allowed_users: [1] },
  { allowed_models: [''] },
  { allowed_models: Array.from({ length: 1001 }, (_, index) => `m${index}`) },
  { unknown: 1 },
);
const badExpiry = fc.oneof(fc.constantFrom<unknown>('', 'tomorrow', '2030-13-45T00:00:00Z', '2030-01-01', 42, [], {}, 'T'), fc.string({ maxLength: 20 }).filter((text) => Number.isNaN(Date.parse(text))));
const unknownField = (allowed: readonly string[]) => fc.string({ minLength: 1, maxLength: 12 }).filter((name) => !allowed.includes(name));

const CREDENTIAL_FIELDS = ['name', 'provider', 'api_key', 'fields'];
/** A credential body with exactly one thing wrong. */
const badCredential = fc.oneof(
  badName.map((name) => ({ name, api_key: 'k' })),
  badString.map((apiKey) => ({ name: 'c', api_key: apiKey })),
  fc.constant({ name: 'c' }),
  fc.constantFrom<unknown>({}, [], 'x', { 'bad name!': 'v' }, { ok: 42 }, Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`f${index}`, 'v']))).map((fields) => ({ name: 'c', fields })),
  fc.constantFrom<unknown>('', 42, 'p'.repeat(65), 'not-a-provider').map((provider) => ({ name: 'c', api_key: 'k', provider })),
  fc.tuple(unknownField(CREDENTIAL_FIELDS), jsonValue).map(([field, value]) => ({ name: 'c', api_key: 'k', [field]: value })),
);

const KEY_FIELDS = ['name', 'provider', 'credential_id', 'provider_key', 'route', 'allowed_routes', 'custom_host', 'guardrail_policy', 'limits', 'expires_at', 'log_bodies'];
/** `allowed_routes` values that are refused: not an array, bad entries, routes nothing holds (the suite stores none), too many. */
const badAllowedRoutes = fc.oneof(
  fc.constantFrom<unknown>('x', 'own', 42, {}, true, [''], [42], [null], [[]], [{}], ['r'.repeat(257)], Array.from({ length: 101 }, (_, index) => `r${index}`)),
  fc.array(fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/), fc.stringMatching(/^[0-9a-f]{32}$/).map((hex) => `route_${hex}`), fc.string({ minLength: 1, maxLength: 20 })), { minLength: 1, maxLength: 5 }),
);
/** One wrong field of a virtual-key body (valid in neither a POST nor a PATCH). */
const badKeyField: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  badName.filter((name) => name !== undefined).map((name) => ({ name })),
  fc.constantFrom<unknown>('', 42, 'p'.repeat(65), 'not-a-provider', null).map((provider) => ({ provider })),
  fc.constantFrom<unknown>('', 42, 'cred_does_not_exist', 'c'.repeat(129)).map((credentialId) => ({ credential_id: credentialId })),
  fc.constantFrom<unknown>('', 42, null).map((providerKey) => ({ provider_key: providerKey })),
  refusedHost.map((host) => ({ custom_host: host })),
  fc.constantFrom<unknown>('', 42, 'no-such-policy').map((policy) => ({ guardrail_policy: policy })),
  badLimits.filter((limits) => limits !== null).map((limits) => ({ limits })),
  badExpiry.map((expiry) => ({ expires_at: expiry })),
  fc.constantFrom<unknown>('yes', 1, null, 'true').map((logBodies) => ({ log_bodies: logBodies })),
  badAllowedRoutes.map((allowedRoutes) => ({ allowed_routes: allowedRoutes })),
  fc.tuple(unknownField(KEY_FIELDS), jsonValue).map(([field, value]) => ({ [field]: value })),
);
const badKeyCreation = fc.oneof(
  badKeyField.map((field) => ({ name: 'k', provider: 'openai', provider_key: 'sk', ...field })),
  fc.constantFrom<unknown>(null, []).map((allowedRoutes) => ({ name: 'k', provider: 'openai', provider_key: 'sk', allowed_routes: allowedRoutes, route: 'no-such-route' })),
  fc.constant({ name: 'k', provider: 'openai' }),
  fc.constant({ name: 'k', provider: 'openai', provider_key: 'sk', credential_id: 'c' }),
  fc.constant({ name: 'k', provider: 'openai', provider_key: 'sk', limits: null }),
);

/** A reference to a virtual key that is no current key bound to a provider: made-up ids and values, other text, wrong types. */
const badKeyReference = fc.oneof(
  fc.stringMatching(/^[0-9a-f]{32}$/).map((hex) => `vk_${hex}`),
  fc.string({ maxLength: 40 }).map((text) => `vk-${text}`),
  fc.constantFrom<unknown>('', 'vk_', 'vk-', 'vk_unknown', 42, null, [], {}, true),
  fc.string({ minLength: 1, maxLength: 30 }),
);
/** A route body naming a virtual key wrongly: in a target, a nested target, the cache's embeddings target; or a wrong `virtual_key_hint`. */
const badRouteWithKey = fc.oneof(
  badKeyReference.map((reference) => ({ route: { targets: [{ virtual_key: reference }] } })),
  badKeyReference.map((reference) => ({ route: { targets: [{ provider: 'openai' }, { route: { targets: [{ name: 'n', virtual_key: reference, virtual_key_hint: 'vk-…abcd' }] } }] } })),
  badKeyReference.map((reference) => ({ route: { targets: [{ provider: 'openai' }], cache: { mode: 'semantic', embedding: { virtual_key: reference, model: 'e' } } } })),
  fc.constantFrom<unknown>(42, null, [], {}, 'x'.repeat(257)).map((hint) => ({ route: { targets: [{ virtual_key: existing.keyId, virtual_key_hint: hint }] } })),
  fc.constant(null).map(() => ({ route: { targets: [{ virtual_key: existing.key, provider: 'openai' }] } })),
);

/** A body for an admin POST or PATCH: not JSON, not an object, or an object with one thing wrong. */
const adminBody = (objects: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 1, arbitrary: invalidJsonText }, { weight: 1, arbitrary: nonObjectJson }, { weight: 1, arbitrary: deepNesting }, { weight: 5, arbitrary: objects.map((value) => JSON.stringify(value)) });

/** Ids that name nothing: random text, percent-escapes (some malformed), long ones. */
const unknownId = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map((text) => encodeURIComponent(text)),
  fc.constantFrom('%zz', '%', '%E0%A4%A', '%00', '%2f', '..', '.', 'vk_', '%252e', 'a%2Fb', '__proto__', 'constructor'),
  fc.integer({ min: 257, max: 2000 }).map((length) => 'i'.repeat(length)),
);

const logQueryParam = fc.oneof(
  fc.constantFrom('0', '501', '-1', '1.5', 'abc', '', '1e3', 'NaN').map((limit) => `limit=${limit}`),
  fc.string({ maxLength: 40 }).filter((text) => decodeCursor(text) === undefined).map((cursor) => `cursor=${encodeURIComponent(cursor)}`),
  fc.constantFrom('1xx', '6xx', '2XX', '200', '').map((value) => `status_class=${value}`),
  fc.string({ maxLength: 10 }).map((value) => `metadata_value=${encodeURIComponent(value)}`),
  fc.tuple(fc.constantFrom('from', 'to'), fc.string({ maxLength: 20 }).filter((text) => Number.isNaN(Date.parse(text)))).map(([name, value]) => `${name}=${encodeURIComponent(value)}`),
  fc.constant('from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z'),
  fc.constantFrom('limit', 'provider', 'model', 'key', 'trace_id', 'status_class').map((name) => `${name}=a&${name}=b`),
  fc.constantFrom('provider', 'model', 'key', 'trace_id', 'metadata_key').map((name) => `${name}=${'q'.repeat(257)}`),
  fc.constantFrom('provider', 'model', 'key', 'trace_id').map((name) => `${name}=`),
);
const usageQueryParam = fc.oneof(
  fc.constantFrom('minute', 'HOUR', '', 'month', 'day&range=week').map((range) => `range=${range}`),
  fc.constantFrom('users', 'PROVIDER', '', 'none&group_by=model', 'metadata.', `metadata.${'k'.repeat(300)}`).map((groupBy) => `group_by=${groupBy}`),
  fc.string({ maxLength: 20 }).filter((text) => Number.isNaN(Date.parse(text))).map((to) => `to=${encodeURIComponent(to)}`),
);
/** Valid filters to mix with the broken one. */
const goodLogParams = fc.subarray(['limit=5', 'provider=openai', 'model=gpt-4o-mini', 'status_class=4xx']);

/** A request to the admin API that is wrong in one way. */
const adminRequest = (_target: FuzzTarget): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(
    adminBody(badCredential).map((body) => admin('POST', '/admin/credentials', body)),
    adminBody(badKeyCreation).map((body) => admin('POST', '/admin/virtual-keys', body)),
    adminBody(fc.oneof(badKeyField, fc.constant({}))).map((body) => admin('PATCH', `/admin/virtual-keys/${existing.keyId}`, body)),
    adminBody(badRouteWithKey).map((body) => admin('POST', '/admin/routes', body)),
    fc.tuple(fc.constantFrom('smart', 'fast'), adminBody(badRouteWithKey)).map(([alias, body]) => admin('PUT', `/admin/models/${alias}`, body)),
    fc.tuple(unknownId, adminBody(fc.constant({ name: 'renamed' }))).map(([id, body]) => admin('PATCH', `/admin/virtual-keys/${id}`, body)),
    fc.tuple(fc.constantFrom(['GET', ''], ['DELETE', ''], ['POST', '/rotate'], ['GET', '/usage']), unknownId).map(([[method, suffix], id]) => admin(method, `/admin/virtual-keys/${id}${suffix}`)),
    unknownId.map((id) => admin('DELETE', `/admin/credentials/${id}`)),
    unknownId.map((id) => admin('GET', `/admin/logs/${id}`)),
    fc.tuple(goodLogParams, logQueryParam).map(([good, bad]) => admin('GET', `/admin/logs?${[...good, bad].join('&')}`)),
    usageQueryParam.map((query) => admin('GET', `/admin/usage?${query}`)),
    fc
      .tuple(
        fc.constantFrom('/admin/virtual-keys', '/admin/credentials', '/admin/logs', '/admin/usage', '/admin/plugins', '/admin/policies', '/metrics', `/admin/virtual-keys/${existing.keyId}`),
        fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH'),
        fc.constantFrom(undefined, '', 'wrong', `${ACCOUNT_KEY}x`, 'vk-0000000000000000000000000000', 'virtual key'),
      )
      .map(([path, method, key]): FuzzRequest => ({ method, path, headers: key === undefined ? {} : { 'x-gateway-api-key': key === 'virtual key' ? existing.key : key } })),
  );

suite.property('the admin API answers bad bodies, ids and queries with an OpenAI-shaped 4xx', adminRequest, { runs: 800, batches: 3 });
