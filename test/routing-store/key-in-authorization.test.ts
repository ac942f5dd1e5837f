import { request as httpRequest } from 'node:http';
import test from 'ava';
import OpenAI from 'openai';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, sdkClient, startGateway, type TestGateway } from '../harness.js';
import { admin, fixedUsageHandler } from '../vault/vault-harness.js';

// A tool that can only set a base URL and an API key: the virtual key travels as the Bearer token
// (or x-api-key / api-key) and is never taken for, nor sent as, the provider credential.

const STORED_SECRET = 'sk-stored-for-sdk-test-0123456789abcdef';
let fake: Fake;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({ server: { failedAuth: { perAddress: 3, global: 1000, windowMs: 60_000 } } });
  const created = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'sdk-key', provider: 'openai', provider_key: STORED_SECRET, custom_host: fake.baseUrl });
  key = created.json.key;
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const bareClient = (apiKey: string) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0, timeout: 10_000 });

test.serial('the official SDK with only baseURL and a virtual key as apiKey: chat works with the stored credential', async (t) => {
  const before = fake.requests.length;
  const completion = await bareClient(key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  t.is(completion.choices[0].message.content, 'ok');
  const upstream = fake.requests.slice(before);
  t.is(upstream.length, 1);
  t.is(upstream[0].headers.authorization, `Bearer ${STORED_SECRET}`, 'the provider got the stored credential, not the virtual key');
  t.false(JSON.stringify(upstream[0].headers).includes(key), 'the virtual key never goes upstream');
});

test.serial('the key in x-api-key or api-key works the same; the header is not forwarded', async (t) => {
  for (const header of ['x-api-key', 'api-key']) {
    const before = fake.requests.length;
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { [header]: key, 'content-type': 'application/json', 'x-gateway-forward-headers': header },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    t.is(response.status, 200, `${header}: ${await response.text()}`);
    t.false(JSON.stringify(fake.requests.slice(before)[0].headers).includes(key), `${header} not forwarded`);
  }
});

test.serial('a wrong vk- in Authorization is 401 invalid_api_key, and counts as a failed authentication (429 past the limit)', async (t) => {
  const before = fake.requests.length;
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    const error = await bareClient('vk-wrong-key-0123456789').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    t.true(error instanceof OpenAI.APIError);
    statuses.push((error as InstanceType<typeof OpenAI.APIError>).status ?? 0);
    if (attempt === 0) t.is((error as InstanceType<typeof OpenAI.APIError>).code, 'invalid_api_key');
  }
  t.deepEqual(statuses, [401, 401, 401, 429]);
  t.is(fake.requests.length, before, 'nothing went upstream');
});

test.serial('a wrong key in Authorization is refused before the body is read', async (t) => {
  const status = await new Promise<number>((resolve, reject) => {
    const outgoing = httpRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer vk-another-wrong-key', 'content-type': 'application/json', 'content-length': '100000', 'x-forwarded-for': '10.0.0.9' },
    });
    outgoing.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
      outgoing.destroy();
    });
    outgoing.on('error', reject);
    outgoing.flushHeaders(); // headers only: the body never comes
  });
  t.true(status === 401 || status === 429, `got ${status}`);
});

test.serial('the account key as Bearer identifies the account; a provider Bearer with x-gateway-api-key still goes upstream as before', async (t) => {
  const asAccount = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ACCOUNT_KEY}`, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(asAccount.status, 200);
  t.is(fake.requests.at(-1)?.headers.authorization, undefined, 'the account key is not sent upstream');

  const completion = await sdkClient(gateway.url, fake.baseUrl).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  t.is(completion.choices[0].message.content, 'ok');
  t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${PROVIDER_KEY}`);

  const providerOnly = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-provider': 'openai', 'content-type': 'application/json' },
    body: '{}',
  });
  t.is(providerOnly.status, 401, 'a provider token alone is not a gateway key');
  t.is(((await providerOnly.json()) as { error: { code: string } }).error.code, 'missing_api_key');
});
