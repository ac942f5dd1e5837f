import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatCompletionChunk, ChatRequest, EmbeddingRequest, ProviderTarget, StreamStep } from '../../../core/spec/index.js';
import { bedrockFixture, bedrockStreamFrames, checkSigV4 } from './bedrock-fake.js';
import { bedrockChat } from './bedrock-chat.js';
import { bedrockEmbed } from './bedrock-embed.js';
import { mapBedrockError } from './bedrock-error.js';
import { EventStreamDecoder } from './bedrock-eventstream.js';
import { toConverseBody } from './bedrock-request.js';
import { fromConverseResponse } from './bedrock-response.js';
import { createBedrockStreamMapper } from './bedrock-stream.js';
import { bedrock } from './index.js';

const target = (overrides: Partial<ProviderTarget> = {}): ProviderTarget => ({
  baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com',
  customHost: false,
  headers: {},
  credentials: { apiKey: 'AKIDEXAMPLE' },
  strict: true,
  ...overrides,
});
const request: ChatRequest = { model: 'anthropic.claude-3-haiku-20240307-v1:0', messages: [{ role: 'user', content: 'Hi' }] };
const json = (name: string) => JSON.parse(bedrockFixture(name));

function runStream(name: string, strict = true): { steps: StreamStep[]; chunks: ChatCompletionChunk[] } {
  const decoder = new EventStreamDecoder();
  const mapper = createBedrockStreamMapper(request, target({ strict }));
  const steps = bedrockStreamFrames(name).flatMap((frame) => decoder.push(frame)).map((event) => mapper.map(event));
  return { steps, chunks: steps.flatMap((step) => step.chunks ?? []) };
}

test('a multi-turn request with system, developer, image, tool calls and tool results maps to Converse', (t) => {
  const { request: unified, expected } = json('chat-request-multiturn-tools.json');
  t.deepEqual(toConverseBody(unified), expected);
});

test('the URL carries the model id percent-encoded; streams go to converse-stream', (t) => {
  t.is(bedrockChat.toUpstream(request, target()).url, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
  t.is(bedrockChat.toUpstream({ ...request, stream: true }, target()).url.split('/').at(-1), 'converse-stream');
});

test('tool_choice: auto, named, and none (tools dropped unless the history holds tool turns)', (t) => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
  t.deepEqual((toConverseBody({ ...request, tools }).toolConfig as any).toolChoice, { auto: {} });
  t.deepEqual((toConverseBody({ ...request, tools, tool_choice: { type: 'function', function: { name: 'f' } } }).toolConfig as any).toolChoice, { tool: { name: 'f' } });
  t.is(toConverseBody({ ...request, tools, tool_choice: 'none' }).toolConfig, undefined);
  const history: ChatRequest['messages'] = [
    { role: 'user', content: 'x' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c', content: 'r' },
  ];
  t.deepEqual(toConverseBody({ ...request, messages: history, tools, tool_choice: 'none' }).toolConfig, { tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }] });
});

test('tool-call arguments a model got wrong are sent wrapped, as the other native providers do, not refused', (t) => {
  const call = (args: string) =>
    (toConverseBody({ ...request, messages: [{ role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }] }).messages as any)[0].content[0].toolUse.input;
  t.deepEqual(call('{oops'), { arguments: '{oops' });
  t.deepEqual(call('[1,2]'), { arguments: [1, 2] });
  t.deepEqual(call(' '), {});
  t.deepEqual(call('{"a":1}'), { a: 1 });
});

test('thinking goes to additionalModelRequestFields', (t) => {
  t.deepEqual(toConverseBody({ ...request, thinking: { type: 'enabled', budget_tokens: 2048 } }).additionalModelRequestFields, {
    thinking: { type: 'enabled', budget_tokens: 2048 },
  });
});

test('unsupported input is a 400 naming the field', (t) => {
  const cases: Array<[Partial<ChatRequest>, string]> = [
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }, 'messages[0].content[0].image_url.url'],
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }] }] }, 'messages[0].content[0].image_url.url'],
    [{ n: 2 }, 'n'],
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, 'response_format'],
    [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
  ];
  for (const [change, param] of cases) {
    const error = t.throws(() => toConverseBody({ ...request, ...change }), { instanceOf: GatewayError });
    t.is(error?.status, 400);
    t.is(error?.body.param, param);
  }
});

