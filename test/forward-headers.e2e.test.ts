import { request as httpRequest } from 'node:http';
import test from 'ava';
import { anthropic } from '../plugins/providers/anthropic/index.js';
import { openai } from '../plugins/providers/openai/index.js';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from './harness.js';
import { createKey } from './vault/vault-harness.js';

// A loopback fake records the headers it receives; every request here is a pass-through GET, which
// sends the caller's forwarded headers and the provider's auth headers and nothing else.
const STORED_OPENAI_KEY = 'sk-stored-openai-credential-0123456789abcdef';
const STORED_ANTHROPIC_KEY = 'sk-ant-stored-credential-0123456789abcdef';
const CALLER_TOKEN = 'caller-chosen-token-0123456789';

let fake: Fake;
let gateway: TestGateway;
let openaiKey: string;
let anthropicKey: string;

const json = (body: unknown) => ({ method: 'POST', headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function storedKey(t: import('ava').ExecutionContext, provider: string, apiKey: string): Promise<string> {
  const credential = (await (await fetch(`${gateway.url}/admin/credentials`, json({ name: `${provider} stored`, provider, api_key: apiKey }))).json()) as { id: string };
  return (await createKey(t, gateway, { name: `${provider}-key`, provider, credential_id: credential.id, custom_host: fake.baseUrl })).key;
}

/** Sends a pass-through GET with a trace id in the query; returns the answer and what the fake received. */
async function send(headers: Record<string, string>, target = gateway) {
  const trace = traceId('forward');
  const response = await fetch(`${target.url}/v1/vector_stores?trace=${trace}`, { headers });
  const body = await response.text();
  const received = fake.requests.find((request) => request.url.includes(`trace=${trace}`));
  return { status: response.status, body: body ? JSON.parse(body) : undefined, received };
}

test.before(async () => {
  fake = await startFake((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
  });
  gateway = await startGateway({ providers: [openai(), anthropic()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test.serial('the stored credentials are created', async (t) => {
  openaiKey = await storedKey(t, 'openai', STORED_OPENAI_KEY);
  anthropicKey = await storedKey(t, 'anthropic', STORED_ANTHROPIC_KEY);
  t.pass();
});

for (const [label, name] of [
  ['authorization', 'authorization'],
  ['Authorization (any case)', ' Authorization '],
  ['openai-organization (set by the plugin’s auth)', 'openai-organization'],
] as const) {
  test.serial(`with a virtual key, forwarding ${label} is refused before anything is sent`, async (t) => {
    const { status, body, received } = await send({
      'x-gateway-api-key': openaiKey,
      authorization: `Bearer ${CALLER_TOKEN}`,
      'openai-organization': 'org-caller',
      'x-gateway-forward-headers': `openai-beta, ${name}`,
    });
    t.is(status, 400);
    t.like(body.error, { type: 'invalid_request_error', param: 'x-gateway-forward-headers', code: 'header_not_forwardable' });
    t.false(JSON.stringify(body).includes(STORED_OPENAI_KEY));
    t.is(received, undefined);
  });
}

test.serial("with a virtual key, forwarding the provider's own key header (anthropic x-api-key) is refused", async (t) => {
  const { status, body, received } = await send({ 'x-gateway-api-key': anthropicKey, 'x-api-key': CALLER_TOKEN, 'x-gateway-forward-headers': 'X-Api-Key' });
  t.is(status, 400);
  t.like(body.error, { param: 'x-gateway-forward-headers', code: 'header_not_forwardable' });
  t.is(received, undefined);
});

test.serial('with a virtual key, other forwarded headers pass and the stored credential is what the provider receives', async (t) => {
  const { status, received } = await send({ 'x-gateway-api-key': openaiKey, 'openai-beta': 'assistants=v2', 'x-gateway-forward-headers': 'openai-beta' });
  t.is(status, 200);
  t.is(received?.headers.authorization, `Bearer ${STORED_OPENAI_KEY}`);
  t.is(received?.headers['openai-beta'], 'assistants=v2');
});

test.serial("with a direct Bearer credential, a forwarded header cannot replace one the provider's auth set", async (t) => {
  const { status, received } = await send({
    'x-gateway-api-key': ACCOUNT_KEY,
    'x-gateway-provider': 'anthropic',
    'x-gateway-custom-host': fake.baseUrl,
    authorization: `Bearer ${PROVIDER_KEY}`,
    'x-api-key': CALLER_TOKEN,
    'anthropic-version': '1999-01-01',
    'x-gateway-forward-headers': 'x-api-key, anthropic-version',
  });
  t.is(status, 200);
  t.is(received?.headers['x-api-key'], PROVIDER_KEY);
  t.is(received?.headers['anthropic-version'], '2023-06-01');
});

test.serial('with no credential of its own the account caller may still forward its key header', async (t) => {
  const { status, received } = await send({
    'x-gateway-api-key': ACCOUNT_KEY,
    'x-gateway-provider': 'anthropic',
    'x-gateway-custom-host': fake.baseUrl,
    'x-api-key': CALLER_TOKEN,
    'x-gateway-forward-headers': 'x-api-key',
  });
  t.is(status, 200);
  t.is(received?.headers['x-api-key'], CALLER_TOKEN);
});

test.serial('cookie is never forwarded by default, with any key', async (t) => {
  for (const key of [ACCOUNT_KEY, openaiKey]) {
    const { status, body, received } = await send({
      'x-gateway-api-key': key,
      'x-gateway-provider': 'openai',
      ...(key === ACCOUNT_KEY ? { 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}` } : {}),
      cookie: 'gateway_session=secret-session-value',
      'x-gateway-forward-headers': 'cookie',
    });
    t.is(status, 400);
    t.like(body.error, { param: 'x-gateway-forward-headers', code: 'header_not_forwardable' });
    t.is(received, undefined);
  }
});

test.serial('forwardCookies: true lets cookie through', async (t) => {
  const allowing = await startGateway({ forwardCookies: true });
  try {
    const { status, received } = await send(
      {
        'x-gateway-api-key': ACCOUNT_KEY,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.baseUrl,
        authorization: `Bearer ${PROVIDER_KEY}`,
        cookie: 'upstream_pref=1',
        'x-gateway-forward-headers': 'cookie',
      },
      allowing,
    );
    t.is(status, 200);
    t.is(received?.headers.cookie, 'upstream_pref=1');
  } finally {
    await allowing.close();
  }
});

test.serial('expect is never forwarded: Expect: 100-continue named in x-gateway-forward-headers is a 400, not a 502 (fuzz finding)', async (t) => {
  // fetch refuses an Expect header itself, so this one goes through node:http.
  const trace = traceId('expect');
  const before = fake.requests.length;
  const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const request = httpRequest(`${gateway.url}/v1/files?trace=${trace}`, {
      headers: {
        'x-gateway-api-key': ACCOUNT_KEY,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.baseUrl,
        authorization: `Bearer ${PROVIDER_KEY}`,
        expect: '100-continue',
        'x-gateway-forward-headers': 'expect',
      },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    request.on('error', reject).end();
  });
  t.is(answer.status, 400);
  t.like(answer.body.error, { param: 'x-gateway-forward-headers', code: 'header_not_forwardable' });
  t.is(fake.requests.length, before);
});
