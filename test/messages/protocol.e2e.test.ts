import Anthropic from '@anthropic-ai/sdk';
import test from 'ava';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { startMessagesFake } from '../fakes/messages-fake.js';
import { startRenderedFake } from '../fakes/rendered-fake.js';
import { ACCOUNT_KEY, loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { createKey } from '../vault/vault-harness.js';
import { PDF_BASE64, PNG_BASE64, postMessages } from './helpers.js';

/** The Messages routes as clients meet them: keys, limits, validation, count_tokens, metrics. */

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({
    providers: [openai(), anthropic()],
    pricing: { models: { anthropic: { 'claude-opus-4-7': { input: 5, output: 25 } }, openai: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } } } },
  });
});
test.after.always(() => gateway.close());

const STORED_KEY = 'sk-ant-stored-secret-0123456789';

test('the gateway key in x-api-key (apiKey) or as the Bearer token (authToken) works, as Anthropic clients send it', async (t) => {
  const fake = await startMessagesFake('sse');
  t.teardown(() => fake.close());
  fake.answer({ content: [{ type: 'text', text: 'hi' }] });
  const { key } = await createKey(t, gateway, { name: 'claude-code', provider: 'anthropic', provider_key: STORED_KEY, custom_host: fake.baseUrl });
  const request = { model: 'claude-opus-4-7', max_tokens: 16, messages: [{ role: 'user' as const, content: 'Hello' }] };
  for (const client of [
    new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 }),
    new Anthropic({ authToken: key, baseURL: gateway.url, maxRetries: 0 }),
  ]) {
    const message = await client.messages.create(request);
    t.deepEqual(message.content as unknown, [{ type: 'text', text: 'hi' }]);
  }
  t.is(fake.requests.length, 2);
  for (const received of fake.requests) {
    t.is(received.headers['x-api-key'], STORED_KEY, 'the stored credential goes upstream');
    t.is(received.headers.authorization, undefined);
    t.false(JSON.stringify(received.headers).includes(key), 'the gateway key is never forwarded');
  }
});

test('a missing or wrong key is 401 in the Messages error shape', async (t) => {
  const missing = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.is(missing.status, 401);
  t.like(await missing.json(), { type: 'error', error: { type: 'authentication_error' } });
  const error = await t.throwsAsync(new Anthropic({ apiKey: 'vk-not-a-key-0000000000000000', baseURL: gateway.url, maxRetries: 0 }).messages.create({ model: 'x', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }));
  t.true(error instanceof Anthropic.AuthenticationError);
});

