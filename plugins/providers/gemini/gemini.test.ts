import test from 'ava';
import type { ChatRequest, EmbeddingRequest, ProviderTarget } from '../../../core/spec/index.js';
import { providerFixture } from '../../../test/fakes/stream-fuzz.js';
import { gemini } from './index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

const target: ProviderTarget = { baseUrl: 'https://generativelanguage.googleapis.com/v1beta', customHost: false, headers: {}, credentials: { apiKey: 'AIza-test' }, strict: true };
const plugin = gemini().create(pluginDependencies());
const chat: ChatRequest = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] };
const embedding: EmbeddingRequest = { model: 'gemini-embedding-001', input: ['first', 'second'], dimensions: 4 };

test('chat goes to generateContent, streams to streamGenerateContent?alt=sse, with the key in x-goog-api-key', (t) => {
  const plain = plugin.operations.chat!.toUpstream(chat, target);
  t.is(plain.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
  t.deepEqual(JSON.parse(String(plain.body)), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  t.is(plugin.operations.chat!.toUpstream({ ...chat, model: 'models/gemini-2.5-pro', stream: true }, target).url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  t.deepEqual(plugin.auth(plain, target), { 'x-goog-api-key': 'AIza-test' });
  t.deepEqual(plugin.auth(plain, { ...target, credentials: {} }), {});
  t.is(plugin.baseUrl({}), 'https://generativelanguage.googleapis.com/v1beta');
  t.is(gemini({ baseUrl: 'http://127.0.0.1:1/v1beta/' }).create(pluginDependencies()).baseUrl({}), 'http://127.0.0.1:1/v1beta');
  t.false(plugin.capabilities!.developerRole!('gemini-2.5-flash'));
});

test('embeddings go to batchEmbedContents, one request per input, with the output dimensionality', (t) => {
  const upstream = plugin.operations.embed!.toUpstream(embedding, target);
  t.is(upstream.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents');
  t.deepEqual(JSON.parse(String(upstream.body)), {
    requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'first' }] }, outputDimensionality: 4 },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'second' }] }, outputDimensionality: 4 },
    ],
  });
  const single = JSON.parse(String(plugin.operations.embed!.toUpstream({ model: 'text-embedding-004', input: 'one' }, target).body));
  t.deepEqual(single, { requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'one' }] } }] });
});

test('token-array inputs are refused with param input', (t) => {
  t.like(t.throws(() => plugin.operations.embed!.validate!({ model: 'm', input: [1, 2, 3] })), {
    status: 400,
    body: { param: 'input', message: 'This provider embeds text only: send a string or an array of strings, not token arrays.', code: 'invalid_value' },
  });
  const error = t.throws(() => plugin.operations.embed!.toUpstream({ model: 'm', input: [[1, 2]] }, target)) as unknown as { status: number; body: { param: string } };
  t.is(error.status, 400);
  t.is(error.body.param, 'input');
});

test('the batch answer maps to the OpenAI list, as floats or base64 float32', (t) => {
  const body = JSON.parse(providerFixture('gemini', 'embed-batch.json'));
  const response = plugin.operations.embed!.fromUpstream(body, embedding, target);
  t.deepEqual(response, {
    object: 'list',
    data: [
      { object: 'embedding', index: 0, embedding: [0.013168523, -0.008711934, -0.046782676, 0.00069968984] },
      { object: 'embedding', index: 1, embedding: [0.25, -0.5, 0.125, 1] },
    ],
    model: 'gemini-embedding-001',
    usage: { prompt_tokens: 0, total_tokens: 0 },
  });
  const encoded = plugin.operations.embed!.fromUpstream(body, { ...embedding, encoding_format: 'base64' }, target);
  const bytes = Buffer.from(encoded.data[1].embedding as string, 'base64');
  t.deepEqual([...new Float32Array(bytes.buffer, bytes.byteOffset, 4)], [0.25, -0.5, 0.125, 1]);
  t.throws(() => plugin.operations.embed!.fromUpstream({ predictions: [] }, embedding, target));
});
