import test from 'ava';
import OpenAI from 'openai';
import { collectStream, weatherParameters, weatherTool } from '../../../test/fakes/chat-e2e.js';
import { startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { fixtureLines, sseWire } from '../../../test/fakes/stream-fuzz.js';
import { loggedOnce, PROVIDER_KEY, SECRETS, sdkClient, startGateway, type TestGateway, traceId } from '../../../test/harness.js';
import { anthropicFakeRenderer } from './anthropic-fake.js';
import { anthropic } from './index.js';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [anthropic()] });
});
test.after.always(() => gateway.close());

const setup = async () => {
  const fake = await startRenderedFake(anthropicFakeRenderer);
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-provider': 'anthropic' });
  return { fake, client };
};
const usage = { promptTokens: 21, completionTokens: 7 };

test('plain chat: the Messages API receives the mapped body with x-api-key and anthropic-version; usage is logged', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Bonjour !', finishReason: 'stop', usage });
  const id = traceId('anthropic-plain');
  const completion = await client.chat.completions.create(
    {
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: [{ type: 'text', text: 'Hello' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
      ],
      max_tokens: 64,
      stop: ['###'],
    },
    { headers: { 'x-gateway-trace-id': id } },
  );
  t.is(completion.choices[0].message.content, 'Bonjour !');
  t.is(completion.choices[0].finish_reason, 'stop');
  t.deepEqual(completion.usage, { prompt_tokens: 21, completion_tokens: 7, total_tokens: 28, prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 } });

  const received = fake.requests[0];
  t.is(received.url, '/v1/messages');
  t.is(received.headers['x-api-key'], PROVIDER_KEY);
  t.is(received.headers['anthropic-version'], '2023-06-01');
  t.is(received.headers.authorization, undefined);
  t.deepEqual(fake.body(0), {
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    system: [{ type: 'text', text: 'Answer in French.' }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hello' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
    ],
    stop_sequences: ['###'],
  });
  const entry = await loggedOnce(gateway, id);
  t.like(entry, { status: 200, outcome: 'ok', provider: 'anthropic', usage: { promptTokens: 21, completionTokens: 7, totalTokens: 28 } });
  for (const secret of SECRETS) t.false(gateway.rawLog().includes(secret));
});

test('streamed chat: SSE events become chunks, usage comes last when asked for', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Streaming works fine.', finishReason: 'length', usage });
  const id = traceId('anthropic-stream');
  const stream = await client.chat.completions.create(
    { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Go' }], stream: true, stream_options: { include_usage: true } },
    { headers: { 'x-gateway-trace-id': id } },
  );
  const collected = await collectStream(stream);
  t.is(collected.text, 'Streaming works fine.');
  t.is(collected.finishReason, 'length');
  t.like(collected.usage, { prompt_tokens: 21, completion_tokens: 7, total_tokens: 28 });
  t.deepEqual(collected.chunks.at(-1)?.choices, []);
  t.true(collected.chunks.slice(0, -1).every((chunk) => chunk.usage === null));
  t.true(fake.body(0).stream);
  t.like(await loggedOnce(gateway, id), { outcome: 'ok', streaming: true, usage: { totalTokens: 28 } });
});

test('a streamed tool call round trip: the model asks, the client answers, the model replies', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer(
    { kind: 'toolCall', id: 'toolu_e2e_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}', usage },
    { kind: 'text', text: 'It is 18 degrees in Paris.', finishReason: 'stop', usage },
  );
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await collectStream(await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages, tools: [weatherTool], tool_choice: 'auto', stream: true }));
  t.is(first.finishReason, 'tool_calls');
  t.deepEqual(first.toolCalls, [{ id: 'toolu_e2e_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' }]);
  t.deepEqual(fake.body(0).tools, [{ name: 'get_weather', description: 'Current weather of a city', input_schema: weatherParameters }]);
  t.deepEqual(fake.body(0).tool_choice, { type: 'auto' });

  messages.push(
    { role: 'assistant', content: null, tool_calls: first.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) },
    { role: 'tool', tool_call_id: 'toolu_e2e_1', content: '{"temperature":18}' },
  );
  const second = await collectStream(await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages, tools: [weatherTool], stream: true }));
  t.is(second.text, 'It is 18 degrees in Paris.');
  t.is(second.finishReason, 'stop');
  t.deepEqual(fake.body(1).messages, [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_e2e_1', name: 'get_weather', input: { city: 'Paris', unit: 'c' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_e2e_1', content: '{"temperature":18}' }] },
  ]);
});

test('a stream that ends early is an error the SDK raises, logged as a stream error', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'truncated', text: 'Half an ans' });
  const id = traceId('anthropic-truncated');
  const stream = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Go' }], stream: true }, { headers: { 'x-gateway-trace-id': id } });
  const error = await t.throwsAsync(collectStream(stream), { instanceOf: OpenAI.APIError });
  t.regex(error!.message, /ended before it was complete/);
  t.like(await loggedOnce(gateway, id), { outcome: 'stream_error' });
});

test('an error event inside the stream ends the client stream with that error', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(sseWire(fixtureLines('anthropic', 'stream-error.txt'), true));
  });
  const id = traceId('anthropic-error-event');
  const stream = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Go' }], stream: true }, { headers: { 'x-gateway-trace-id': id } });
  const error = await t.throwsAsync(collectStream(stream), { instanceOf: OpenAI.APIError });
  t.regex(error!.message, /Overloaded/);
  t.like(await loggedOnce(gateway, id), { outcome: 'stream_error', error: { type: 'overloaded_error' } });
});

test('an upstream error keeps its status and Retry-After, with Anthropic\'s message mapped', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'error', status: 429, message: 'Number of request tokens has exceeded your per-minute rate limit', retryAfter: '7' });
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Go' }] }), { instanceOf: OpenAI.RateLimitError });
  t.is(error!.status, 429);
  t.is(error!.headers?.get('retry-after'), '7');
  t.like(error!.error, { message: 'Number of request tokens has exceeded your per-minute rate limit', type: 'rate_limit_error', provider: 'anthropic' });
});

test('fields Anthropic cannot honour are a 400 before anything is sent', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Go' }], n: 2 }), { instanceOf: OpenAI.BadRequestError });
  t.is(error!.param, 'n');
  t.is(fake.requests.length, 0);
});
