import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { ChatRequest, PluginDependencies, ProviderTarget } from '../../../core/spec/index.js';
import { PluginRegistry } from '../../../core/registry.js';
import { jina, jinaManifest } from '../jina/index.js';
import { mistral } from '../mistral/index.js';
import { ollama } from '../ollama/index.js';
import { voyage, voyageManifest } from '../voyage/index.js';
import { shippedSubjects } from '../../../core/conformance/index.js';
import {
  adaptChatRequest,
  checkChatRequest,
  compatibleChatAdapter,
  compatibleEmbedAdapter,
  compatibleRerankAdapter,
  createCompatibleStreamMapper,
  defineCompatibleProvider,
  mapCompatibleError,
} from './index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

/** The compatible family shipped on this base (each documented in docs/providers/<id>.md). */
const COMPATIBLE = 'groq together fireworks deepseek openrouter perplexity xai cerebras deepinfra mistral nvidia-nim sambanova hyperbolic novita nebius lambda moonshot dashscope vllm lmstudio llamacpp ollama jina voyage nscale featherless siliconflow scaleway ovhcloud vercel-ai-gateway litellm portkey github-models zhipu minimax baseten volcengine-ark'.split(' ');

const dependencies: PluginDependencies = pluginDependencies();
const target: ProviderTarget = { baseUrl: 'https://api.example.test/v1', customHost: false, headers: {}, credentials: { apiKey: 'k-123' }, strict: true };
const request: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi', name: 'ann' }] };

test('a request no quirk touches is left alone and sent as the original bytes', (t) => {
  t.is(adaptChatRequest(request, {}), undefined);
  const original = Buffer.from(JSON.stringify(request));
  t.is(compatibleChatAdapter({ provider: 'p' }).toUpstream(request, target, original).body, original);
});

test('streams ask for usage unless the provider sends it unasked and refuses stream_options', (t) => {
  const streaming = { ...request, stream: true, stream_options: { include_usage: false } };
  t.deepEqual(adaptChatRequest(streaming, {})?.stream_options, { include_usage: true });
  const always = adaptChatRequest(streaming, { streamUsage: 'always' });
  t.false(always !== undefined && 'stream_options' in always);
  t.is(adaptChatRequest({ ...request, stream: true }, { streamUsage: 'always' }), undefined);
});

test('refused fields are dropped, renamed ones renamed, max_tokens filled or renamed, names dropped', (t) => {
  const body = adaptChatRequest({ ...request, logit_bias: { 1: 2 }, seed: 9, max_completion_tokens: 50 }, {
    unsupportedFields: ['logit_bias'],
    renamedFields: { seed: 'random_seed' },
    maxTokensOnly: true,
    noMessageNames: true,
  });
  t.deepEqual(body, { model: 'm', messages: [{ role: 'user', content: 'hi' }], random_seed: 9, max_tokens: 50 });
  t.is(adaptChatRequest(request, { maxTokensDefault: 4096 })?.max_tokens, 4096);
  t.is(adaptChatRequest({ ...request, max_tokens: 10 }, { maxTokensDefault: 4096 }), undefined);
});

test('validate refuses n > 1 and refused fields with a 400 naming the field', (t) => {
  t.like(t.throws(() => checkChatRequest({ ...request, n: 2 }, { n: false }, 'groq')), { status: 400, body: { param: 'n' } });
  t.notThrows(() => checkChatRequest({ ...request, n: 1 }, { n: false }, 'groq'));
  const refused = t.throws(() => checkChatRequest({ ...request, logprobs: true }, { unsupportedFields: ['logprobs'] }, 'groq'));
  t.like(refused, { status: 400, body: { param: 'logprobs' } });
  t.regex(refused?.message ?? '', /groq/);
});

test('usage a provider puts elsewhere in its last chunk is lifted to usage', (t) => {
  const mapper = createCompatibleStreamMapper({ usageField: 'x_groq.usage' });
  const step = mapper.map({ data: JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], x_groq: { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } } }) });
  t.deepEqual(step.chunks?.[0].usage, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  t.deepEqual(mapper.map({ data: '[DONE]' }), { done: true });
});

