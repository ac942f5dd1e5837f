import test from 'ava';
import OpenAI from 'openai';
import type { GatewayContext } from '../../core/pipeline/context.js';
import type { ProviderRegistration } from '../../core/spec/provider.js';
import { openAIChat } from '../../plugins/providers/openai/openai-chat.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, FIXED_MESSAGES, fixedUsageHandler } from './vault-harness.js';

/** A provider that, like a cloud, builds its URL from a gateway header and signs with a structured credential. */
const cloudLike: ProviderRegistration = {
  manifest: { id: 'cloud-test', kind: 'provider', specificationVersion: 'v1', version: '1.0.0', description: 'Test provider reading structured credentials.' },
  params: {},
  create: () => ({
    id: 'cloud-test',
    name: 'Cloud test',
    operations: { chat: openAIChat },
    baseUrl: (headers) => headers['x-gateway-cloud-test-endpoint'] ?? 'http://127.0.0.1:9/none',
    auth: (_request, target) => ({
      'x-test-access': target.credentials.fields?.access_key_id ?? 'missing',
      'x-test-secret-length': String(target.credentials.fields?.secret_access_key?.length ?? 0),
    }),
    authHeaders: ['x-test-access', 'x-test-secret-length'],
    mapError: (reply) => ({ message: `status ${reply.status}`, type: 'upstream_error', param: null, code: null }),
  }),
};

const PROVIDER_SECRET = 'sk-admin-provider-secret-abcdef0123456789';
const CLOUD_SECRET = 'cloud-secret-access-key-0123456789abcdef';
const seenPolicies: Array<string | undefined> = [];
let fake: Fake;
let gateway: TestGateway;
const answers: string[] = [];
const keyValues: string[] = [];

/** admin() that remembers every answer for the final secret scan. */
async function call(method: string, path: string, body?: unknown, key?: string) {
  const result = await admin(gateway, method, path, body, key);
  answers.push(result.text);
  return result;
}

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({
    providers: [openai(), cloudLike],
    policies: { strict: { description: 'a policy with no checks: only its name matters here' } },
    hooks: [{ name: 'test-policy-probe', stage: 'guardrail', run: async (context: GatewayContext, next) => (seenPolicies.push(context.auth?.policy), next()) }],
  });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test.serial('the OpenAPI description is served at /admin/openapi.json', async (t) => {
  const response = await fetch(`${gateway.url}/admin/openapi.json`);
  t.is(response.status, 200);
  const document = (await response.json()) as any;
  t.is(document.openapi, '3.1.0');
  for (const path of ['/admin/credentials', '/admin/credentials/{id}', '/admin/virtual-keys', '/admin/virtual-keys/{id}', '/admin/virtual-keys/{id}/rotate', '/admin/virtual-keys/{id}/usage']) {
    t.truthy(document.paths[path], path);
  }
  for (const schema of ['VirtualKeyInput', 'VirtualKeyPatch', 'VirtualKey']) t.is(document.components.schemas[schema].properties.log_bodies.type, 'boolean', schema);
  t.is(document.components.schemas.VirtualKeyInput.properties.log_bodies.default, true);
});

test.serial('the admin API needs the account key', async (t) => {
  t.is((await call('GET', '/admin/virtual-keys', undefined, '')).status, 401);
  t.is((await call('GET', '/admin/virtual-keys', undefined, 'vk-not-a-real-key')).status, 401);
});

