import test from 'ava';
import OpenAI from 'openai';
import { bedrock } from './index.js';
import { openai } from '../openai/index.js';
import { bedrockFixture, bedrockStreamFrames, checkSigV4 } from './bedrock-fake.js';
import { type Fake, startFake } from '../../../test/fakes/openai-fake.js';
import { gatewayClient, loggedOnce, startGateway, type TestGateway, traceId } from '../../../test/harness.js';

const ACCESS_KEY_ID = 'AKIDE2ETEST000000001';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYE2ETSECRET';
const SESSION = 'FwoGZXIvYXdzE2ETSESSIONTOKEN';
const REGION = 'eu-central-1';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

let fake: Fake;
let gateway: TestGateway;

/** Writes frames one by one, each split in two writes, so frames straddle reads. */
async function writeFrames(response: import('node:http').ServerResponse, frames: Buffer[]): Promise<void> {
  for (const frame of frames) {
    const cut = Math.floor(frame.length / 2);
    response.write(frame.subarray(0, cut));
    await new Promise((resolve) => setImmediate(resolve));
    response.write(frame.subarray(cut));
  }
}

test.before(async () => {
  fake = await startFake(async (request, response) => {
    const scenario = request.headers['x-scenario'];
    if (scenario === 'error-400') {
      response.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      response.end(bedrockFixture('error-validation.json'));
      return;
    }
    if (request.url.endsWith('/converse')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(bedrockFixture('converse-response-text.json'));
      return;
    }
    if (request.url.endsWith('/converse-stream')) {
      response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      const body = request.json();
      const last = body.messages.at(-1);
      const hasToolResult = last.content.some((block: Record<string, unknown>) => block.toolResult);
      if (scenario === 'cut') {
        await writeFrames(response, bedrockStreamFrames('converse-stream-text.jsonl').slice(0, 3));
        response.end();
      } else if (scenario === 'garbage') {
        await writeFrames(response, bedrockStreamFrames('converse-stream-text.jsonl').slice(0, 2));
        const frame = bedrockStreamFrames('converse-stream-text.jsonl')[2];
        frame[frame.length - 1] ^= 0xff; // a message CRC that does not match
        response.write(frame);
        response.end(Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00, 0x01]));
      } else if (scenario === 'exception') {
        await writeFrames(response, bedrockStreamFrames('converse-stream-exception.jsonl'));
        response.end();
      } else if (body.toolConfig && !hasToolResult) {
        await writeFrames(response, bedrockStreamFrames('converse-stream-tool-use.jsonl'));
        response.end();
      } else {
        await writeFrames(response, bedrockStreamFrames('converse-stream-text.jsonl'));
        response.end();
      }
      return;
    }
    response.writeHead(404).end();
  });
  gateway = await startGateway({ providers: [openai(), bedrock()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = (headers: Record<string, string> = {}, apiKey = ACCESS_KEY_ID) =>
  gatewayClient(
    gateway.url,
    {
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': fake.origin,
      'x-gateway-cloud-c-secret-access-key': SECRET,
      'x-gateway-cloud-c-session-token': SESSION,
      'x-gateway-cloud-c-region': REGION,
      ...headers,
    },
    apiKey,
  );

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
];

test.serial('plain chat: signed Converse request, mapped answer, usage logged', async (t) => {
  const trace = traceId('bedrock-plain');
  const before = fake.requests.length;
  const completion = await client({ 'x-gateway-trace-id': trace }).chat.completions.create({
    model: MODEL,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ],
    max_tokens: 100,
    stop: ['\n\n'],
  });
  t.is(completion.choices[0].message.content, 'Hello! How can I help you today?');
  t.is(completion.choices[0].finish_reason, 'stop');
  t.deepEqual(completion.usage, { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 });

  const received = fake.requests[before];
  t.is(received.method, 'POST');
  t.is(received.url, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
  t.deepEqual(checkSigV4(received, { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, sessionToken: SESSION }, REGION), []);
  t.deepEqual(received.json(), {
    messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
    system: [{ text: 'Be brief.' }],
    inferenceConfig: { maxTokens: 100, stopSequences: ['\n\n'] },
  });
  t.is(received.headers['x-gateway-cloud-c-secret-access-key'], undefined);

  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 12, completionTokens: 9, totalTokens: 21 });
  t.false(gateway.rawLog().includes(SECRET));
  t.false(gateway.rawLog().includes(SESSION));
});

test.serial('without a secret key the token goes as a Bedrock API key (Bearer), unsigned', async (t) => {
  const before = fake.requests.length;
  await client({ 'x-gateway-cloud-c-secret-access-key': '', 'x-gateway-cloud-c-session-token': '' }, 'ABSKbedrockapikey123').chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Hi' }],
  });
  const received = fake.requests[before];
  t.is(received.headers.authorization, 'Bearer ABSKbedrockapikey123');
  t.is(received.headers['x-amz-date'], undefined);
});

