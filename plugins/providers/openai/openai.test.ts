import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { SseDecoder } from '../../../core/http/sse.js';
import type { ChatRequest, ProviderTarget } from '../../../core/spec/index.js';
import { openai } from './index.js';
import { openAIChat } from './openai-chat.js';
import { mapOpenAIError } from './openai-error.js';
import { createOpenAIStreamMapper } from './openai-stream.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

const fixture = (name: string) => readFileSync(join(process.cwd(), 'plugins/providers/openai/__fixtures__', name), 'utf8');
const target: ProviderTarget = {
  baseUrl: 'https://api.openai.com/v1',
  customHost: false,
  headers: {},
  credentials: { apiKey: 'sk-test' },
  strict: true,
};
const request: ChatRequest = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, some_new_field: { a: 1 } };

test('toUpstream posts to /chat/completions with unknown fields untouched', (t) => {
  const upstream = openAIChat.toUpstream(request, target);
  t.is(upstream.method, 'POST');
  t.is(upstream.url, 'https://api.openai.com/v1/chat/completions');
  t.deepEqual(JSON.parse(String(upstream.body)), request);
});

test('toUpstream always asks for usage on streams, keeping other stream_options', (t) => {
  const upstream = openAIChat.toUpstream({ ...request, stream: true, stream_options: { include_usage: false } }, target);
  t.deepEqual(JSON.parse(String(upstream.body)).stream_options, { include_usage: true });
});

test('fromUpstream returns the recorded completion and refuses a body without choices', (t) => {
  const body = JSON.parse(fixture('chat-completion.json'));
  t.deepEqual(openAIChat.fromUpstream(body, request, target), body);
  t.throws(() => openAIChat.fromUpstream({ object: 'list' }, request, target));
});

test('the recorded stream maps to its chunks, the usage chunk and done', (t) => {
  const mapper = createOpenAIStreamMapper();
  const steps = fixture('chat-stream.txt')
    .split('\n')
    .filter(Boolean)
    .map((line) => mapper.map({ data: line }));
  t.is(steps.length, 7);
  t.deepEqual(steps.at(-1), { done: true });
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello! How can I help?');
  t.deepEqual(chunks.at(-1)?.choices, []);
  t.is(chunks.at(-1)?.usage?.total_tokens, 15);
});

test('the stream mapper reports error events and malformed data, and ignores unknown shapes', (t) => {
  const mapper = createOpenAIStreamMapper();
  t.like(mapper.map({ data: '{"error":{"message":"overloaded","type":"server_error"}}' }).error, { message: 'overloaded', type: 'server_error', param: null, code: null });
  t.like(mapper.map({ data: '{"id": 1, "choi' }).error, { code: 'malformed_stream' });
  t.deepEqual(mapper.map({ data: '{"type":"ping"}' }), {});
  t.deepEqual(mapper.map({ data: '42' }), {});
});

test('the stream fixture survives SSE decoding split at every byte', (t) => {
  const wire = Buffer.from(
    fixture('chat-stream.txt')
      .split('\n')
      .filter(Boolean)
      .map((line) => `data: ${line}\n\n`)
      .join(''),
  );
  for (const size of [1, 7, 64, wire.length]) {
    const decoder = new SseDecoder();
    const events = [];
    for (let offset = 0; offset < wire.length; offset += size) events.push(...decoder.push(wire.subarray(offset, offset + size)));
    events.push(...decoder.end());
    t.is(events.length, 7, `read size ${size}`);
    t.is(events.at(-1)?.data, '[DONE]');
  }
});

test('mapError keeps OpenAI error bodies and describes anything else by status', (t) => {
  const reply = (status: number, body: string) => ({ status, headers: {}, body: Buffer.from(body) });
  t.deepEqual(mapOpenAIError(reply(429, fixture('error-429.json'))), {
    message: JSON.parse(fixture('error-429.json')).error.message,
    type: 'tokens',
    param: null,
    code: 'rate_limit_exceeded',
  });
  t.like(mapOpenAIError(reply(401, fixture('error-401.json'))), { type: 'invalid_request_error', code: 'invalid_api_key' });
  t.deepEqual(mapOpenAIError(reply(503, '<html>Service Unavailable</html>')), {
    message: 'The provider returned HTTP 503: <html>Service Unavailable</html>',
    type: 'api_error',
    param: null,
    code: null,
  });
  t.like(mapOpenAIError(reply(404, '')), { message: 'The provider returned HTTP 404.', type: 'not_found_error' });
  t.like(mapOpenAIError(reply(400, '{"error":"bad thing"}')), { message: 'bad thing', type: 'invalid_request_error' });
});

test('auth sends the Bearer token and optional organization and project headers', (t) => {
  const plugin = openai({ organization: 'org-1', project: 'proj-1' }).create(pluginDependencies());
  const upstream = openAIChat.toUpstream(request, target);
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer sk-test', 'openai-organization': 'org-1', 'openai-project': 'proj-1' });
  t.deepEqual(plugin.auth(upstream, { ...target, credentials: {} }), { 'openai-organization': 'org-1', 'openai-project': 'proj-1' });
  t.is(plugin.baseUrl({}), 'https://api.openai.com/v1');
  t.is(openai({ baseUrl: 'http://127.0.0.1:9/v1/' }).create(pluginDependencies()).baseUrl({}), 'http://127.0.0.1:9/v1');
});

test('an unchanged request is sent as the original bytes, never re-serialised', (t) => {
  const original = Buffer.from('{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"seed":9223372036854775807}');
  const parsed = JSON.parse(original.toString()) as ChatRequest;
  t.is(openAIChat.toUpstream(parsed, target, original).body, original, 'plain request: the same buffer');
  const streamingOriginal = Buffer.from('{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true}}');
  t.is(openAIChat.toUpstream(JSON.parse(streamingOriginal.toString()), target, streamingOriginal).body, streamingOriginal);
  const needsUsage = Buffer.from('{"model":"m","messages":[],"stream":true}');
  t.not(openAIChat.toUpstream(JSON.parse(needsUsage.toString()), target, needsUsage).body, needsUsage, 'a stream without include_usage is rewritten');
});