test('budgets and costs apply as on chat: the answer is priced and logged, a request over budget is 403 permission_error', async (t) => {
  const fake = await startMessagesFake('sse');
  t.teardown(() => fake.close());
  fake.answer({ content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 100, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  const { key } = await createKey(t, gateway, { name: 'budgeted-messages', provider: 'anthropic', provider_key: STORED_KEY, custom_host: fake.baseUrl, limits: { budget_usd: 0.01 } });
  const client = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0, timeout: 10_000 });
  const id = traceId('messages-cost');
  await client.messages.create({ model: 'claude-opus-4-7', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }, { headers: { 'x-gateway-trace-id': id } });
  const entry = await loggedOnce(gateway, id);
  // 100 × 5 / 1e6 + 40 × 25 / 1e6 = 0.0015 USD
  t.is(Math.round((entry.costUsd ?? 0) * 1e9), 1_500_000);
  t.like(entry, { operation: 'messages', keyName: 'budgeted-messages' });

  const refused = await t.throwsAsync(client.messages.create({ model: 'claude-opus-4-7', max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Hello' }] }));
  t.true(refused instanceof Anthropic.PermissionDeniedError);
  t.regex((refused as Error).message, /budget/i);
  t.is(fake.requests.length, 1);
});

const headers = (fake: { baseUrl: string }) => ({ 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl });

/** Bad bodies: each is a 400 in Anthropic's shape whose message names the field. */
const BAD: Array<[label: string, body: unknown, param: string]> = [
  ['no max_tokens', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, 'max_tokens'],
  ['max_tokens 0', { model: 'gpt-4o-mini', max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] }, 'max_tokens'],
  ['no model', { max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, 'model'],
  ['empty messages', { model: 'm', max_tokens: 5, messages: [] }, 'messages'],
  ['a tool role', { model: 'm', max_tokens: 5, messages: [{ role: 'tool', content: 'hi' }] }, 'messages[0].role'],
  ['content a number', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
  ['a block without type', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }, 'messages[0].content[0].type'],
  ['an image without source', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image' }] }] }, 'messages[0].content[0].source'],
  ['a BMP image', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AA==' } }] }] }, 'messages[0].content[0].source.media_type'],
  ['a non-PDF document', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'text/html', data: 'AA==' } }] }] }, 'messages[0].content[0].source.media_type'],
  ['tool_use from the user', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }, 'messages[0].content[0].type'],
  ['tool_use without input', { model: 'm', max_tokens: 5, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'b' }] }] }, 'messages[0].content[0].input'],
  ['tool_result without id', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages[0].content[0].tool_use_id'],
  ['thinking without signature', { model: 'm', max_tokens: 5, messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }] }, 'messages[0].content[0].signature'],
  ['system with an image', { model: 'm', max_tokens: 5, system: [{ type: 'image', source: { type: 'url', url: 'https://x' } }], messages: [{ role: 'user', content: 'hi' }] }, 'system[0].type'],
  ['a tool without input_schema', { model: 'm', max_tokens: 5, tools: [{ name: 'get' }], messages: [{ role: 'user', content: 'hi' }] }, 'tools[0].input_schema'],
  ['a tool name with spaces', { model: 'm', max_tokens: 5, tools: [{ name: 'get it', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'hi' }] }, 'tools[0].name'],
  ['tool_choice naming no tool', { model: 'm', max_tokens: 5, tools: [{ name: 'get', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'put' }, messages: [{ role: 'user', content: 'hi' }] }, 'tool_choice.name'],
  ['tool_choice of an unknown type', { model: 'm', max_tokens: 5, tool_choice: { type: 'required' }, messages: [{ role: 'user', content: 'hi' }] }, 'tool_choice.type'],
  ['thinking without a budget', { model: 'm', max_tokens: 5, thinking: { type: 'enabled' }, messages: [{ role: 'user', content: 'hi' }] }, 'thinking.budget_tokens'],
  ['a thinking budget under 1024', { model: 'm', max_tokens: 5, thinking: { type: 'enabled', budget_tokens: 100 }, messages: [{ role: 'user', content: 'hi' }] }, 'thinking.budget_tokens'],
  ['an unknown thinking type', { model: 'm', max_tokens: 5, thinking: { type: 'deep' }, messages: [{ role: 'user', content: 'hi' }] }, 'thinking.type'],
  ['temperature over 1', { model: 'm', max_tokens: 5, temperature: 1.5, messages: [{ role: 'user', content: 'hi' }] }, 'temperature'],
  ['top_k negative', { model: 'm', max_tokens: 5, top_k: -1, messages: [{ role: 'user', content: 'hi' }] }, 'top_k'],
  ['stop_sequences a string', { model: 'm', max_tokens: 5, stop_sequences: 'END', messages: [{ role: 'user', content: 'hi' }] }, 'stop_sequences'],
  ['metadata.user_id a number', { model: 'm', max_tokens: 5, metadata: { user_id: 5 }, messages: [{ role: 'user', content: 'hi' }] }, 'metadata.user_id'],
  ['stream a string', { model: 'm', max_tokens: 5, stream: 'yes', messages: [{ role: 'user', content: 'hi' }] }, 'stream'],
  ['output_config a string', { model: 'm', max_tokens: 5, output_config: 'json', messages: [{ role: 'user', content: 'hi' }] }, 'output_config'],
];

test('bad bodies are 400 invalid_request_error in the Messages shape, naming the field, and nothing goes upstream', async (t) => {
  const fake = await startRenderedFake(openaiFake);
  t.teardown(() => fake.close());
  for (const [label, body, param] of BAD) {
    const response = await postMessages(gateway.url, body, headers(fake));
    t.is(response.status, 400, label);
    const answer = (await response.json()) as { type: string; error: { type: string; message: string } };
    t.deepEqual(Object.keys(answer), ['type', 'error'], label);
    t.is(answer.type, 'error', label);
    t.is(answer.error.type, 'invalid_request_error', label);
    t.true(answer.error.message.includes(`'${param}'`), `${label}: ${answer.error.message}`);
  }
  const notJson = await postMessages(gateway.url, '{"model": ', headers(fake));
  t.is(notJson.status, 400);
  t.like(await notJson.json(), { type: 'error', error: { type: 'invalid_request_error' } });
  const badCount = await postMessages(gateway.url, { model: 'm' }, headers(fake), '/v1/messages/count_tokens');
  t.is(badCount.status, 400);
  t.regex(((await badCount.json()) as { error: { message: string } }).error.message, /'messages'/);
  t.is(fake.requests.length, 0);
});