test.serial('streamed chat: eventstream frames split across reads become SDK chunks with usage', async (t) => {
  const trace = traceId('bedrock-stream');
  const before = fake.requests.length;
  const stream = await client({ 'x-gateway-trace-id': trace }).chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Hello' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  t.is(text, 'Hello! How can I help?');
  t.is(finish, 'stop');
  t.deepEqual(usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
  const received = fake.requests[before];
  t.is(received.url, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
  t.deepEqual(checkSigV4(received, { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, sessionToken: SESSION }, REGION), []);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.outcome, 'ok');
  t.deepEqual(entry.usage, { promptTokens: 12, completionTokens: 7, totalTokens: 19 });
});

test.serial('streamed tool-call round trip: the model asks, the client answers, the model replies', async (t) => {
  const sdk = client();
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await sdk.chat.completions.create({ model: MODEL, messages, tools, stream: true });
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let finish: string | null = null;
  for await (const chunk of first) {
    for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
      calls[call.index] ??= { id: '', name: '', arguments: '' };
      if (call.id) calls[call.index].id = call.id;
      if (call.function?.name) calls[call.index].name = call.function.name;
      calls[call.index].arguments += call.function?.arguments ?? '';
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.is(finish, 'tool_calls');
  t.deepEqual(calls, [{ id: 'tooluse_stream01', name: 'get_weather', arguments: '{"city": "Paris"}' }]);

  messages.push(
    { role: 'assistant', content: null, tool_calls: [{ id: calls[0].id, type: 'function', function: { name: calls[0].name, arguments: calls[0].arguments } }] },
    { role: 'tool', tool_call_id: calls[0].id, content: '18C, sunny' },
  );
  const before = fake.requests.length;
  const second = await sdk.chat.completions.create({ model: MODEL, messages, tools, stream: true });
  let text = '';
  for await (const chunk of second) text += chunk.choices[0]?.delta.content ?? '';
  t.is(text, 'Hello! How can I help?');
  const sent = fake.requests[before].json();
  t.deepEqual(sent.messages.slice(1), [
    { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_stream01', name: 'get_weather', input: { city: 'Paris' } } }] },
    { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_stream01', content: [{ text: '18C, sunny' }] } }] },
  ]);
  t.deepEqual(sent.toolConfig.toolChoice, { auto: {} });
});

test.serial('a stream cut before its end raises an SDK error and is logged as a stream error', async (t) => {
  const trace = traceId('bedrock-cut');
  const stream = await client({ 'x-scenario': 'cut', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace }).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true });
  let text = '';
  const error = await t.throwsAsync(async () => {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  });
  t.is(text, 'Hello! How can');
  t.regex(error!.message, /ended before it was complete/);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.outcome, 'stream_error');
});

test.serial('corrupt frames end the stream with a malformed_stream error; the gateway keeps serving', async (t) => {
  const trace = traceId('bedrock-garbage');
  const stream = await client({ 'x-scenario': 'garbage', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace }).chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Hi' }],
    stream: true,
  });
  let text = '';
  const error = await t.throwsAsync(async () => {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  });
  t.is(text, 'Hello');
  t.regex(error!.message, /malformed: message checksum mismatch/);
  t.is((await loggedOnce(gateway, trace)).outcome, 'stream_error');
  const after = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] });
  t.is(after.choices[0].message.content, 'Hello! How can I help you today?');
});

test.serial('an exception frame ends the stream with its message as an SDK error', async (t) => {
  const stream = await client({ 'x-scenario': 'exception', 'x-gateway-forward-headers': 'x-scenario' }).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true });
  const error = await t.throwsAsync(async () => {
    for await (const _chunk of stream) {
      // reading until the error
    }
  });
  t.regex(error!.message, /The model stream failed/);
});

test.serial('an upstream error keeps its status and maps its body', async (t) => {
  const error = await t.throwsAsync(client({ 'x-scenario': 'error-400', 'x-gateway-forward-headers': 'x-scenario' }).chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'Hi' }] }), {
    instanceOf: OpenAI.BadRequestError,
  });
  t.is(error!.status, 400);
  t.like((error as InstanceType<typeof OpenAI.BadRequestError>).error, { message: 'The provided model identifier is invalid.', code: 'ValidationException', provider: 'bedrock' });
});

test.serial('a request Bedrock cannot express is a 400 naming the field, and nothing is sent', async (t) => {
  const before = fake.requests.length;
  const error = await t.throwsAsync(
    client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }),
    { instanceOf: OpenAI.BadRequestError },
  );
  t.is((error as InstanceType<typeof OpenAI.BadRequestError>).param, 'messages[0].content[0].image_url.url');
  t.is(fake.requests.length, before);
});
