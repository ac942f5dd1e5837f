import { request as httpRequest } from 'node:http';
import test from 'ava';
import { pii } from '../../plugins/guardrails/index.js';
import { type Fake, openAIChatHandler, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { createKey } from '../vault/vault-harness.js';

// Issue 14, items 1 and 2: paths are refused or routed exactly as they will be sent upstream, a
// guarded key never reaches a provider unjudged, and a pinned base path cannot be escaped.

let fake: Fake;
let gateway: TestGateway;
const card = 'My card is 4111 1111 1111 1111, please remember it.';
const chatBody = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: card }] });

test.before(async () => {
  fake = await startFake((request, response) => {
    if (request.url.includes('chat/completions')) return openAIChatHandler(request, response);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: request.url }));
  });
  gateway = await startGateway({
    policies: {
      'pii-block': { input: [pii({ action: 'deny' })], output: [pii({ action: 'deny' })] },
      'pii-open': { input: [pii({ action: 'deny' })], passthrough: 'allow-unjudged' },
    },
  });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

/** Sends the path byte for byte (fetch would normalise it first). */
function send(path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${gateway.url}${path}`, { method: body === undefined ? 'GET' : 'POST', path, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, json: text ? JSON.parse(text) : undefined });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

const DOT_PATHS = [
  '/v1/x/%2e%2e/chat/completions',
  '/v1/x/%2E%2E/chat/completions',
  '/v1/x/%2e%2E/chat/completions',
  '/v1/x/.%2e/chat/completions',
  '/v1/x/%2e./chat/completions',
  '/v1/x/../chat/completions',
  '/v1/./chat/completions',
  '/v1/%2e/chat/completions',
  '/v1/x%2f..%2fchat/completions',
  '/v1/x/..%2Fchat/completions',
  '/v1/x%5c..%5cchat/completions',
  '/v1/x\\..\\chat/completions',
  '/v1/chat\\completions',
  '/v1//chat/completions',
  '/v1/chat/completions/..',
  '/v1/chat/completions/%2e',
  '/v1/x/%zz/chat',
];

test.serial('dot segments, encoded slashes and backslashes are 400 invalid_path, logged, and nothing is sent', async (t) => {
  const before = fake.requests.length;
  const headers = { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}` };
  for (const path of DOT_PATHS) {
    const answer = await send(path, headers, chatBody);
    t.is(answer.status, 400, path);
    t.is(answer.json?.error?.code, 'invalid_path', path);
    t.is(answer.json?.error?.type, 'invalid_request_error', path);
  }
  t.is(fake.requests.length, before, 'the provider saw none of them');
  const logged = await gateway.waitForEntries(DOT_PATHS.length);
  t.true(logged.filter((entry) => entry.status === 400).length >= DOT_PATHS.length, 'each refusal is logged');
});

test.serial('the issue-14 bypass: a pii-block key with /v1/x/%2e%2e/chat/completions never reaches the provider', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'dots', provider: 'openai', provider_key: 'sk-path-secret-0123456789', custom_host: fake.baseUrl, guardrail_policy: 'pii-block' });
  const before = fake.requests.length;
  const answer = await send('/v1/x/%2e%2e/chat/completions', { 'x-gateway-api-key': key }, chatBody);
  t.is(answer.status, 400);
  t.is(answer.json.error.code, 'invalid_path');
  // Encoded unreserved characters are decoded before routing: this is chat, and it is judged.
  const encoded = await send('/v1/chat/%63ompletions', { 'x-gateway-api-key': key }, chatBody);
  t.is(encoded.status, 400);
  t.is(encoded.json.error.code, 'guardrail_denied');
  t.is(fake.requests.length, before);
});

test.serial('a guarded key is refused pass-through (403 passthrough_not_judged) unless its policy allows unjudged', async (t) => {
  const guarded = await createKey(t, gateway, { name: 'guarded', provider: 'openai', provider_key: 'sk-path-secret-0123456789', custom_host: fake.baseUrl, guardrail_policy: 'pii-block' });
  const before = fake.requests.length;
  for (const path of ['/v1/batches', '/v1/files']) {
    const answer = await send(path, { 'x-gateway-api-key': guarded.key }, path === '/v1/files' ? undefined : JSON.stringify({ model: 'gpt-4o', input: card }));
    t.is(answer.status, 403, path);
    t.is(answer.json.error.code, 'passthrough_not_judged', path);
    t.is(answer.json.error.type, 'permission_error', path);
  }
  // The Messages API is a unified operation (issue 17): judged like chat, refused in its own error shape.
  const messages = await send('/v1/messages', { 'x-gateway-api-key': guarded.key }, JSON.stringify({ model: 'gpt-4o', max_tokens: 16, messages: [{ role: 'user', content: card }] }));
  t.is(messages.status, 400);
  t.deepEqual(messages.json, { type: 'error', error: { type: 'invalid_request_error', message: "The request was refused by the gateway's content policy." } });
  t.is(fake.requests.length, before);
  // The Responses API is a unified operation now: judged, so the card is refused like chat's.
  const judged = await send('/v1/responses', { 'x-gateway-api-key': guarded.key }, JSON.stringify({ model: 'gpt-4o', input: card }));
  t.is(judged.status, 400);
  t.is(judged.json.error.code, 'guardrail_denied');
  t.is(fake.requests.length, before);

  const open = await createKey(t, gateway, { name: 'open', provider: 'openai', provider_key: 'sk-path-secret-0123456789', custom_host: fake.baseUrl, guardrail_policy: 'pii-open' });
  const allowed = await send('/v1/files', { 'x-gateway-api-key': open.key });
  t.is(allowed.status, 200);
  t.is(allowed.json.path, '/v1/files');
  // No policy at all: pass-through works as before.
  const plain = await createKey(t, gateway, { name: 'plain', provider: 'openai', provider_key: 'sk-path-secret-0123456789', custom_host: fake.baseUrl });
  t.is((await send('/v1/files', { 'x-gateway-api-key': plain.key })).status, 200);
});