test('a document the provider could never read (a URL) is a 400 naming the provider and the field', async (t) => {
  const fake = await startRenderedFake(openaiFake);
  t.teardown(() => fake.close());
  const response = await postMessages(
    gateway.url,
    { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }] },
    headers(fake),
  );
  t.is(response.status, 400);
  const answer = (await response.json()) as { error: { message: string } };
  t.regex(answer.error.message, /"openai" cannot read a document given by URL/);
  t.is(fake.requests.length, 0);
});

test('count_tokens is estimated for a provider without a native counter, without calling it, and logged', async (t) => {
  const fake = await startRenderedFake(openaiFake);
  t.teardown(() => fake.close());
  const client = new Anthropic({ authToken: 'sk-provider', baseURL: gateway.url, maxRetries: 0, defaultHeaders: headers(fake) });
  const id = traceId('messages-count');
  const text = await client.messages.countTokens({ model: 'gpt-4o-mini', system: 'You are terse.', messages: [{ role: 'user', content: 'Hello there, how are you today?' }] }, { headers: { 'x-gateway-trace-id': id } });
  // o200k_base: "You are terse." is 4 tokens, the question 8; 3 per message.
  t.is(text.input_tokens, 4 + 8 + 3);
  const withFiles = await client.messages.countTokens({
    model: 'gpt-4o-mini',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } },
        ],
      },
    ],
  });
  // A 1×1 PNG is one token; a one-page PDF 2,000; plus the message's 3.
  t.is(withFiles.input_tokens, 1 + 2000 + 3);
  t.is(fake.requests.length, 0);
  const entry = await loggedOnce(gateway, id);
  t.like(entry, { operation: 'messagesCountTokens', status: 200, path: '/v1/messages/count_tokens' });
});

test('metrics count Messages requests under operation="messages"', async (t) => {
  const fake = await startRenderedFake(openaiFake);
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'ok', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } });
  const response = await postMessages(gateway.url, { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, headers(fake));
  t.is(response.status, 200);
  await response.arrayBuffer();
  await gateway.waitForEntries(1);
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  t.regex(metrics, /gateway_requests_total\{[^}]*operation="messages"[^}]*\} \d+/);
});

test('a route may fall back from a native provider to a translated one: each attempt picks its own path', async (t) => {
  const claude = await startMessagesFake('sse');
  const fallback = await startRenderedFake(openaiFake);
  t.teardown(async () => {
    await claude.close();
    await fallback.close();
  });
  claude.answer({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
  fallback.answer({ kind: 'text', text: 'From the fallback.', finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 4 } });
  const route = {
    strategy: { mode: 'fallback' },
    targets: [
      { name: 'claude', provider: 'anthropic', custom_host: claude.baseUrl },
      { name: 'openai', provider: 'openai', custom_host: fallback.baseUrl, override_params: { model: 'gpt-4o-mini' } },
    ],
  };
  const id = traceId('messages-route');
  const response = await postMessages(
    gateway.url,
    { model: 'claude-opus-4-7', max_tokens: 32, top_k: 4, messages: [{ role: 'user', content: 'Hi' }] },
    { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-config': JSON.stringify(route), 'x-gateway-trace-id': id },
  );
  t.is(response.status, 200);
  t.is(response.headers.get('x-gateway-route-target'), 'openai');
  const message = (await response.json()) as { content: unknown; type: string };
  t.is(message.type, 'message');
  t.deepEqual(message.content, [{ type: 'text', text: 'From the fallback.' }]);
  t.like(claude.body(0), { model: 'claude-opus-4-7', top_k: 4 }, 'the native attempt got the Messages body as sent');
  t.like(fallback.body(0), { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
  t.false('top_k' in fallback.body(0));
  const entry = await loggedOnce(gateway, id);
  t.deepEqual(entry.attempts?.map((attempt) => `${attempt.provider}:${attempt.status}`), ['anthropic:529', 'openai:200']);
  t.deepEqual(entry.droppedFields, ['top_k'], "the answering attempt's dropped fields");
});
