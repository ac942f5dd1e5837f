import test from 'ava';
import OpenAI from 'openai';
import { collectStream, weatherTool } from '../../../test/fakes/chat-e2e.js';
import { startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { loggedOnce, PROVIDER_KEY, sdkClient, startGateway, type TestGateway, traceId } from '../../../test/harness.js';
import { vertexAI } from './index.js';
import { vertexFakeRenderer } from './vertex-ai-fake.js';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [vertexAI()] });
});
test.after.always(() => gateway.close());

const cloudHeaders = { 'x-gateway-provider': 'vertex-ai', 'x-gateway-cloud-b-project-id': 'acme-prod', 'x-gateway-cloud-b-region': 'europe-west4', 'X-Cloud-B-LLM-Request-Type': 'shared' };
const setup = async (headers: Record<string, string> = cloudHeaders) => {
  const fake = await startRenderedFake(vertexFakeRenderer);
  const client = sdkClient(gateway.url, fake.baseUrl, headers);
  return { fake, client };
};
const usage = { promptTokens: 30, completionTokens: 6 };
const modelPath = (publisher: string, model: string, method: string) => `/v1/projects/acme-prod/locations/europe-west4/publishers/${publisher}/models/${model}:${method}`;

test('Gemini on Vertex: project, region and request type reach Vertex as URL and its own header, with the Bearer token', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Ready.', finishReason: 'stop', usage });
  const id = traceId('vertex-plain');
  const completion = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Ready?' }] }, { headers: { 'x-gateway-trace-id': id } });
  t.is(completion.choices[0].message.content, 'Ready.');
  const received = fake.requests[0];
  t.is(received.url, modelPath('google', 'gemini-2.5-flash', 'generateContent'));
  t.is(received.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  t.is(received.headers['x-vertex-ai-llm-request-type'], 'shared');
  t.is(received.headers['x-cloud-b-llm-request-type'], undefined, 'the gateway header itself is not forwarded');
  t.deepEqual(fake.body(0), { contents: [{ role: 'user', parts: [{ text: 'Ready?' }] }] });
  t.like(await loggedOnce(gateway, id), { outcome: 'ok', provider: 'vertex-ai', usage: { promptTokens: 30, completionTokens: 6, totalTokens: 36 } });
});

test('Gemini on Vertex: a streamed tool call round trip', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer(
    { kind: 'toolCall', id: 'call_vertex_1', name: 'get_weather', arguments: '{"city":"Rome","unit":"c"}', usage },
    { kind: 'text', text: 'Rome: 24 degrees.', finishReason: 'stop', usage },
  );
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Rome?' }];
  const first = await collectStream(await client.chat.completions.create({ model: 'gemini-2.5-pro', messages, tools: [weatherTool], stream: true, stream_options: { include_usage: true } }));
  t.deepEqual(first.toolCalls, [{ id: 'call_vertex_1', name: 'get_weather', arguments: '{"city":"Rome","unit":"c"}' }]);
  t.is(first.finishReason, 'tool_calls');
  t.like(first.usage, { total_tokens: 36 });
  t.is(fake.requests[0].url, modelPath('google', 'gemini-2.5-pro', 'streamGenerateContent?alt=sse'));
  messages.push(
    { role: 'assistant', content: null, tool_calls: first.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) },
    { role: 'tool', tool_call_id: 'call_vertex_1', content: 'sunny, 24C' },
  );
  const second = await collectStream(await client.chat.completions.create({ model: 'gemini-2.5-pro', messages, tools: [weatherTool], stream: true }));
  t.is(second.text, 'Rome: 24 degrees.');
  t.deepEqual(fake.body(1).contents.at(-1), { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'sunny, 24C' } } }] });
});

test('Claude on Vertex: streamRawPredict with the Anthropic body, and a streamed tool call round trip', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer(
    { kind: 'toolCall', id: 'toolu_vertex_1', name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}', usage },
    { kind: 'text', text: 'Oslo: 3 degrees.', finishReason: 'stop', usage },
  );
  const model = 'claude-sonnet-4-5@20250929';
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Oslo?' }];
  const first = await collectStream(await client.chat.completions.create({ model, messages, tools: [weatherTool], stream: true }));
  t.deepEqual(first.toolCalls, [{ id: 'toolu_vertex_1', name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}' }]);
  t.is(fake.requests[0].url, modelPath('anthropic', model, 'streamRawPredict'));
  t.is(fake.requests[0].headers.authorization, `Bearer ${PROVIDER_KEY}`);
  t.like(fake.body(0), { anthropic_version: 'vertex-2023-10-16', stream: true, max_tokens: 4096, system: [{ type: 'text', text: 'Be brief.' }] });
  t.false('model' in fake.body(0));
  messages.push(
    { role: 'assistant', content: null, tool_calls: first.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) },
    { role: 'tool', tool_call_id: 'toolu_vertex_1', content: '3C' },
  );
  const second = await collectStream(await client.chat.completions.create({ model, messages, stream: true }));
  t.is(second.text, 'Oslo: 3 degrees.');
  t.deepEqual(fake.body(1).messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_vertex_1', content: '3C' }] });
  const plain = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
  t.is(fake.requests[2].url, modelPath('anthropic', model, 'rawPredict'));
  t.is(plain.choices[0].message.content, 'Oslo: 3 degrees.');
});

test('a truncated stream is an error the SDK raises; an upstream error keeps status and Google\'s message', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'truncated', text: 'Half an ans' });
  const id = traceId('vertex-truncated');
  const stream = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Go' }], stream: true }, { headers: { 'x-gateway-trace-id': id } });
  await t.throwsAsync(collectStream(stream), { instanceOf: OpenAI.APIError, message: /ended before it was complete/ });
  t.like(await loggedOnce(gateway, id), { outcome: 'stream_error' });

  fake.answer({ kind: 'error', status: 403, message: "Permission 'aiplatform.endpoints.predict' denied" });
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Go' }] }), { instanceOf: OpenAI.PermissionDeniedError });
  t.like(error!.error, { message: "Permission 'aiplatform.endpoints.predict' denied", type: 'permission_error', code: 'PERMISSION_DENIED', provider: 'vertex-ai' });
});

test('missing cloud headers are a 400 naming the header, before anything is sent', async (t) => {
  const { fake, client } = await setup({ 'x-gateway-provider': 'vertex-ai', 'x-gateway-cloud-b-region': 'us-central1' });
  t.teardown(() => fake.close());
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Go' }] }), { instanceOf: OpenAI.BadRequestError });
  t.is(error!.param, 'x-gateway-cloud-b-project-id');
  t.is(fake.requests.length, 0);
});
