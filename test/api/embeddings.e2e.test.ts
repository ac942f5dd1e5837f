import test from 'ava';
import { base64Embedding, openAIFixture, openAIHandler } from '../fakes/openai-fake.js';
import { loggedOnce } from '../harness.js';
import { type ApiSetup, startApi } from './api-setup.js';

let api: ApiSetup;
const vector: number[] = JSON.parse(openAIFixture('embedding.json')).data[0].embedding;

test.before(async () => {
  api = await startApi((request, response) => {
    if (request.headers['x-scenario'] === 'extras') {
      const body = JSON.parse(openAIFixture('embedding.json'));
      body.data[0].extra = 1;
      body.usage.extra_tokens = 3;
      body.provider_id = 'p';
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (request.headers['x-scenario'] === 'rate-limited') {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' }).end(openAIFixture('error-429.json'));
      return;
    }
    return openAIHandler(request, response);
  });
});

test.after.always(async () => {
  await api?.close();
});

test('float embeddings: the request goes up as sent, vectors and usage come back, usage is logged', async (t) => {
  const { client, trace } = api.client('emb-float');
  const params = { model: 'text-embedding-3-small', input: 'The food was delicious', encoding_format: 'float' as const, dimensions: 4, user: 'u-2' };
  const result = await client.embeddings.create(params);
  t.deepEqual(api.received(trace).json(), params);
  t.is(result.object, 'list');
  t.deepEqual(result.data, [{ object: 'embedding', index: 0, embedding: vector.slice(0, 4) }]);
  t.deepEqual(result.usage, { prompt_tokens: 8, total_tokens: 8 });
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'embed', status: 200, outcome: 'ok', model: 'text-embedding-3-small' });
  t.deepEqual(entry.usage, { promptTokens: 8, completionTokens: 0, totalTokens: 8 });
});

test('base64 embeddings asked for explicitly come back as the provider encoded them', async (t) => {
  const { client, trace } = api.client('emb-b64');
  const result = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two', 'three'], encoding_format: 'base64' });
  t.is(api.received(trace).json().encoding_format, 'base64');
  t.is(result.data.length, 3);
  for (const [index, item] of result.data.entries()) {
    t.is(item.index, index);
    t.is(item.embedding as unknown, base64Embedding(vector));
  }
});

test("the SDK's default (base64 on the wire, floats for the caller) round-trips through the gateway", async (t) => {
  const { client, trace } = api.client('emb-default');
  const result = await client.embeddings.create({ model: 'text-embedding-ada-002', input: [[1212, 318], [257, 1332]] });
  t.is(api.received(trace).json().encoding_format, 'base64');
  t.deepEqual(api.received(trace).json().input, [[1212, 318], [257, 1332]]);
  t.deepEqual(result.data[1].embedding, Array.from(new Float32Array(vector)));
});

test('a text-embedding-ada-002 input longer in bytes than 8192 but within 8192 tokens is sent', async (t) => {
  const { client, trace } = api.client('emb-long-ok');
  const input = 'hello '.repeat(2000); // 12000 bytes, about 2000 tokens
  await client.embeddings.create({ model: 'text-embedding-ada-002', input, encoding_format: 'float' });
  t.is(api.received(trace).json().input, input);
});

test('exactly 8192 token ids and 2048 inputs are accepted', async (t) => {
  const tokens = Array.from({ length: 8192 }, (_, index) => index % 50000);
  const first = api.client('emb-8192');
  await first.client.embeddings.create({ model: 'text-embedding-ada-002', input: tokens, encoding_format: 'float' });
  t.is(api.received(first.trace).json().input.length, 8192);
  const second = api.client('emb-2048');
  const result = await second.client.embeddings.create({ model: 'text-embedding-3-large', input: Array.from({ length: 2048 }, (_, index) => `text ${index}`), encoding_format: 'float' });
  t.is(result.data.length, 2048);
});

test('strict compliance strips fields outside the embedding schema; false keeps them', async (t) => {
  const strict = await api.client('emb-strict', { 'x-scenario': 'extras' }).client.embeddings.create({ model: 'm', input: 'x', encoding_format: 'float' });
  t.deepEqual(strict, JSON.parse(openAIFixture('embedding.json')));
  const loose = await api
    .client('emb-loose', { 'x-scenario': 'extras', 'x-gateway-strict-api-compliance': 'false' })
    .client.embeddings.create({ model: 'm', input: 'x', encoding_format: 'float' });
  t.is((loose as any).provider_id, 'p');
  t.is((loose.data[0] as any).extra, 1);
  t.is((loose.usage as any).extra_tokens, 3);
});

test('an upstream 429 on embeddings keeps its status, Retry-After and OpenAI-shaped body', async (t) => {
  const { client, trace } = api.client('emb-429', { 'x-scenario': 'rate-limited' });
  const error: any = await t.throwsAsync(client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }));
  t.is(error.status, 429);
  t.is(error.headers.get('retry-after'), '7');
  t.is(error.code, 'rate_limit_exceeded');
  t.like(await loggedOnce(api.gateway, trace), { operation: 'embed', status: 429, outcome: 'error' });
});