test.serial('the account key under a default policy is refused pass-through too', async (t) => {
  const guardedGateway = await startGateway({ policies: { strict: { input: [pii({ action: 'deny' })] } }, defaultPolicy: 'strict' });
  t.teardown(() => guardedGateway.close());
  const before = fake.requests.length;
  const answer = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(`${guardedGateway.url}/v1/files`, {
      headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}` },
    }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject).end();
  });
  t.is(answer, 403);
  t.is(fake.requests.length, before);
});

/** 30 hostile paths against a key pinned to /tenant-a/v1. */
const HOSTILE = [
  '/v1/%2e%2e/%2e%2e/tenant-b/v1/files',
  '/v1/../../tenant-b/v1/files',
  '/v1/%2E%2E/%2E%2E/tenant-b/v1/files',
  '/v1/.%2e/.%2e/tenant-b/v1/files',
  '/v1/%2e%2e%2f%2e%2e%2ftenant-b/v1/files',
  '/v1/..%2f..%2ftenant-b/v1/files',
  '/v1/..%5c..%5ctenant-b/v1/files',
  '/v1/..\\..\\tenant-b/v1/files',
  '/v1/files/../../../tenant-b/v1/files',
  '/v1/files/%2e%2e/%2e%2e/%2e%2e/tenant-b/v1/files',
  '/v1/./../tenant-b/v1/files',
  '/v1/%2e/%2e%2e/tenant-b',
  '/v1/files/..',
  '/v1/files/%2e%2e',
  '/v1/files/.',
  '/v1//..//tenant-b/v1/files',
  '/v1/files//../tenant-b',
  '/v1/%252e%252e/%252e%252e/tenant-b/v1/files',
  '/v1/%c0%ae%c0%ae/tenant-b/v1/files',
  '/v1/%u002e%u002e/tenant-b',
  '/v1/%2e%2e;/tenant-b/v1/files',
  '/v1/..;/..;/tenant-b/v1/files',
  '/v1/files%2f..%2f..%2ftenant-b',
  '/v1/files/%2e%2e%3f/tenant-b',
  '/v1/files/%2E./..%2E/tenant-b',
  '/v1/%2e%2e%5c%2e%2e%5ctenant-b/v1/files',
  '/v1/files/..%00/tenant-b',
  '/v1/files/%2e%2e%23/tenant-b',
  '/v1/files/\\../tenant-b',
  '/v1/files?x=/../../tenant-b',
];

test.serial('a key pinned to https://h/tenant-a/v1 never reaches a path outside it: 30 hostile paths', async (t) => {
  t.is(HOSTILE.length, 30);
  const { key } = await createKey(t, gateway, { name: 'tenant-a', provider: 'openai', provider_key: 'sk-tenant-a-secret-0123456789', custom_host: `${fake.origin}/tenant-a/v1` });
  const seenBefore = fake.requests.length;
  let forwarded = 0;
  for (const path of HOSTILE) {
    const answer = await send(path, { 'x-gateway-api-key': key });
    if (answer.status === 400) t.is(answer.json.error.code, 'invalid_path', path);
    else {
      t.is(answer.status, 200, path);
      forwarded++;
    }
  }
  const seen = fake.requests.slice(seenBefore).map((request) => request.url);
  t.is(seen.length, forwarded);
  t.true(forwarded > 0, 'harmless look-alikes are still forwarded');
  for (const url of seen) {
    t.true(url.startsWith('/tenant-a/v1/'), url);
    t.false(/\/(\.|%2e){1,2}(\/|\?|$)/i.test(url.split('?')[0]), url);
    t.false(new URL(url, 'http://h').pathname.replace(/^\/tenant-a\/v1\//, '').split('/').includes('..'), url);
  }
});