test('a text response maps to a completion with usage', (t) => {
  const response = fromConverseResponse(json('converse-response-text.json'), request, target());
  t.is(response.object, 'chat.completion');
  t.is(response.model, request.model);
  t.deepEqual(response.choices[0], { index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop', logprobs: null });
  t.deepEqual(response.usage, { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 });
});

test('a tool-use response maps to tool_calls, with cache tokens in the usage', (t) => {
  const response = fromConverseResponse(json('converse-response-tool-use.json'), request, target());
  t.is(response.choices[0].finish_reason, 'tool_calls');
  t.deepEqual(response.choices[0].message.tool_calls, [
    { id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } },
  ]);
  t.is(response.choices[0].message.content, 'Let me look up the weather.');
  t.deepEqual(response.usage, {
    prompt_tokens: 2380,
    completion_tokens: 58,
    total_tokens: 2438,
    prompt_tokens_details: { cached_tokens: 1800, cache_creation_tokens: 200 },
  });
});

test('guardrail intervention is content_filter; max_tokens is length; thinking only when not strict', (t) => {
  t.is(fromConverseResponse(json('converse-response-guardrail.json'), request, target()).choices[0].finish_reason, 'content_filter');
  const strict = fromConverseResponse(json('converse-response-thinking.json'), request, target());
  t.is(strict.choices[0].finish_reason, 'length');
  t.is(strict.choices[0].message.content, '4');
  t.is(strict.choices[0].message.content_blocks, undefined);
  const loose = fromConverseResponse(json('converse-response-thinking.json'), request, target({ strict: false }));
  t.deepEqual(loose.choices[0].message.content_blocks, [
    { type: 'thinking', text: 'The user wants 2+2. That is 4.', signature: 'EqoBCkgIARABGAIiQL' },
    { type: 'text', text: '4' },
  ]);
  const redacted = fromConverseResponse({ output: { message: { content: [{ reasoningContent: { redactedContent: 'c2VjcmV0' } }, { text: 'ok' }] } } }, request, target({ strict: false }));
  t.deepEqual(redacted.choices[0].message.content_blocks, [
    { type: 'redacted_thinking', data: 'c2VjcmV0' },
    { type: 'text', text: 'ok' },
  ]);
});

test('thinking + tool use round trip: content_blocks sent back open the assistant turn as reasoningContent', (t) => {
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  // The first answer, as the gateway returns it, goes back verbatim with the tool result.
  const answer = fromConverseResponse(
    {
      output: {
        message: {
          content: [
            { reasoningContent: { reasoningText: { text: 'I need the weather.', signature: 'sig-1' } } },
            { reasoningContent: { redactedContent: 'ZW5jcnlwdGVk' } },
            { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
          ],
        },
      },
      stopReason: 'tool_use',
    },
    request,
    target({ strict: false }),
  ).choices[0].message;
  const body = toConverseBody({
    ...request,
    thinking: { type: 'enabled', budget_tokens: 2048 },
    tools,
    messages: [{ role: 'user', content: 'Weather in Paris?' }, answer, { role: 'tool', tool_call_id: 'tooluse_1', content: '18C' }],
  });
  t.deepEqual(body.messages, [
    { role: 'user', content: [{ text: 'Weather in Paris?' }] },
    {
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'I need the weather.', signature: 'sig-1' } } },
        { reasoningContent: { redactedContent: 'ZW5jcnlwdGVk' } },
        { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
      ],
    },
    { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18C' }] } }] },
  ]);
  // Other content_blocks entries (text, tool plans) and malformed ones are not reasoning: skipped.
  const other = toConverseBody({
    ...request,
    messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y', content_blocks: [{ type: 'text', text: 'y' }, null, { type: 'redacted_thinking' }] }],
  });
  t.deepEqual((other.messages as Array<{ content: unknown }>)[1].content, [{ text: 'y' }]);
});