test('a usage chunk without a choices key keeps its usage (as a chunk with no choices); other shapes without choices are ignored', (t) => {
  const mapper = createCompatibleStreamMapper();
  const usage = { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 };
  const step = mapper.map({ data: JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', usage }) });
  t.deepEqual(step.chunks, [{ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage }]);
  const lifted = createCompatibleStreamMapper({ usageField: 'x_groq.usage' }).map({ data: JSON.stringify({ id: 'c', x_groq: { usage } }) });
  t.deepEqual(lifted.chunks?.[0].usage, usage);
  t.deepEqual(lifted.chunks?.[0].choices, []);
  t.deepEqual(mapper.map({ data: '{"id":"c","usage":null}' }), {});
  t.deepEqual(mapper.map({ data: '{"id":"c","object":"ping"}' }), {});
});

test('error bodies: OpenAI envelope, top-level object, FastAPI detail, anything else', (t) => {
  const reply = (status: number, body: unknown) => ({ status, headers: {}, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) });
  t.deepEqual(mapCompatibleError(reply(400, { object: 'error', message: 'bad temperature', type: 'invalid_request_error', param: null, code: 400 })), {
    message: 'bad temperature',
    type: 'invalid_request_error',
    param: null,
    code: '400',
  });
  t.deepEqual(mapCompatibleError(reply(401, { detail: 'Provided API key is invalid.' })), { message: 'Provided API key is invalid.', type: 'authentication_error', param: null, code: null });
  t.like(mapCompatibleError(reply(422, { detail: [{ loc: ['body', 'input'], msg: 'field required' }] })), { message: 'field required', type: 'invalid_request_error' });
  t.like(mapCompatibleError(reply(502, 'Bad Gateway')), { message: 'The provider returned HTTP 502: Bad Gateway', type: 'api_error' });
});

test('voyage: dimensions becomes output_dimension, float encoding is dropped, usage gains prompt_tokens', (t) => {
  const adapter = voyage().create(dependencies).operations.embed;
  if (!adapter) return t.fail('voyage has no embed');
  const upstream = adapter.toUpstream({ model: 'voyage-3.5', input: ['a'], dimensions: 256, encoding_format: 'float' }, target);
  t.is(upstream.url, 'https://api.example.test/v1/embeddings');
  t.deepEqual(JSON.parse(String(upstream.body)), { model: 'voyage-3.5', input: ['a'], output_dimension: 256 });
  const mapped = adapter.fromUpstream({ object: 'list', data: [{ object: 'embedding', embedding: [0.5], index: 0 }], model: 'voyage-3.5', usage: { total_tokens: 4 } }, { model: 'voyage-3.5', input: 'a' }, target);
  t.deepEqual(mapped.usage, { prompt_tokens: 4, total_tokens: 4 });
  t.throws(() => adapter.fromUpstream({ detail: 'x' }, { model: 'v', input: 'a' }, target), { instanceOf: TypeError });
});

test('jina: encoding_format travels as embedding_type; the plugin declares embeddings and rerank only', (t) => {
  const plugin = jina().create(dependencies);
  t.deepEqual(Object.keys(plugin.operations), ['embed', 'rerank']);
  const upstream = compatibleEmbedAdapter({ provider: 'jina', quirks: jinaManifest.embed }).toUpstream({ model: 'j', input: 'a', encoding_format: 'float' }, target);
  t.deepEqual(JSON.parse(String(upstream.body)), { model: 'j', input: 'a', embedding_type: 'float' });
});

test('auth styles: bearer, a header of its own with prefix, none without a key; static and param headers', (t) => {
  const custom = defineCompatibleProvider({
    id: 'custom',
    name: 'Custom',
    description: 'test',
    baseUrl: 'https://custom.test/v1/',
    operations: ['chat'],
    auth: { kind: 'header', header: 'X-Api-Key', prefix: 'Key ' },
    headers: { 'X-Source': 'gateway' },
  });
  const plugin = custom({ headers: { 'HTTP-Referer': 'https://app.test' } }).create(dependencies);
  const upstream = { method: 'POST' as const, url: 'u', headers: {} };
  t.deepEqual(plugin.auth(upstream, target), { 'x-source': 'gateway', 'http-referer': 'https://app.test', 'x-api-key': 'Key k-123' });
  t.deepEqual(plugin.auth(upstream, { ...target, credentials: {} }), { 'x-source': 'gateway', 'http-referer': 'https://app.test' });
  t.is(plugin.baseUrl({}), 'https://custom.test/v1');
  t.false(plugin.capabilities?.developerRole?.('any'));
  t.is(custom({ baseUrl: 'http://127.0.0.1:9999/v1' }).create(dependencies).baseUrl({}), 'http://127.0.0.1:9999/v1');
});

test('params are checked at boot: a base URL that is not http(s) fails start-up', (t) => {
  t.throws(() => new PluginRegistry([mistral({ baseUrl: 'ftp://x' })], [], () => dependencies), { message: /INVALID_PARAMS.*mistral/ });
});

test("ollama: /api/* pass-through goes beside /v1; mistral's FIM pass-through stays under /v1", (t) => {
  const local = { ...target, baseUrl: 'http://127.0.0.1:11434/v1' };
  const plugin = ollama().create(dependencies);
  t.is(plugin.passthroughUrl?.('/api/chat', local), 'http://127.0.0.1:11434/api/chat');
  t.is(plugin.passthroughUrl?.('/models?x=1', local), 'http://127.0.0.1:11434/v1/models?x=1');
  t.is(mistral().create(dependencies).passthroughUrl, undefined, 'default: base URL + path, so /v1/fim/completions reaches /v1/fim/completions');
});

test('every shipped provider has a conformance subject, a unique id, a documented base URL and a doc page', async (t) => {
  const subjects = await shippedSubjects();
  const ids = subjects.map((subject) => subject.registration.manifest.id);
  t.is(new Set(ids).size, ids.length);
  for (const id of COMPATIBLE) t.true(ids.includes(id), `${id} has no conformance subject`);
  t.is(COMPATIBLE.length, 37);
  for (const subject of subjects) {
    const id = subject.registration.manifest.id;
    const headers = Object.fromEntries(Object.entries(subject.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    const baseUrl = subject.registration.create(dependencies).baseUrl(headers);
    t.regex(baseUrl, /^(https:\/\/|http:\/\/127\.0\.0\.1:\d+)/, id);
    if (COMPATIBLE.includes(id)) t.true(existsSync(join(process.cwd(), 'docs/providers', `${id}.md`)), `docs/providers/${id}.md`);
  }
});

test('rerank: texts up, return_documents kept home, renamed fields; results read from the manifest field, extras kept, usage as tokens', (t) => {
  const adapter = compatibleRerankAdapter({ provider: 'voyage', quirks: voyageManifest.rerank });
  const request = { model: 'rerank-2.5', query: 'q', documents: ['a', { text: 'b', id: 2 }], top_n: 1, return_documents: true, truncation: false };
  const upstream = adapter.toUpstream(request, target);
  t.true(upstream.url.endsWith('/rerank'));
  t.deepEqual(JSON.parse(String(upstream.body)), { model: 'rerank-2.5', query: 'q', documents: ['a', 'b'], top_k: 1, truncation: false });
  const mapped = adapter.fromUpstream({ object: 'list', data: [{ index: 1, relevance_score: 0.5, document: 'b' }], model: 'rerank-2.5', usage: { total_tokens: 9 } }, request, target);
  t.deepEqual(mapped, { object: 'list', model: 'rerank-2.5', results: [{ index: 1, relevance_score: 0.5 }], usage: { prompt_tokens: 9, total_tokens: 9 } });
  t.throws(() => adapter.fromUpstream({ results: [] }, request, target), { instanceOf: TypeError }, 'Voyage answers data, not results');
});