test.serial('credentials and virtual keys: create, list, read, change, use with the openai SDK, rotate, delete', async (t) => {
  const credential = await call('POST', '/admin/credentials', { name: 'team openai', provider: 'openai', api_key: PROVIDER_SECRET });
  t.is(credential.status, 201);
  t.like(credential.json, { name: 'team openai', provider: 'openai', has_api_key: true, field_names: [] });
  t.is(credential.json.sealed, undefined);

  const created = await call('POST', '/admin/virtual-keys', {
    name: 'search-team',
    provider: 'openai',
    credential_id: credential.json.id,
    custom_host: fake.baseUrl,
    guardrail_policy: 'strict',
    limits: { requests_per_minute: 100, budget_usd: 5, budget_period: 'month' },
  });
  t.is(created.status, 201);
  const { key, id } = created.json;
  keyValues.push(key);
  t.regex(key, /^vk-[A-Za-z0-9_-]{43}$/, '32 random bytes behind a recognisable prefix');
  t.is(created.json.key_hint, `vk-…${key.slice(-4)}`);
  t.is(created.json.key_hash, undefined);
  t.like(created.json, { name: 'search-team', provider: 'openai', credential_id: credential.json.id, guardrail_policy: 'strict', log_bodies: true });

  const duplicate = await call('POST', '/admin/virtual-keys', { name: 'search-team', provider: 'openai', credential_id: credential.json.id });
  t.is(duplicate.status, 409);
  t.like(duplicate.json.error, { param: 'name', code: 'duplicate_name' });

  const listed = await call('GET', '/admin/virtual-keys');
  t.is(listed.status, 200);
  t.is(listed.json.data.length, 1);
  t.is(listed.json.data[0].key, undefined);
  t.false(listed.text.includes(key));
  t.is((await call('GET', `/admin/virtual-keys/${id}`)).json.name, 'search-team');
  t.is(listed.json.data[0].log_bodies, true, 'bodies are logged by default');

  // The SDK sends only the virtual key: no provider header, no provider token of its own.
  const client = new OpenAI({ apiKey: 'unused-by-the-gateway', baseURL: `${gateway.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': key } });
  const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES });
  t.is(completion.choices[0].message.content, 'ok');
  const upstream = fake.requests.at(-1)!;
  t.is(upstream.headers.authorization, `Bearer ${PROVIDER_SECRET}`, 'the stored credential replaced the caller’s');
  t.is(seenPolicies.at(-1), 'strict', "the key's guardrail policy reaches the pipeline");

  t.is((await call('GET', '/admin/virtual-keys', undefined, key)).status, 403, 'a virtual key may not use the admin API');

  const patched = await call('PATCH', `/admin/virtual-keys/${id}`, { name: 'search-team-2', guardrail_policy: null });
  t.is(patched.status, 200);
  t.like(patched.json, { name: 'search-team-2' });
  t.is(patched.json.guardrail_policy, undefined);
  for (const value of [null, 'false', 0]) {
    const refused = await call('PATCH', `/admin/virtual-keys/${id}`, { log_bodies: value });
    t.is(refused.status, 400, refused.text);
    t.like(refused.json.error, { type: 'invalid_request_error', param: 'log_bodies' });
  }
  const quiet = await call('PATCH', `/admin/virtual-keys/${id}`, { log_bodies: false });
  t.is(quiet.json.log_bodies, false);
  t.is((await call('GET', `/admin/virtual-keys/${id}`)).json.log_bodies, false);
  t.is((await client.chat.completions.create({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES })).choices.length, 1);
  t.is(seenPolicies.at(-1), undefined);

  const rotated = await call('POST', `/admin/virtual-keys/${id}/rotate`);
  t.is(rotated.status, 200);
  keyValues.push(rotated.json.key);
  t.not(rotated.json.key, key);
  await t.throwsAsync(client.chat.completions.create({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES }), { instanceOf: OpenAI.AuthenticationError });
  const renewed = new OpenAI({ apiKey: 'unused', baseURL: `${gateway.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': rotated.json.key } });
  t.is((await renewed.chat.completions.create({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES })).choices[0].message.content, 'ok');

  const usage = await call('GET', `/admin/virtual-keys/${id}/usage`);
  t.is(usage.status, 200);
  t.like(usage.json, { budget_usd: 5, budget_period: 'month', requests_per_minute: 100 });
  t.is(usage.json.requests.total, 3);

  const inUse = await call('DELETE', `/admin/credentials/${credential.json.id}`);
  t.is(inUse.status, 409);
  t.is(inUse.json.error.code, 'credential_in_use');

  t.is((await call('DELETE', `/admin/virtual-keys/${id}`)).status, 204);
  const after = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': rotated.json.key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES }),
  });
  t.is(after.status, 401);
  t.is((await call('GET', `/admin/virtual-keys/${id}`)).status, 404);
  t.is((await call('DELETE', `/admin/credentials/${credential.json.id}`)).status, 204);
  t.is((await call('GET', '/admin/credentials')).json.data.length, 0);
});

test.serial('a provider_key given at creation is sealed into a credential the key owns, deleted with it', async (t) => {
  const created = await call('POST', '/admin/virtual-keys', { name: 'owned', provider: 'openai', provider_key: PROVIDER_SECRET, custom_host: fake.baseUrl });
  t.is(created.status, 201);
  keyValues.push(created.json.key);
  const credentials = (await call('GET', '/admin/credentials')).json.data;
  t.is(credentials.length, 1);
  t.is(credentials[0].owner_key_id, created.json.id);
  // Another key may not use it: it would lose its credential when the owner is deleted.
  const borrowing = await call('POST', '/admin/virtual-keys', { name: 'borrower', provider: 'openai', credential_id: credentials[0].id });
  t.is(borrowing.status, 400);
  t.is(borrowing.json.error.param, 'credential_id');
  t.is((await call('DELETE', `/admin/virtual-keys/${created.json.id}`)).status, 204);
  t.is((await call('GET', '/admin/credentials')).json.data.length, 0);
});

test.serial('a structured cloud credential supplies the cloud headers and the fields the plugin reads', async (t) => {
  const credential = await call('POST', '/admin/credentials', {
    name: 'cloud',
    provider: 'cloud-test',
    fields: { 'x-gateway-cloud-test-endpoint': fake.baseUrl, access_key_id: 'AKIDTEST', secret_access_key: CLOUD_SECRET },
  });
  t.is(credential.status, 201);
  t.deepEqual(credential.json.field_names, ['access_key_id', 'secret_access_key', 'x-gateway-cloud-test-endpoint']);
  t.false(credential.text.includes(CLOUD_SECRET));
  const created = await call('POST', '/admin/virtual-keys', { name: 'cloud-key', provider: 'cloud-test', credential_id: credential.json.id });
  t.is(created.status, 201);
  keyValues.push(created.json.key);
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': created.json.key },
    body: JSON.stringify({ model: 'some-model', messages: FIXED_MESSAGES }),
  });
  t.is(response.status, 200);
  const upstream = fake.requests.at(-1)!;
  t.is(upstream.url, '/v1/chat/completions', 'the base URL came from the stored header field');
  t.is(upstream.headers['x-test-access'], 'AKIDTEST');
  t.is(upstream.headers['x-test-secret-length'], String(CLOUD_SECRET.length));
});

