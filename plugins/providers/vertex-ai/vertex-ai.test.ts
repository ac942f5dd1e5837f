import test from 'ava';
import type { ChatRequest, ProviderTarget } from '../../../core/spec/index.js';
import { fixtureLines, providerFixture } from '../../../test/fakes/stream-fuzz.js';
import { vertexAI } from './index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

const headers = { 'x-gateway-cloud-b-project-id': 'my-project', 'x-gateway-cloud-b-region': 'us-east5', 'x-cloud-b-llm-request-type': 'dedicated' };
const target: ProviderTarget = { baseUrl: 'https://us-east5-aiplatform.googleapis.com/v1', customHost: false, headers, credentials: { apiKey: 'ya29.token' }, strict: true };
const plugin = vertexAI().create(pluginDependencies());
const chat = plugin.operations.chat!;
const gemini: ChatRequest = { model: 'gemini-2.5-flash', messages: [{ role: 'system', content: 'Brief.' }, { role: 'user', content: 'hi' }] };
const claude: ChatRequest = { model: 'claude-sonnet-4-5@20250929', messages: [{ role: 'system', content: 'Brief.' }, { role: 'user', content: 'hi' }] };

test('the base URL is regional (global without prefix) and a missing region is a 400 naming the header', (t) => {
  t.is(plugin.baseUrl(headers), 'https://us-east5-aiplatform.googleapis.com/v1');
  t.is(plugin.baseUrl({ ...headers, 'x-gateway-cloud-b-region': 'global' }), 'https://aiplatform.googleapis.com/v1');
  const error = t.throws(() => plugin.baseUrl({})) as unknown as { status: number; body: { param: string } };
  t.is(error.status, 400);
  t.is(error.body.param, 'x-gateway-cloud-b-region');
  const bad = t.throws(() => plugin.baseUrl({ 'x-gateway-cloud-b-region': 'us/../evil' })) as unknown as { status: number };
  t.is(bad.status, 400);
});

test('Gemini models use generateContent / streamGenerateContent with the Gemini body and the request-type header', (t) => {
  const plain = chat.toUpstream(gemini, target);
  t.is(plain.url, 'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent');
  t.deepEqual(plain.headers, { 'content-type': 'application/json', 'X-Vertex-AI-LLM-Request-Type': 'dedicated' });
  t.deepEqual(JSON.parse(String(plain.body)), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], systemInstruction: { parts: [{ text: 'Brief.' }] } });
  t.true(chat.toUpstream({ ...gemini, stream: true }, target).url.endsWith('/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse'));
  t.deepEqual(plugin.auth(plain, target), { authorization: 'Bearer ya29.token' });
  const noType = chat.toUpstream(gemini, { ...target, headers: { ...headers, 'x-cloud-b-llm-request-type': undefined } });
  t.deepEqual(noType.headers, { 'content-type': 'application/json' });
});

