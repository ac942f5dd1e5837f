import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { ACCOUNT_KEY, gatewayHeaders, loggedOnce, SECRETS, startGateway, type TestGateway, traceId } from './harness.js';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const chatBody = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

async function chat(headers: Record<string, string>) {
  const trace = traceId('auth');
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-trace-id': trace, ...headers },
    body: chatBody,
  });
  return { response, body: (await response.json()) as { error?: { type: string; param: string | null; code: string; message: string } }, trace };
}

test('a missing x-gateway-api-key is 401, and logged', async (t) => {
  const headers = gatewayHeaders(fake.baseUrl);
  delete (headers as Record<string, string | undefined>)['x-gateway-api-key'];
  const { response, body, trace } = await chat(headers);
  t.is(response.status, 401);
  t.like(body.error, { type: 'authentication_error', code: 'missing_api_key' });
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { status: 401, outcome: 'error' });
});

test('a wrong x-gateway-api-key is 401 and never reaches the provider', async (t) => {
  const before = fake.requests.length;
  const { response, body } = await chat(gatewayHeaders(fake.baseUrl, { 'x-gateway-api-key': `${ACCOUNT_KEY}x` }));
  t.is(response.status, 401);
  t.like(body.error, { type: 'authentication_error', code: 'invalid_api_key' });
  t.is(fake.requests.length, before);
});

test('an unknown provider is 400 naming close matches', async (t) => {
  const { response, body } = await chat(gatewayHeaders(fake.baseUrl, { 'x-gateway-provider': 'openaii' }));
  t.is(response.status, 400);
  t.like(body.error, { type: 'invalid_request_error', param: 'x-gateway-provider', code: 'unknown_provider' });
  t.regex(body.error?.message ?? '', /Did you mean openai\?/);
});

test('a missing provider header is 400', async (t) => {
  const headers = gatewayHeaders(fake.baseUrl);
  delete (headers as Record<string, string | undefined>)['x-gateway-provider'];
  const { response, body } = await chat(headers);
  t.is(response.status, 400);
  t.is(body.error?.param, 'x-gateway-provider');
});

test('an Authorization header that is not Bearer is 401', async (t) => {
  const { response, body } = await chat(gatewayHeaders(fake.baseUrl, { authorization: 'Basic abc' }));
  t.is(response.status, 401);
  t.is(body.error?.code, 'invalid_authorization');
});

const refused: Array<[string, RegExp]> = [
  ['http://169.254.169.254/latest', /cloud metadata/],
  ['http://[fd00:ec2::254]/v1', /cloud metadata/],
  ['http://[fe80::1]/v1', /link-local/],
  ['http://10.0.0.8:8000/v1', /private network/],
  ['http://192.168.1.20/v1', /private network/],
  ['ftp://127.0.0.1/v1', /only http and https/],
  ['http://user:pass@127.0.0.1/v1', /credentials/],
  ['not a url', /not an absolute URL/],
];
for (const [host, reason] of refused) {
  test(`custom host ${host} is refused with 400 naming the rule`, async (t) => {
    const { response, body, trace } = await chat(gatewayHeaders(host));
    t.is(response.status, 400);
    t.like(body.error, { type: 'invalid_request_error', param: 'x-gateway-custom-host', code: 'custom_host_refused' });
    t.regex(body.error?.message ?? '', reason);
    await loggedOnce(gateway, trace);
  });
}

test('loopback custom hosts are refused when the config says so', async (t) => {
  const strict = await startGateway({ customHosts: { allowLoopback: false } });
  try {
    const response = await fetch(`${strict.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...gatewayHeaders(fake.baseUrl) },
      body: chatBody,
    });
    t.is(response.status, 400);
    t.regex(((await response.json()) as { error: { message: string } }).error.message, /loopback/);
  } finally {
    await strict.close();
  }
});

test('GET /health answers without a key', async (t) => {
  const response = await fetch(`${gateway.url}/health`);
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { status: 'ok' });
});

test('GET / redirects to the dashboard', async (t) => {
  const response = await fetch(`${gateway.url}/`, { redirect: 'manual' });
  t.is(response.status, 302);
  t.is(response.headers.get('location'), '/dashboard');
});

test('GET /admin/plugins needs the account key and lists providers with their manifests', async (t) => {
  const refusedResponse = await fetch(`${gateway.url}/admin/plugins`, { headers: { 'x-gateway-api-key': 'wrong' } });
  t.is(refusedResponse.status, 401);
  t.is(((await refusedResponse.json()) as { error: { type: string } }).error.type, 'authentication_error');
  const response = await fetch(`${gateway.url}/admin/plugins`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
  t.is(response.status, 200);
  const listing = (await response.json()) as { providers: Array<Record<string, unknown>>; guardrails: unknown[] };
  t.like(listing.providers[0], { id: 'openai', kind: 'provider', version: '1.0.0', name: 'OpenAI', operations: ['chat'] });
  t.deepEqual(listing.guardrails, []);
});

test('a generated account key is stored only as a hash and works', async (t) => {
  const { mkdtempSync, readFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-key-'));
  const fresh = await startGateway({}, { GATEWAY_API_KEY: '', GATEWAY_DATA_DIR: dataDir });
  try {
    const key = fresh.gateway.generatedAccountKey;
    t.truthy(key);
    const stored = readFileSync(join(dataDir, 'account-key.json'), 'utf8');
    t.false(stored.includes(key ?? '-'));
    t.regex(stored, /"sha256":"[0-9a-f]{64}"/);
    t.regex(stored, new RegExp(`"length":${key?.length}`), 'its length, so that values of another length are never hashed to be compared with it');
    const response = await fetch(`${fresh.url}/admin/plugins`, { headers: { 'x-gateway-api-key': key ?? '' } });
    t.is(response.status, 200);
  } finally {
    await fresh.close();
  }
  const again = await startGateway({}, { GATEWAY_API_KEY: '', GATEWAY_DATA_DIR: dataDir });
  t.is(again.gateway.generatedAccountKey, undefined, 'a second start reuses the stored hash and prints nothing');
  await again.close();
});

test.after('no log line of this file contains a secret', (t) => {
  for (const secret of SECRETS) t.false(gateway.rawLog().includes(secret));
});