test.serial('request headers cannot send a stored credential to another host', async (t) => {
  const credential = await call('POST', '/admin/credentials', {
    name: 'cloud-unpinned',
    provider: 'cloud-test',
    fields: { access_key_id: 'AKIDTEST', secret_access_key: CLOUD_SECRET },
  });
  const created = await call('POST', '/admin/virtual-keys', { name: 'cloud-unpinned-key', provider: 'cloud-test', credential_id: credential.json.id });
  keyValues.push(created.json.key);
  const before = fake.requests.length;
  // The credential names no endpoint: the caller's header would choose where the secret goes.
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': created.json.key, 'x-gateway-cloud-test-endpoint': fake.baseUrl },
    body: JSON.stringify({ model: 'some-model', messages: FIXED_MESSAGES }),
  });
  t.is(response.status, 400);
  t.like(((await response.json()) as { error: object }).error, { code: 'host_not_pinned', param: 'x-gateway-api-key' });
  t.is(fake.requests.length, before, 'nothing was sent');
});

test.serial('a virtual key fixes its target: another provider or a custom host in the request is refused', async (t) => {
  const created = await call('POST', '/admin/virtual-keys', { name: 'fixed', provider: 'openai', provider_key: PROVIDER_SECRET, custom_host: fake.baseUrl });
  keyValues.push(created.json.key);
  const send = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': created.json.key, ...headers },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES }),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
  const otherHost = await send({ 'x-gateway-custom-host': 'http://127.0.0.1:1/v1' });
  t.is(otherHost.status, 400);
  t.is(otherHost.body.error.param, 'x-gateway-custom-host');
  const otherProvider = await send({ 'x-gateway-provider': 'cloud-test' });
  t.is(otherProvider.status, 400);
  t.is(otherProvider.body.error.param, 'x-gateway-provider');
  t.is((await send({ 'x-gateway-provider': 'openai' })).status, 200, 'the same provider named again is fine');
});

