import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { CompletionRequest, ProviderTarget } from '../../../core/spec/index.js';
import { openai } from './index.js';
import { openAICompletion } from './openai-completion.js';
import { openAIEmbed } from './openai-embed.js';
import { openAIImageGenerate } from './openai-images.js';
import { openAIModels } from './openai-models.js';
import { openAISpeech } from './openai-speech.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

const fixture = (name: string) => readFileSync(join(process.cwd(), 'plugins/providers/openai/__fixtures__', name), 'utf8');
const target: ProviderTarget = { baseUrl: 'https://api.openai.com/v1', customHost: false, headers: {}, credentials: { apiKey: 'sk-test' }, strict: true };
const bytes = (value: object) => Buffer.from(JSON.stringify(value));

test('the plugin offers every operation of the unified API', (t) => {
  const plugin = openai().create(pluginDependencies());
  t.deepEqual(Object.keys(plugin.operations).sort(), [
    'chat',
    'completion',
    'embed',
    'imageEdit',
    'imageGenerate',
    'imageVariation',
    'models',
    'realtime',
    'responses',
    'speech',
    'transcription',
    'translation',
  ]);
});

test('a Realtime session goes to {base}/realtime?model=…, with OpenAI-Beta only when the client asked for the beta interface', (t) => {
  const plugin = openai().create(pluginDependencies());
  const target = (headers: Record<string, string>) => ({ baseUrl: 'https://api.openai.com/v1', customHost: false, headers, credentials: { apiKey: 'sk-x' }, strict: true });
  const ga = plugin.operations.realtime!.toUpstream({ model: 'gpt-realtime' }, target({}));
  t.deepEqual(ga, { method: 'GET', url: 'https://api.openai.com/v1/realtime?model=gpt-realtime', headers: {} });
  t.deepEqual(plugin.operations.realtime!.toUpstream({ model: 'gpt-4o-realtime-preview' }, target({ 'openai-beta': 'realtime=v1' })).headers, { 'openai-beta': 'realtime=v1' });
  t.deepEqual(plugin.operations.realtime!.toUpstream({ model: 'm' }, target({ 'sec-websocket-protocol': 'realtime, openai-beta.realtime-v1' })).headers, { 'openai-beta': 'realtime=v1' });
});

test('each JSON operation posts the original bytes to its path when nothing changes', (t) => {
  const cases = [
    [openAICompletion, { model: 'gpt-3.5-turbo-instruct', prompt: 'x', seed: 1 }, '/completions'],
    [openAIEmbed, { model: 'text-embedding-3-small', input: 'x' }, '/embeddings'],
    [openAIImageGenerate, { prompt: 'x' }, '/images/generations'],
    [openAISpeech, { model: 'tts-1', input: 'x', voice: 'alloy' }, '/audio/speech'],
  ] as const;
  for (const [adapter, request, path] of cases) {
    const original = bytes(request);
    const upstream = adapter.toUpstream(request as never, target, original);
    t.is(upstream.url, `https://api.openai.com/v1${path}`);
    t.is(upstream.method, 'POST');
    t.is(upstream.headers['content-type'], 'application/json');
    t.is(upstream.body, original, path);
    t.deepEqual(JSON.parse(String(adapter.toUpstream(request as never, target).body)), request, `${path} without the original`);
  }
});

test('a streamed completion always asks for usage; one that already does keeps its bytes', (t) => {
  const request: CompletionRequest = { model: 'm', prompt: 'x', stream: true };
  const rewritten = openAICompletion.toUpstream(request, target, bytes(request));
  t.deepEqual(JSON.parse(String(rewritten.body)).stream_options, { include_usage: true });
  const asking = { ...request, stream_options: { include_usage: true } };
  const original = bytes(asking);
  t.is(openAICompletion.toUpstream(asking, target, original).body, original);
});

test('the recorded completion stream maps to its chunks, the usage chunk and done', (t) => {
  const mapper = openAICompletion.stream!.createMapper({ model: 'm' }, target);
  const steps = fixture('completion-stream.txt')
    .split('\n')
    .filter(Boolean)
    .map((line) => mapper.map({ data: line }));
  t.deepEqual(steps.at(-1), { done: true });
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.is(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join(''), 'This is a test.');
  t.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
});

test('fromUpstream keeps recorded answers and refuses bodies of another shape', (t) => {
  const completion = JSON.parse(fixture('completion.json'));
  t.deepEqual(openAICompletion.fromUpstream(completion, { model: 'm' }, target), completion);
  t.throws(() => openAICompletion.fromUpstream({ object: 'list' }, { model: 'm' }, target));
  const embedding = JSON.parse(fixture('embedding.json'));
  t.deepEqual(openAIEmbed.fromUpstream(embedding, { model: 'm', input: 'x' }, target), embedding);
  t.throws(() => openAIEmbed.fromUpstream({ choices: [] }, { model: 'm', input: 'x' }, target));
  const image = JSON.parse(fixture('image.json'));
  t.deepEqual(openAIImageGenerate.fromUpstream(image, { prompt: 'x' }, target), image);
  t.throws(() => openAIImageGenerate.fromUpstream(null, { prompt: 'x' }, target));
  const models = JSON.parse(fixture('models.json'));
  t.deepEqual(openAIModels.fromUpstream(models, target), models);
  t.throws(() => openAIModels.fromUpstream({}, target));
  t.deepEqual(openAIModels.toUpstream(target), { method: 'GET', url: 'https://api.openai.com/v1/models', headers: { accept: 'application/json' } });
});

test("GPT image models get OpenAI's own bounds; the spec's models are left to the core", (t) => {
  const validate = openAIImageGenerate.validate!;
  t.notThrows(() => validate({ prompt: 'x', model: 'dall-e-3', size: '1792x1024' }));
  t.notThrows(() => validate({ prompt: 'x', model: 'gpt-image-1', size: '1536x1024', quality: 'low' }));
  t.like(t.throws(() => validate({ prompt: 'x', model: 'gpt-image-1', size: '1792x1024' })), { status: 400, body: { param: 'size' } });
  t.like(t.throws(() => validate({ prompt: 'x', model: 'gpt-image-1', quality: 'hd' })), { status: 400, body: { param: 'quality' } });
  t.like(t.throws(() => validate({ prompt: 'x', model: 'gpt-image-1', style: 'vivid' })), { status: 400, body: { param: 'style' } });
  t.like(t.throws(() => validate({ prompt: 'x'.repeat(32_001), model: 'gpt-image-1' })), { status: 400, body: { param: 'prompt' } });
});
