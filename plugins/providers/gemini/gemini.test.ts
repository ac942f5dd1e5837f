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

test('the Gemini API natively: the client body without the gateway\'s model and stream fields, to the model\'s method; countTokens names the model', (t) => {
  const adapter = plugin.operations.generateContent!;
  const request = { model: 'gemini-2.5-flash', stream: 'sse' as const, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }] };
  const streamed = adapter.toUpstream(request, target);
  t.is(streamed.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  t.deepEqual(JSON.parse(String(streamed.body)), { contents: request.contents, safetySettings: request.safetySettings });
  const { stream: _stream, ...plain } = request;
  t.is(adapter.toUpstream(plain, target).url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
  const count = adapter.countTokens!.toUpstream(plain, target);
  t.is(count.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:countTokens');
  t.deepEqual(JSON.parse(String(count.body)), { generateContentRequest: { model: 'models/gemini-2.5-flash', contents: request.contents, safetySettings: request.safetySettings } });
  t.throws(() => adapter.countTokens!.fromUpstream({ tokens: 3 }, plain, target));
});

test('the native stream mapper ends the stream once every candidate finished, or the prompt was blocked; an error event is Google\'s error', (t) => {
  const mapper = () => plugin.operations.generateContent!.stream!.createMapper({ model: 'm', contents: [], generationConfig: { candidateCount: 2 } }, target);
  const two = mapper();
  const piece = (index: number, finishReason?: string) => JSON.stringify({ candidates: [{ index, content: { role: 'model', parts: [{ text: 'x' }] }, ...(finishReason ? { finishReason } : {}) }] });
  t.falsy(two.map({ data: piece(0, 'STOP') }).done);
  t.true(two.map({ data: piece(1, 'MAX_TOKENS') }).done);
  t.true(mapper().map({ data: JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } }) }).done);
  t.like(mapper().map({ data: JSON.stringify({ error: { code: 429, message: 'Quota', status: 'RESOURCE_EXHAUSTED' } }) }).error, { message: 'Quota', code: 'RESOURCE_EXHAUSTED' });
});

test('the model list: Google\'s models/{id} names as ids, display names and methods kept', (t) => {
  const models = plugin.operations.models!;
  t.is(models.toUpstream(target).url, 'https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000');
  const list = models.fromUpstream({ models: [{ name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', supportedGenerationMethods: ['generateContent'] }] }, target);
  t.deepEqual(list, { object: 'list', data: [{ id: 'gemini-2.5-flash', object: 'model', created: 0, owned_by: 'google', display_name: 'Gemini 2.5 Flash', supported_generation_methods: ['generateContent'] }] });
  t.throws(() => models.fromUpstream({ data: [] }, target));
});
