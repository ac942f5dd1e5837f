import test from 'ava';
import { SseDecoder } from '../../../core/http/sse.js';
import { GatewayError } from '../../../core/errors.js';
import type { ChatCompletionChunk, ChatRequest, ChatResponse, EmbeddingResponse, ProviderTarget, UpstreamReply } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { mapCloudflareError } from './cloudflare-error.js';
import { cloudflareFixture, FAKE_ACCOUNT } from './cloudflare-workers-ai-fake.js';
import { cloudflareWorkersAI } from './index.js';

const BASE = 'https://api.cloudflare.com/client/v4';
const target = (headers: Record<string, string> = { 'x-gateway-cloudflare-account-id': FAKE_ACCOUNT }): ProviderTarget => ({
  baseUrl: BASE,
  customHost: false,
  headers,
  credentials: { apiKey: 'cf-token' },
  strict: true,
});
const request: ChatRequest = { model: '@cf/meta/llama-3.1-8b-instruct', messages: [{ role: 'user', content: 'Make some robot noises' }] };
const plugin = (params: Parameters<typeof cloudflareWorkersAI>[0] = {}) => cloudflareWorkersAI(params).create(pluginDependencies());
const reply = (status: number, name: string): UpstreamReply => ({ status, headers: { 'content-type': 'application/json' }, body: Buffer.from(cloudflareFixture(name)) });

test("chat and embeddings go to the account's OpenAI-compatible endpoints, the token as Bearer", (t) => {
  const { operations, auth, baseUrl } = plugin();
  t.is(baseUrl({}), BASE);
  const chat = operations.chat!.toUpstream(request, target());
  t.is(chat.url, `${BASE}/accounts/${FAKE_ACCOUNT}/ai/v1/chat/completions`);
  t.is(chat.method, 'POST');
  t.like(JSON.parse(String(chat.body)), { model: '@cf/meta/llama-3.1-8b-instruct', messages: [{ role: 'user', content: 'Make some robot noises' }] });
  const embed = operations.embed!.toUpstream({ model: '@cf/baai/bge-large-en-v1.5', input: 'I love matcha' }, target());
  t.is(embed.url, `${BASE}/accounts/${FAKE_ACCOUNT}/ai/v1/embeddings`);
  t.deepEqual(auth(chat, target()), { authorization: 'Bearer cf-token' });
});

test('the account comes from the header, else the accountId param; the header wins', (t) => {
  const other = 'fedcba9876543210fedcba9876543210';
  const withParam = plugin({ accountId: other });
  t.is(withParam.operations.chat!.toUpstream(request, target({})).url, `${BASE}/accounts/${other}/ai/v1/chat/completions`);
  t.is(withParam.operations.chat!.toUpstream(request, target()).url, `${BASE}/accounts/${FAKE_ACCOUNT}/ai/v1/chat/completions`);
});

test('no account, or a malformed one, is a 400 naming the header before anything is sent', (t) => {
  const missing = t.throws(() => plugin().operations.chat!.toUpstream(request, target({})), { instanceOf: GatewayError }) as GatewayError;
  t.like(missing.body, { param: 'x-gateway-cloudflare-account-id', code: 'missing_required_header' });
  t.is(missing.status, 400);
  const bad = t.throws(() => plugin().operations.embed!.toUpstream({ model: 'm', input: 'x' }, target({ 'x-gateway-cloudflare-account-id': '../../zones' })), { instanceOf: GatewayError }) as GatewayError;
  t.like(bad.body, { param: 'x-gateway-cloudflare-account-id', code: 'invalid_header' });
});

test('no token is a 401 naming the missing credential', (t) => {
  const error = t.throws(() => plugin().auth({ method: 'POST', url: BASE, headers: {} }, { ...target(), credentials: {} }), { instanceOf: GatewayError }) as GatewayError;
  t.is(error.status, 401);
  t.like(error.body, { code: 'missing_provider_credentials' });
});

test('pass-through: /run/<model> reaches the native run API, anything else the compatible root', (t) => {
  const { passthroughUrl } = plugin();
  t.is(passthroughUrl!('/run/@cf/meta/llama-3.1-8b-instruct', target()), `${BASE}/accounts/${FAKE_ACCOUNT}/ai/run/@cf/meta/llama-3.1-8b-instruct`);
  t.is(passthroughUrl!('/responses', target()), `${BASE}/accounts/${FAKE_ACCOUNT}/ai/v1/responses`);
});

test('n > 1 is refused naming n', (t) => {
  const error = t.throws(() => plugin().operations.chat!.validate!({ ...request, n: 2 }), { instanceOf: GatewayError }) as GatewayError;
  t.like(error.body, { param: 'n' });
});

test('the recorded answers map: chat, its stream, embeddings', (t) => {
  const { operations } = plugin();
  const answer = operations.chat!.fromUpstream(JSON.parse(cloudflareFixture('chat-response-text.json')), request, target()) as ChatResponse;
  t.is(answer.choices[0].message.content, 'Beep boop, whirr.');
  t.deepEqual(answer.usage, { prompt_tokens: 14, completion_tokens: 6, total_tokens: 20 });

  const mapper = operations.chat!.stream!.createMapper({ ...request, stream: true }, target());
  const decoder = new SseDecoder();
  const sse = cloudflareFixture('chat-stream-text.txt').split('\n').filter(Boolean).map((line) => `data: ${line}\n\n`).join('') + 'data: [DONE]\n\n';
  const steps = [...decoder.push(Buffer.from(sse)), ...decoder.end()].map((event) => mapper.map(event));
  const chunks = steps.flatMap((step) => (step.chunks ?? []) as ChatCompletionChunk[]);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Beep boop');
  t.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 14, completion_tokens: 2, total_tokens: 16 });
  t.true(steps.at(-1)?.done);

  const vectors = operations.embed!.fromUpstream(JSON.parse(cloudflareFixture('embed-response.json')), { model: '@cf/baai/bge-large-en-v1.5', input: 'I love matcha' }, target()) as EmbeddingResponse;
  t.deepEqual(vectors.data[0].embedding, [0.0123, -0.0456, 0.0789]);
  t.is(vectors.usage.prompt_tokens, 5);
});

test("Cloudflare's error envelope keeps the message and the internal code; the status names the type", (t) => {
  t.deepEqual(mapCloudflareError(reply(400, 'error-400.json')), {
    message: 'No such model @cf/meta/llama-9-nonexistent or task',
    type: 'invalid_request_error',
    param: null,
    code: '5007',
  });
  t.like(mapCloudflareError(reply(429, 'error-429.json')), { type: 'rate_limit_error', code: '3036' });
  t.like(mapCloudflareError(reply(404, 'error-404-route.json')), { message: 'No route for the URI', code: '7003' });
  // An OpenAI-shaped error and a proxy's page are read too.
  t.like(mapCloudflareError({ status: 400, headers: {}, body: Buffer.from('{"error":{"message":"bad","type":"invalid_request_error"}}') }), { message: 'bad' });
  t.regex(mapCloudflareError({ status: 502, headers: {}, body: Buffer.from('<html>Bad gateway</html>') }).message, /HTTP 502/);
});
