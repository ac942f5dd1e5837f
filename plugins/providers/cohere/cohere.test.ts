import test from 'ava';
import { SseDecoder } from '../../../core/http/sse.js';
import { GatewayError } from '../../../core/errors.js';
import type { ChatCompletionChunk, ChatRequest, ProviderTarget, StreamStep } from '../../../core/spec/index.js';
import { cohereFixture, cohereStreamEvents, cohereStreamLines } from './cohere-fake.js';
import { cohereChat } from './cohere-chat.js';
import { cohereEmbed } from './cohere-embed.js';
import { mapCohereError } from './cohere-error.js';
import { toCohereBody } from './cohere-request.js';
import { fromCohereResponse } from './cohere-response.js';
import { createCohereStreamMapper } from './cohere-stream.js';

const target = (strict = true): ProviderTarget => ({ baseUrl: 'https://api.cohere.com/v2', customHost: false, headers: {}, credentials: { apiKey: 'co-key' }, strict });
const request: ChatRequest = { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'Hi' }] };
const json = (name: string) => JSON.parse(cohereFixture(name));

function runStream(name: string, strict = true): { steps: StreamStep[]; chunks: ChatCompletionChunk[] } {
  const decoder = new SseDecoder();
  const mapper = createCohereStreamMapper(request, target(strict));
  const events = [...decoder.push(Buffer.from(cohereStreamEvents(name).join(''))), ...decoder.end()];
  const steps = events.map((event) => mapper.map(event));
  return { steps, chunks: steps.flatMap((step) => step.chunks ?? []) };
}

test('a multi-turn request with developer, image, tool calls, tool result and settings maps to Chat v2', (t) => {
  const { request: unified, expected } = json('chat-request-multiturn.json');
  t.deepEqual(toCohereBody(unified), expected);
  t.is(cohereChat.toUpstream(unified, target()).url, 'https://api.cohere.com/v2/chat');
});

test('tool_choice: none, auto, and a named tool (only that tool, required)', (t) => {
  const tools = [
    { type: 'function', function: { name: 'a', parameters: { type: 'object' } } },
    { type: 'function', function: { name: 'b', parameters: { type: 'object' } } },
  ];
  t.is(toCohereBody({ ...request, tools, tool_choice: 'none' }).tool_choice, 'NONE');
  t.is(toCohereBody({ ...request, tools }).tool_choice, undefined);
  const named = toCohereBody({ ...request, tools, tool_choice: { type: 'function', function: { name: 'b' } } });
  t.deepEqual(named.tools, [{ type: 'function', function: { name: 'b', parameters: { type: 'object' } } }]);
  t.is(named.tool_choice, 'REQUIRED');
  t.is(t.throws(() => toCohereBody({ ...request, tools, tool_choice: { type: 'function', function: { name: 'zz' } } }), { instanceOf: GatewayError })?.body.param, 'tool_choice');
});

test('json_schema, thinking and streams map; penalties outside 0..1 and n > 1 are refused', (t) => {
  const schema = { type: 'object', properties: { a: { type: 'string' } } };
  t.deepEqual(toCohereBody({ ...request, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }).response_format, { type: 'json_object', json_schema: schema });
  t.deepEqual(toCohereBody({ ...request, thinking: { type: 'enabled', budget_tokens: 500 } }).thinking, { type: 'enabled', token_budget: 500 });
  t.is(toCohereBody({ ...request, stream: true }).stream, true);
  t.is(t.throws(() => toCohereBody({ ...request, presence_penalty: -1 }), { instanceOf: GatewayError })?.body.param, 'presence_penalty');
  t.is(t.throws(() => toCohereBody({ ...request, n: 3 }), { instanceOf: GatewayError })?.body.param, 'n');
});

