import test from 'ava';
import OpenAI from 'openai';
import { cohere } from './index.js';
import { openai } from '../openai/index.js';
import { cohereFixture, cohereStreamEvents } from './cohere-fake.js';
import { type Fake, startFake } from '../../../test/fakes/openai-fake.js';
import { gatewayClient, loggedOnce, startGateway, type TestGateway, traceId } from '../../../test/harness.js';
import { collectStream } from '../../../test/fakes/chat-e2e.js';

const API_KEY = 'co-test-key-0123456789';
const MODEL = 'command-a-03-2025';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(async (request, response) => {
    const scenario = request.headers['x-scenario'];
    if (scenario === 'rate-limited') {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' }).end(cohereFixture('error-429.json'));
      return;
    }
    const body = request.json();
    if (!body.stream) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(cohereFixture(body.tools ? 'chat-response-tool-calls.json' : 'chat-response-text.json'));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const hasToolResult = body.messages.some((message: { role: string }) => message.role === 'tool');
    let events = cohereStreamEvents(body.tools && !hasToolResult ? 'chat-stream-tool-calls.txt' : 'chat-stream-text.txt');
    if (scenario === 'cut') events = events.slice(0, 4);
    if (scenario === 'failed') events = [...events.slice(0, 3), 'event: message-end\ndata: {"type":"message-end","delta":{"finish_reason":"ERROR","error":"The generation failed."}}\n\n'];
    for (const event of events) {
      // each event written in two halves, so SSE framing is split across reads
      const half = Math.floor(event.length / 2);
      response.write(event.slice(0, half));
      await new Promise((resolve) => setImmediate(resolve));
      response.write(event.slice(half));
    }
    response.end();
  });
  gateway = await startGateway({ providers: [openai(), cohere()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = (headers: Record<string, string> = {}) =>
  gatewayClient(
    gateway.url,
    { 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': `${fake.origin}/v2`, 'x-gateway-forward-headers': 'x-scenario', ...headers },
    API_KEY,
  );

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

test.serial('plain chat: /v2/chat with Bearer auth and the mapped body; usage logged', async (t) => {
  const trace = traceId('cohere-plain');
  const before = fake.requests.length;
  const completion = await client({ 'x-gateway-trace-id': trace }).chat.completions.create({
    model: MODEL,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ],
    top_p: 0.5,
  });
  t.is(completion.choices[0].message.content, 'Hello! How can I help you today?');
  t.is(completion.choices[0].finish_reason, 'stop');
  const received = fake.requests[before];
  t.is(received.url, '/v2/chat');
  t.is(received.headers.authorization, `Bearer ${API_KEY}`);
  t.deepEqual(received.json(), {
    model: MODEL,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ],
    p: 0.5,
  });
  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 71, completionTokens: 9, totalTokens: 80 });
  t.false(gateway.rawLog().includes(API_KEY));
});

test.serial('plain tool call', async (t) => {
  const completion = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Weather?' }], tools });
  t.is(completion.choices[0].finish_reason, 'tool_calls');
  t.is(completion.choices[0].message.tool_calls?.[0].id, 'get_weather_9p2bq3cn8v7e');
});

test.serial('streamed chat with usage', async (t) => {
  const trace = traceId('cohere-stream');
  const stream = await client({ 'x-gateway-trace-id': trace }).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } });
  let text = '';
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  t.is(text, 'Hello! How can I help?');
  t.deepEqual(usage, { prompt_tokens: 71, completion_tokens: 7, total_tokens: 78 });
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.outcome, 'ok');
});

test.serial('streamed tool-call round trip', async (t) => {
  const sdk = client();
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await sdk.chat.completions.create({ model: MODEL, messages, tools, stream: true });
  const collected = await collectStream(first);
  const [{ id, name, arguments: args }] = collected.toolCalls;
  const finish = collected.finishReason;
  t.is(finish, 'tool_calls');
  t.deepEqual([id, name, JSON.parse(args)], ['get_weather_s7k2m4', 'get_weather', { city: 'Paris' }]);
  messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] }, { role: 'tool', tool_call_id: id, content: '18C' });
  const before = fake.requests.length;
  const second = await sdk.chat.completions.create({ model: MODEL, messages, tools, stream: true });
  const { text } = await collectStream(second);
  t.is(text, 'Hello! How can I help?');
  t.deepEqual(fake.requests[before].json().messages.slice(1), [
    { role: 'assistant', tool_calls: [{ id: 'get_weather_s7k2m4', type: 'function', function: { name: 'get_weather', arguments: args } }] },
    { role: 'tool', tool_call_id: 'get_weather_s7k2m4', content: '18C' },
  ]);
});

test.serial('a cut stream and a failed message-end both raise an SDK error', async (t) => {
  for (const [scenario, pattern] of [
    ['cut', /ended before it was complete/],
    ['failed', /The generation failed/],
  ] as const) {
    const trace = traceId(`cohere-${scenario}`);
    const stream = await client({ 'x-scenario': scenario, 'x-gateway-trace-id': trace }).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const error = await t.throwsAsync(async () => {
      for await (const _chunk of stream) {
        // read until the error
      }
    });
    t.regex(error!.message, pattern);
    t.is((await loggedOnce(gateway, trace)).outcome, 'stream_error');
  }
});

test.serial('a 429 keeps its status, Retry-After and message', async (t) => {
  const error = await t.throwsAsync(client({ 'x-scenario': 'rate-limited' }).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }), {
    instanceOf: OpenAI.RateLimitError,
  });
  t.is((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after'), '3');
  t.regex(error!.message, /Trial key/);
});