test('Claude models use rawPredict / streamRawPredict with the Anthropic body, no model field and the Vertex anthropic_version', (t) => {
  const plain = chat.toUpstream(claude, target);
  t.is(plain.url, 'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
  t.deepEqual(JSON.parse(String(plain.body)), {
    anthropic_version: 'vertex-2023-10-16',
    max_tokens: 4096,
    messages: [{ role: 'user', content: 'hi' }],
    system: [{ type: 'text', text: 'Brief.' }],
  });
  const streamed = chat.toUpstream({ ...claude, stream: true }, target);
  t.true(streamed.url.endsWith(':streamRawPredict'));
  t.true(JSON.parse(String(streamed.body)).stream);
  t.true(chat.toUpstream({ ...gemini, model: 'anthropic/claude-haiku-4-5' }, target).url.endsWith('/publishers/anthropic/models/claude-haiku-4-5:rawPredict'));
  t.true(chat.toUpstream({ ...gemini, model: 'google/gemini-2.5-pro' }, target).url.endsWith('/publishers/google/models/gemini-2.5-pro:generateContent'));
  t.like(t.throws(() => chat.validate!({ ...claude, n: 3 })), { status: 400, body: { param: 'n', message: 'This provider returns one choice per request: n must be 1.' } });
  t.notThrows(() => chat.validate!({ ...gemini, n: 3 }));
});

test("regions must be in Google's format: a host name cannot be smuggled in", (t) => {
  for (const region of ['us-central1', 'europe-west4', 'asia-northeast1', 'northamerica-northeast2', 'me-central2', 'europe-west12', 'global']) {
    t.true(plugin.baseUrl({ 'x-gateway-cloud-b-region': region }).startsWith('https://'), region);
  }
  for (const region of ['evil.com.', 'evil.com', '..', 'us-central1.evil.com', 'us-central1.', 'US-CENTRAL1', 'us_central1', 'us-central', 'global.', 'a-b-c1', 'us-central1-', '-us-central1', 'us-central123']) {
    const error = t.throws(() => plugin.baseUrl({ 'x-gateway-cloud-b-region': region }), undefined, region) as unknown as { status: number; body: { param: string } };
    t.is(error?.status, 400, region);
    t.is(error?.body.param, 'x-gateway-cloud-b-region', region);
  }
});

test("project ids must be in Google's format (6-30 lowercase letters, digits, hyphens; a letter first; no hyphen last) or a project number", (t) => {
  for (const project of ['my-project', 'abcdef', 'a'.repeat(30), 'acme-prod-2', 'a1b2c3', '123456789012']) {
    const url = chat.toUpstream(gemini, { ...target, headers: { ...headers, 'x-gateway-cloud-b-project-id': project } }).url;
    t.true(url.includes(`/projects/${project}/locations/us-east5/`), project);
  }
  for (const project of ['..', 'evil.com.', 'my.project', 'abcde', 'a'.repeat(31), '1project', 'my-project-', 'My-Project', 'my_project', 'my project', '-project']) {
    const error = t.throws(() => chat.toUpstream(gemini, { ...target, headers: { ...headers, 'x-gateway-cloud-b-project-id': project } }), undefined, project) as unknown as {
      status: number;
      body: { param: string };
    };
    t.is(error?.status, 400, project);
    t.is(error?.body.param, 'x-gateway-cloud-b-project-id', project);
  }
});

test('a missing project id is a 400 naming its header', (t) => {
  const error = t.throws(() => chat.toUpstream(gemini, { ...target, headers: { 'x-gateway-cloud-b-region': 'us-east5' } })) as unknown as { status: number; body: { param: string } };
  t.is(error.status, 400);
  t.is(error.body.param, 'x-gateway-cloud-b-project-id');
});

test('answers and streams are mapped by the model family', (t) => {
  const geminiAnswer = chat.fromUpstream(JSON.parse(providerFixture('google-shared', 'chat-text.json')), gemini, target);
  t.is(geminiAnswer.choices[0].message.content, 'Hello! How can I help you today?');
  const claudeAnswer = chat.fromUpstream(JSON.parse(providerFixture('anthropic', 'chat-tool-use.json')), claude, target);
  t.is(claudeAnswer.choices[0].finish_reason, 'tool_calls');
  const claudeMapper = chat.stream!.createMapper(claude, target);
  const steps = fixtureLines('anthropic', 'stream-text.txt').map((line) => claudeMapper.map({ data: line }));
  t.deepEqual(steps.at(-1), { done: true });
  const geminiMapper = chat.stream!.createMapper(gemini, target);
  t.true(fixtureLines('google-shared', 'stream-text.txt').map((line) => geminiMapper.map({ data: line })).at(-1)?.done);
});

test('embeddings use predict with one instance per input and count tokens from the statistics', (t) => {
  const embed = plugin.operations.embed!;
  const request = { model: 'text-embedding-005', input: ['first', 'second'], dimensions: 4 };
  const upstream = embed.toUpstream(request, target);
  t.is(upstream.url, 'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/google/models/text-embedding-005:predict');
  t.deepEqual(JSON.parse(String(upstream.body)), { instances: [{ content: 'first' }, { content: 'second' }], parameters: { outputDimensionality: 4 } });
  const response = embed.fromUpstream(JSON.parse(providerFixture('vertex-ai', 'embed-predict.json')), request, target);
  t.deepEqual(response.usage, { prompt_tokens: 10, total_tokens: 10 });
  t.deepEqual(response.data[1], { object: 'embedding', index: 1, embedding: [0.25, -0.5, 0.125, 1] });
  t.is(response.model, 'text-embedding-005');
  t.like(t.throws(() => embed.validate!({ model: 'm', input: [5, 6] })), { status: 400, body: { param: 'input' } });
});

test('errors in Google and Anthropic shapes both map', (t) => {
  const reply = (status: number, body: string) => ({ status, headers: {}, body: Buffer.from(body) });
  t.like(plugin.mapError(reply(403, providerFixture('vertex-ai', 'error-403.json'))), { type: 'permission_error', code: 'PERMISSION_DENIED' });
  t.deepEqual(plugin.mapError(reply(429, providerFixture('vertex-ai', 'error-anthropic-429.json'))), {
    message: 'Number of request tokens has exceeded your per-minute rate limit',
    type: 'rate_limit_error',
    param: null,
    code: null,
  });
  t.like(plugin.mapError(reply(503, 'no healthy upstream')), { type: 'overloaded_error', message: 'The provider returned HTTP 503: no healthy upstream' });
});

test('the Gemini API natively for Google\'s models (Claude is translated): the publisher URL, the body as written, countTokens with the prompt\'s fields', (t) => {
  const adapter = plugin.operations.generateContent!;
  t.true(adapter.accepts!('gemini-2.5-pro'));
  t.false(adapter.accepts!('claude-sonnet-4-5@20250929'));
  const request = { model: 'gemini-2.5-pro', stream: 'array' as const, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], systemInstruction: { parts: [{ text: 'Brief.' }] }, safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'OFF' }] };
  const streamed = adapter.toUpstream(request, target);
  t.is(streamed.url, 'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  t.is(streamed.headers['X-Vertex-AI-LLM-Request-Type'], 'dedicated');
  t.deepEqual(JSON.parse(String(streamed.body)), { contents: request.contents, systemInstruction: request.systemInstruction, safetySettings: request.safetySettings });
  const count = adapter.countTokens!.toUpstream(request, target);
  t.is(count.url, 'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:countTokens');
  t.deepEqual(JSON.parse(String(count.body)), { contents: request.contents, systemInstruction: request.systemInstruction });
});