test('responses: text, tool calls (tool plan only when not strict), thinking, empty, failed', (t) => {
  const text = fromCohereResponse(json('chat-response-text.json'), request, target());
  t.is(text.id, '5a3bbf1e-3a4c-4c64-9e53-d0e1c0a6f6b1');
  t.deepEqual(text.choices[0], { index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop', logprobs: null });
  t.deepEqual(text.usage, { prompt_tokens: 71, completion_tokens: 9, total_tokens: 80 });

  const tools = fromCohereResponse(json('chat-response-tool-calls.json'), request, target());
  t.is(tools.choices[0].finish_reason, 'tool_calls');
  t.is(tools.choices[0].message.content, null);
  t.deepEqual(tools.choices[0].message.tool_calls, [{ id: 'get_weather_9p2bq3cn8v7e', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
  t.is(tools.choices[0].message.content_blocks, undefined);
  t.deepEqual(fromCohereResponse(json('chat-response-tool-calls.json'), request, target(false)).choices[0].message.content_blocks, [
    { type: 'tool_plan', text: 'I will look up the weather in Paris.' },
  ]);

  const thinking = fromCohereResponse(json('chat-response-thinking.json'), request, target(false));
  t.is(thinking.choices[0].finish_reason, 'length');
  t.is(thinking.choices[0].message.content, '4');
  t.deepEqual(thinking.choices[0].message.content_blocks, [{ type: 'thinking', text: 'The user asks for 2+2, which is 4.' }]);

  const empty = fromCohereResponse(json('chat-response-empty.json'), request, target());
  t.is(empty.choices[0].message.content, '');
  t.deepEqual(empty.usage, { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 });

  t.is(t.throws(() => fromCohereResponse(json('chat-response-error.json'), request, target()), { instanceOf: GatewayError })?.status, 502);
  t.throws(() => fromCohereResponse({ text: 'v1 shape' }, request, target()), { instanceOf: TypeError });
});

test('the recorded text stream: role, text, finish, usage chunk, done; debug ignored', (t) => {
  const { steps, chunks } = runStream('chat-stream-text.txt');
  t.is(chunks[0].id, '29f14a5a-11de-4cae-9800-25e4747408ea');
  t.is(chunks[0].choices[0].delta.role, 'assistant');
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello! How can I help?');
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'stop');
  t.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 71, completion_tokens: 7, total_tokens: 78 });
  t.true(steps.at(-1)?.done);
  t.is(steps.filter((step) => step.chunks?.length).length, 5);
});

test('the recorded tool-call stream: one call with its id, name and argument fragments', (t) => {
  const { chunks } = runStream('chat-stream-tool-calls.txt');
  const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  t.deepEqual(calls[0], { index: 0, id: 'get_weather_s7k2m4', type: 'function', function: { name: 'get_weather', arguments: '' } });
  t.deepEqual(JSON.parse(calls.map((call) => call.function?.arguments ?? '').join('')), { city: 'Paris' });
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'tool_calls');
  t.false(chunks.some((chunk) => chunk.choices[0]?.delta.content_blocks));
  const loose = runStream('chat-stream-tool-calls.txt', false).chunks.flatMap((chunk) => chunk.choices[0]?.delta.content_blocks ?? []);
  t.deepEqual((loose as Array<{ text: string }>).map((block) => block.text).join(''), 'I will check the weather.');
  t.true((loose as Array<{ type: string; index: number }>).every((block) => block.type === 'tool_plan' && block.index === 0), 'the tool plan is one block, numbered first');
});

test('citations and thinking: text maps, citation events are ignored, thinking only when not strict', (t) => {
  const strict = runStream('chat-stream-citations.txt');
  t.is(strict.chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'It is 18C in Paris.');
  t.false(strict.chunks.some((chunk) => chunk.choices[0]?.delta.content_blocks));
  const loose = runStream('chat-stream-citations.txt', false);
  t.deepEqual(loose.chunks.flatMap((chunk) => chunk.choices[0]?.delta.content_blocks ?? []), [{ index: 0, type: 'thinking', text: 'Recall the tool result.' }]);
});

test('stream errors: failed message-end, error events, malformed JSON; unknown events ignored', (t) => {
  const mapper = createCohereStreamMapper(request, target());
  t.like(mapper.map({ data: '{"type":"message-end","delta":{"finish_reason":"ERROR"}}' }).error, { code: 'upstream_generation_failed' });
  t.like(mapper.map({ event: 'error', data: '{"message":"internal server error"}' }).error, { message: 'internal server error' });
  t.like(mapper.map({ data: '{"type":"content-del' }).error, { code: 'malformed_stream' });
  t.deepEqual(mapper.map({ data: '{"type":"brand-new-event","x":1}' }), {});
  t.deepEqual(mapper.map({ data: 'keep-alive' }), {});
  t.deepEqual(mapper.map({ data: '{"type":"tool-call-delta","index":5,"delta":{"message":{"tool_calls":{"function":{"arguments":"x"}}}}}' }), {});
});

test('every fixture line survives truncation at every length without throwing', (t) => {
  for (const name of ['chat-stream-text.txt', 'chat-stream-tool-calls.txt', 'chat-stream-citations.txt']) {
    for (const line of cohereStreamLines(name)) {
      const mapper = createCohereStreamMapper(request, target());
      for (let length = 0; length <= line.length; length++) t.notThrows(() => mapper.map({ data: line.slice(0, length) }));
    }
  }
});

test('embeddings: Embed v2 body and response, base64 on request', (t) => {
  const upstream = cohereEmbed.toUpstream({ model: 'embed-v4.0', input: ['hello', 'goodbye'], dimensions: 256 }, target());
  t.is(upstream.url, 'https://api.cohere.com/v2/embed');
  t.deepEqual(JSON.parse(String(upstream.body)), { model: 'embed-v4.0', texts: ['hello', 'goodbye'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 256 });
  const mapped = cohereEmbed.fromUpstream(json('embed-response.json'), { model: 'embed-v4.0', input: ['hello', 'goodbye'] }, target());
  t.deepEqual(mapped.data[1], { object: 'embedding', index: 1, embedding: [0.0284729, -0.0614624, 0.0050201416] });
  t.deepEqual(mapped.usage, { prompt_tokens: 2, total_tokens: 2 });
  const base64 = cohereEmbed.fromUpstream(json('embed-response.json'), { model: 'embed-v4.0', input: 'x', encoding_format: 'base64' }, target());
  t.is(typeof base64.data[0].embedding, 'string');
  t.like(t.throws(() => cohereEmbed.validate?.({ model: 'e', input: [[1, 2]] })), { status: 400, body: { param: 'input' } });
});

test('errors: message kept, type by status', (t) => {
  t.deepEqual(mapCohereError({ status: 400, headers: {}, body: Buffer.from(cohereFixture('error-400.json')) }), {
    message: 'invalid request: message must be at least 1 token long or tool results must be specified.',
    type: 'invalid_request_error',
    param: null,
    code: null,
  });
  t.is(mapCohereError({ status: 429, headers: {}, body: Buffer.from(cohereFixture('error-429.json')) }).type, 'rate_limit_error');
  t.is(mapCohereError({ status: 502, headers: {}, body: Buffer.from('') }).message, 'The provider returned HTTP 502.');
});