test('empty content maps to an empty string; a body without output is refused', (t) => {
  t.is(fromConverseResponse(json('converse-response-empty.json'), request, target()).choices[0].message.content, '');
  t.throws(() => fromConverseResponse({ message: 'x' }, request, target()), { instanceOf: TypeError });
});

test('the recorded text stream maps to role, text, finish and the usage chunk, then done', (t) => {
  const { steps, chunks } = runStream('converse-stream-text.jsonl');
  t.is(chunks[0].choices[0].delta.role, 'assistant');
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello! How can I help?');
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'stop');
  t.deepEqual(chunks.at(-1)?.choices, []);
  t.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
  t.true(steps.at(-1)?.done);
  t.is(new Set(chunks.map((chunk) => chunk.id)).size, 1);
});

test('the recorded tool-use stream maps to one tool call with streamed arguments', (t) => {
  const { chunks } = runStream('converse-stream-tool-use.jsonl');
  const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  t.deepEqual(calls[0], { index: 0, id: 'tooluse_stream01', type: 'function', function: { name: 'get_weather', arguments: '' } });
  t.is(calls.map((call) => call.function?.arguments ?? '').join(''), '{"city": "Paris"}');
  t.true(calls.every((call) => call.index === 0));
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'tool_calls');
  t.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 510, completion_tokens: 31, total_tokens: 541, prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 0 } });
});

test('thinking deltas appear only when not strict; unknown events are ignored', (t) => {
  const strict = runStream('converse-stream-thinking.jsonl');
  t.false(strict.chunks.some((chunk) => chunk.choices[0]?.delta.content_blocks));
  t.is(strict.chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), '4');
  const loose = runStream('converse-stream-thinking.jsonl', false);
  t.deepEqual(loose.chunks.flatMap((chunk) => chunk.choices[0]?.delta.content_blocks ?? []), [
    { index: 0, type: 'thinking', text: 'Two plus two' },
    { index: 0, type: 'thinking', signature: 'EqoBCkgIARAB' },
  ]);
  const mapper = createBedrockStreamMapper(request, target({ strict: false }));
  const redacted = mapper.map({ event: 'contentBlockDelta', data: '{"contentBlockIndex":2,"delta":{"reasoningContent":{"redactedContent":"ZW5j"}}}' });
  t.deepEqual(redacted.chunks?.[0].choices[0].delta, { content_blocks: [{ index: 2, type: 'redacted_thinking', data: 'ZW5j' }] });
});

test('an exception event ends the stream with its message', (t) => {
  const { steps } = runStream('converse-stream-exception.jsonl');
  t.like(steps.at(-1)?.error, { message: 'The model stream failed: upstream model error.', code: 'modelStreamErrorException', type: 'upstream_error' });
});

test('malformed events: a decode error is a stream error, non-JSON payloads are ignored', (t) => {
  const mapper = createBedrockStreamMapper(request, target());
  t.like(mapper.map({ event: 'eventstream-decode-error', data: 'message checksum mismatch' }).error, { code: 'malformed_stream' });
  t.deepEqual(mapper.map({ event: 'contentBlockDelta', data: '{"contentBlo' }), {});
  t.deepEqual(mapper.map({ event: 'contentBlockDelta', data: '{"contentBlockIndex":7,"delta":{"toolUse":{"input":"x"}}}' }), {});
  t.like(mapper.map({ event: 'exception:throttlingException', data: '{"message":"slow down"}' }).error, { type: 'rate_limit_error', message: 'slow down' });
});