const invalidBodies: Array<[label: string, path: string, body: unknown, param: string]> = [
  ['name missing', '/admin/virtual-keys', { provider: 'openai', provider_key: 'sk-x' }, 'name'],
  ['unknown field', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', budget: 5 }, 'budget'],
  ['unknown provider', '/admin/virtual-keys', { name: 'x', provider: 'nope', provider_key: 'sk-x' }, 'provider'],
  ['no credential', '/admin/virtual-keys', { name: 'x', provider: 'openai' }, 'credential_id'],
  ['both credentials', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', credential_id: 'cred_1' }, 'provider_key'],
  ['unknown guardrail policy', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', guardrail_policy: 'lenient' }, 'guardrail_policy'],
  ['negative rpm', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', limits: { requests_per_minute: -1 } }, 'limits.requests_per_minute'],
  ['fractional rpd', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', limits: { requests_per_day: 1.5 } }, 'limits.requests_per_day'],
  ['bad period', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', limits: { budget_usd: 1, budget_period: 'fortnight' } }, 'limits.budget_period'],
  ['bad users', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', limits: { allowed_users: ['a', 3] } }, 'limits.allowed_users[1]'],
  ['log_bodies not a boolean', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', log_bodies: 'no' }, 'log_bodies'],
  ['bad expiry', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', expires_at: 'tomorrow' }, 'expires_at'],
  ['refused custom host', '/admin/virtual-keys', { name: 'x', provider: 'openai', provider_key: 'sk-x', custom_host: 'http://169.254.169.254/v1' }, 'custom_host'],
  ['credential without secret', '/admin/credentials', { name: 'x' }, 'api_key'],
  ['credential field not a string', '/admin/credentials', { name: 'x', fields: { region: 1 } }, 'fields.region'],
];

for (const [label, path, body, param] of invalidBodies) {
  test.serial(`400 with param for ${label}`, async (t) => {
    const result = await call('POST', path, body);
    t.is(result.status, 400, result.text);
    t.like(result.json.error, { type: 'invalid_request_error', param });
  });
}

test.serial('404 with param for a credential that does not exist (as for one of another team)', async (t) => {
  const result = await call('POST', '/admin/virtual-keys', { name: 'x', provider: 'openai', credential_id: 'cred_nope' });
  t.is(result.status, 404, result.text);
  t.like(result.json.error, { param: 'credential_id', code: 'credential_not_found' });
});

test.serial('400 with param expires_at for an expiry in the past, on creation and on update', async (t) => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const created = await call('POST', '/admin/virtual-keys', { name: 'born-expired', provider: 'openai', provider_key: 'sk-x', expires_at: past });
  t.is(created.status, 400, created.text);
  t.like(created.json.error, { type: 'invalid_request_error', param: 'expires_at' });
  const listed = await call('GET', '/admin/virtual-keys');
  t.false(JSON.stringify(listed.json).includes('born-expired'), 'nothing was created');

  const live = await call('POST', '/admin/virtual-keys', { name: 'expiry-update', provider: 'openai', provider_key: 'sk-x', custom_host: fake.baseUrl });
  t.is(live.status, 201, live.text);
  const updated = await call('PATCH', `/admin/virtual-keys/${live.json.id}`, { expires_at: '2020-01-01T00:00:00Z' });
  t.is(updated.status, 400, updated.text);
  t.like(updated.json.error, { type: 'invalid_request_error', param: 'expires_at' });
  const future = new Date(Date.now() + 3_600_000).toISOString();
  const later = await call('PATCH', `/admin/virtual-keys/${live.json.id}`, { expires_at: future });
  t.is(later.status, 200, later.text);
  t.is(later.json.expires_at, future);
  t.is((await call('DELETE', `/admin/virtual-keys/${live.json.id}`)).status, 204);
});

test.serial('400 for a body that is not JSON', async (t) => {
  const result = await call('POST', '/admin/virtual-keys', '{nope');
  t.is(result.status, 400);
  t.is(result.json.error.code, 'invalid_json');
});

test.serial('admin bodies: 413 past 1 MB (declared or not), 400 invalid_json for JSON that is not an object, read whatever the content type', async (t) => {
  const huge = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
  const declared = await call('POST', '/admin/credentials', huge);
  t.is(declared.status, 413);
  t.like(declared.json.error, { type: 'request_too_large', code: 'body_too_large' });
  const chunked = await fetch(`${gateway.url}/admin/credentials`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' },
    body: new Blob([huge]).stream(),
    duplex: 'half',
  } as RequestInit);
  t.is(chunked.status, 413);
  for (const body of ['[1, 2]', '"text"', '']) {
    const result = await call('POST', '/admin/virtual-keys', body);
    t.is(result.status, 400, body);
    t.like(result.json.error, { type: 'invalid_request_error', code: 'invalid_json' });
  }
  const plain = await fetch(`${gateway.url}/admin/virtual-keys`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/x-www-form-urlencoded' },
    body: JSON.stringify({ name: 'form-typed', provider: 'openai' }),
  });
  t.is(plain.status, 400);
  t.like(((await plain.json()) as { error: object }).error, { param: 'credential_id' }, 'read as JSON: refused for what it lacks, not for its type');
});

test.after('no admin answer (but the key-issuing ones) and no log line holds a provider secret or a key value', (t) => {
  for (const answer of answers) {
    t.false(answer.includes(PROVIDER_SECRET));
    t.false(answer.includes(CLOUD_SECRET));
  }
  for (const value of keyValues) {
    t.is(answers.filter((answer) => answer.includes(value)).length, 1, 'a key value appears only in the answer that issued it');
  }
  t.true(keyValues.length >= 4);
  const log = gateway.rawLog();
  for (const secret of [PROVIDER_SECRET, CLOUD_SECRET, ACCOUNT_KEY, ...keyValues]) t.false(log.includes(secret));
});
