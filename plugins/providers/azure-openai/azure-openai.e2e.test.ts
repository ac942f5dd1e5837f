import test from 'ava';
import OpenAI from 'openai';
import { azureOpenAI } from './index.js';
import { openai } from '../openai/index.js';
import { azureFixture, azureStreamEvents } from './azure-openai-fake.js';
import { type Fake, startFake } from '../../../test/fakes/openai-fake.js';
import { gatewayClient, loggedOnce, startGateway, type TestGateway, traceId } from '../../../test/harness.js';
import { collectStream } from '../../../test/fakes/chat-e2e.js';

const API_KEY = '0123456789abcdef0123456789abcdef';
const PATH = '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(async (request, response) => {
    const scenario = request.headers['x-scenario'];
    const body = request.json();
    if (scenario === 'prompt-filtered') {
      response.writeHead(400, { 'content-type': 'application/json' }).end(azureFixture('error-content-filter.json'));
      return;
    }
    if (!body.stream) {
      const name = scenario === 'filtered' ? 'chat-completion-filtered.json' : 'chat-completion-tool-calls.json';
      response.writeHead(200, { 'content-type': 'application/json' }).end(azureFixture(name));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const hasToolResult = body.messages.some((message: { role: string }) => message.role === 'tool');
    const name = scenario === 'stream-filtered' ? 'chat-stream-filtered.txt' : body.tools && !hasToolResult ? 'chat-stream-tool-calls.txt' : 'chat-stream.txt';
    let events = azureStreamEvents(name);
    if (scenario === 'cut') events = events.slice(0, 3);
    if (scenario === 'error-event') events = [...events.slice(0, 3), 'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","code":"internal_error"}}\n\n'];
    for (const event of events) response.write(event);
    response.end();
  });
  gateway = await startGateway({ providers: [openai(), azureOpenAI()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = (headers: Record<string, string> = {}, apiKey = API_KEY) =>
  gatewayClient(
    gateway.url,
    {
      'x-gateway-provider': 'azure-openai',
      'x-gateway-custom-host': `${fake.origin}/openai`,
      'x-gateway-cloud-a-resource-name': 'contoso',
      'x-gateway-cloud-a-deployment-id': 'gpt4o-prod',
      'x-gateway-cloud-a-api-version': '2024-10-21',
      'x-gateway-cloud-a-model-name': 'gpt-4o',
      'x-gateway-forward-headers': 'x-scenario',
      ...headers,
    },
    apiKey,
  );

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

test.serial('plain chat: deployment URL, api-key header, body as sent, usage logged', async (t) => {
  const trace = traceId('azure-plain');
  const before = fake.requests.length;
  const completion = await client({ 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather?' }], tools });
  t.deepEqual(completion.choices[0].message.tool_calls, [{ id: 'call_az1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
  t.false('prompt_filter_results' in completion);
  const received = fake.requests[before];
  t.is(received.url, PATH);
  t.is(received.headers['api-key'], API_KEY);
  t.is(received.headers.authorization, undefined);
  t.deepEqual(received.json(), { model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather?' }], tools });
  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 60, completionTokens: 15, totalTokens: 75 });
  t.false(gateway.rawLog().includes(API_KEY));
});

test.serial('an Entra ID token goes as Authorization: Bearer', async (t) => {
  const jwt = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJjb2duaXRpdmVzZXJ2aWNlcyJ9.c2lnbmF0dXJlLWJ5dGVz';
  const before = fake.requests.length;
  await client({}, jwt).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
  t.is(fake.requests[before].headers.authorization, `Bearer ${jwt}`);
  t.is(fake.requests[before].headers['api-key'], undefined);
});

test.serial('content filter: finish_reason content_filter, plain and streamed; a filtered prompt is a 400 with code content_filter', async (t) => {
  const plain = await client({ 'x-scenario': 'filtered' }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
  t.is(plain.choices[0].finish_reason, 'content_filter');
  const stream = await client({ 'x-scenario': 'stream-filtered' }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: true });
  let finish: string | null = null;
  for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish;
  t.is(finish, 'content_filter');
  const error = await t.throwsAsync(client({ 'x-scenario': 'prompt-filtered' }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), {
    instanceOf: OpenAI.BadRequestError,
  });
  t.is((error as InstanceType<typeof OpenAI.BadRequestError>).code, 'content_filter');
});

test.serial('streamed chat: the prompt-filter chunk is dropped, usage arrives when asked', async (t) => {
  const trace = traceId('azure-stream');
  const stream = await client({ 'x-gateway-trace-id': trace }).chat.completions.create({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'Hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello from Azure!');
  t.is(chunks[0].id, 'chatcmpl-AZstream');
  t.deepEqual(chunks.at(-1)?.usage, { completion_tokens: 4, prompt_tokens: 11, total_tokens: 15 });
  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 11, completionTokens: 4, totalTokens: 15 });
});

test.serial('streamed tool-call round trip', async (t) => {
  const sdk = client();
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await sdk.chat.completions.create({ model: 'gpt-4o', messages, tools, stream: true });
  const collected = await collectStream(first);
  const [{ id, name, arguments: args }] = collected.toolCalls;
  const finish = collected.finishReason;
  t.deepEqual([id, name, args, finish], ['call_azs1', 'get_weather', '{"city":"Paris"}', 'tool_calls']);
  messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] }, { role: 'tool', tool_call_id: id, content: '18C' });
  const before = fake.requests.length;
  const second = await sdk.chat.completions.create({ model: 'gpt-4o', messages, tools, stream: true });
  const { text } = await collectStream(second);
  t.is(text, 'Hello from Azure!');
  t.deepEqual(fake.requests[before].json().messages.at(-1), { role: 'tool', tool_call_id: 'call_azs1', content: '18C' });
});

test.serial('a cut stream and an error event both raise an SDK error', async (t) => {
  for (const scenario of ['cut', 'error-event']) {
    const stream = await client({ 'x-scenario': scenario }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const error = await t.throwsAsync(async () => {
      for await (const _chunk of stream) {
        // read until the error
      }
    });
    t.regex(error!.message, scenario === 'cut' ? /ended before it was complete/ : /The server had an error/);
  }
});

test.serial('a missing deployment header is a 400 naming it, before anything is sent', async (t) => {
  const before = fake.requests.length;
  const error = await t.throwsAsync(client({ 'x-gateway-cloud-a-deployment-id': '' }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }), {
    instanceOf: OpenAI.BadRequestError,
  });
  t.is((error as InstanceType<typeof OpenAI.BadRequestError>).param, 'x-gateway-cloud-a-deployment-id');
  t.is(fake.requests.length, before);
});