test('embeddings: Titan takes one text, Cohere a list; responses map with usage', (t) => {
  const titan: EmbeddingRequest = { model: 'amazon.titan-embed-text-v2:0', input: 'hello', dimensions: 256 };
  const upstream = bedrockEmbed.toUpstream(titan, target());
  t.is(upstream.url, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke');
  t.deepEqual(JSON.parse(String(upstream.body)), { inputText: 'hello', dimensions: 256 });
  t.deepEqual(bedrockEmbed.fromUpstream(json('titan-embed-response.json'), titan, target()), {
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding: [0.0123, -0.0456, 0.0789, 0.25] }],
    model: 'amazon.titan-embed-text-v2:0',
    usage: { prompt_tokens: 6, total_tokens: 6 },
  });
  t.like(t.throws(() => bedrockEmbed.validate?.({ model: 'amazon.titan-embed-text-v1', input: ['a', 'b'] })), {
    status: 400,
    body: { param: 'input', message: 'Titan embedding models embed one text per request; send a single string.', code: 'invalid_value' },
  });
  t.like(t.throws(() => bedrockEmbed.validate?.({ model: 'amazon.titan-embed-text-v1', input: [1, 2] })), { status: 400, body: { param: 'input' } });

  const cohere: EmbeddingRequest = { model: 'cohere.embed-english-v3', input: ['hello', 'world'], encoding_format: 'base64' };
  t.deepEqual(JSON.parse(String(bedrockEmbed.toUpstream(cohere, target()).body)), { texts: ['hello', 'world'], input_type: 'search_document' });
  const mapped = bedrockEmbed.fromUpstream(json('cohere-embed-response.json'), cohere, target());
  t.is(mapped.data.length, 2);
  const bytes = Buffer.from(mapped.data[1].embedding as string, 'base64');
  const floats = Array.from({ length: bytes.length / 4 }, (_, index) => Number(bytes.readFloatLE(index * 4).toFixed(4)));
  t.deepEqual(floats, [0.4, 0.5, -0.6]);
});

test('errors: message and the x-amzn-errortype name; non-JSON bodies are described', (t) => {
  t.deepEqual(
    mapBedrockError({ status: 400, headers: { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, body: Buffer.from(bedrockFixture('error-validation.json')) }),
    { message: 'The provided model identifier is invalid.', type: 'invalid_request_error', param: null, code: 'ValidationException' },
  );
  t.like(mapBedrockError({ status: 429, headers: {}, body: Buffer.from(bedrockFixture('error-throttling.json')) }), { type: 'rate_limit_error', code: null });
  t.like(mapBedrockError({ status: 503, headers: {}, body: Buffer.from('<html>down</html>') }), { type: 'api_error', message: 'The provider returned HTTP 503: <html>down</html>' });
});

test('auth: SigV4 with the secret header (verifiable), Bearer API key without it', (t) => {
  const plugin = bedrock().create({} as never);
  const upstream = { method: 'POST' as const, url: 'http://127.0.0.1:9/model/m%3A0/converse', headers: { 'content-type': 'application/json' }, body: '{"messages":[]}' };
  const headers = { 'x-gateway-cloud-c-secret-access-key': 'SECRET', 'x-gateway-cloud-c-session-token': 'TOKEN', 'x-gateway-cloud-c-region': 'eu-west-3' };
  const signed = plugin.auth(upstream, target({ headers }));
  t.regex(signed.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-3\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, /);
  const received = { method: 'POST', url: '/model/m%3A0/converse', headers: { ...upstream.headers, ...signed, host: '127.0.0.1:9' }, body: Buffer.from(upstream.body) };
  t.deepEqual(checkSigV4(received, { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' }, 'eu-west-3'), []);
  t.deepEqual(checkSigV4({ ...received, body: Buffer.from('{}') }, { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' }, 'eu-west-3'), [
    'signature does not match the request received',
  ]);
  const get = plugin.auth({ method: 'GET', url: 'http://127.0.0.1:9/async-invoke', headers: {} }, target({ headers }));
  t.regex(get.authorization, /SignedHeaders=host;x-amz-date;x-amz-security-token, /);
  t.deepEqual(plugin.auth(upstream, target({ credentials: { apiKey: 'bedrock-api-key-abc' } })), { authorization: 'Bearer bedrock-api-key-abc' });
  t.is(plugin.baseUrl({ 'x-gateway-cloud-c-region': 'ap-southeast-2' }), 'https://bedrock-runtime.ap-southeast-2.amazonaws.com');
  t.is(plugin.baseUrl({}), 'https://bedrock-runtime.us-east-1.amazonaws.com');
  t.is(t.throws(() => plugin.baseUrl({ 'x-gateway-cloud-c-region': 'evil.com/x' }), { instanceOf: GatewayError })?.body.param, 'x-gateway-cloud-c-region');
});
