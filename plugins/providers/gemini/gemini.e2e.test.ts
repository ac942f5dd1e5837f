import test from 'ava';
import OpenAI from 'openai';
import { collectStream, weatherTool } from '../../../test/fakes/chat-e2e.js';
import { startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { fixtureLines, sseWire } from '../../../test/fakes/stream-fuzz.js';
import { loggedOnce, PROVIDER_KEY, sdkClient, startGateway, type TestGateway, traceId } from '../../../test/harness.js';
import { geminiFakeRenderer } from './gemini-fake.js';
import { gemini } from './index.js';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [gemini()] });
});
test.after.always(() => gateway.close());

const setup = async () => {
  const fake = await startRenderedFake(geminiFakeRenderer);
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-provider': 'gemini' });
  return { fake, client };
};
const usage = { promptTokens: 13, completionTokens: 5 };

test('plain chat: generateContent receives the mapped body with x-goog-api-key; usage is logged', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Hallo!', finishReason: 'stop', usage });
  const id = traceId('gemini-plain');
  const completion = await client.chat.completions.create(
    { model: 'gemini-2.5-flash', messages: [{ role: 'system', content: 'German.' }, { role: 'user', content: 'Hello' }], max_tokens: 32, temperature: 0.5 },
    { headers: { 'x-gateway-trace-id': id } },
  );
  t.is(completion.choices[0].message.content, 'Hallo!');
  t.is(completion.choices[0].finish_reason, 'stop');
  t.like(completion.usage, { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 });
  const received = fake.requests[0];
  t.is(received.url, '/v1/models/gemini-2.5-flash:generateContent');
  t.is(received.headers['x-goog-api-key'], PROVIDER_KEY);
  t.is(received.headers.authorization, undefined);
  t.deepEqual(fake.body(0), {
    contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
    systemInstruction: { parts: [{ text: 'German.' }] },
    generationConfig: { temperature: 0.5, maxOutputTokens: 32 },
  });
  t.like(await loggedOnce(gateway, id), { status: 200, outcome: 'ok', provider: 'gemini', model: 'gemini-2.5-flash', usage: { totalTokens: 18 } });
});

test('streamed chat through streamGenerateContent?alt=sse, with n = 2 candidates and usage last', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Twice over', finishReason: 'stop', usage, choices: 2 });
  const id = traceId('gemini-stream');
  const stream = await client.chat.completions.create(
    { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Go' }], n: 2, stream: true, stream_options: { include_usage: true } },
    { headers: { 'x-gateway-trace-id': id } },
  );
  const collected = await collectStream(stream);
  const texts = ['', ''];
  for (const chunk of collected.chunks) for (const choice of chunk.choices) texts[choice.index] += choice.delta.content ?? '';
  t.deepEqual(texts, ['Twice over0', 'Twice over1']);
  t.like(collected.usage, { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 });
  t.is(fake.requests[0].url, '/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  t.is(fake.body(0).generationConfig.candidateCount, 2);
  t.like(await loggedOnce(gateway, id), { outcome: 'ok', streaming: true, usage: { totalTokens: 18 } });
});

test('a streamed tool call round trip with a strict OpenAI schema cleaned for Gemini', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer(
    { kind: 'toolCall', id: 'call_gemini_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}', usage },
    { kind: 'text', text: 'Paris: 18 degrees.', finishReason: 'stop', usage },
  );
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await collectStream(await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool], tool_choice: 'required', stream: true }));
  t.is(first.finishReason, 'tool_calls');
  t.deepEqual(first.toolCalls, [{ id: 'call_gemini_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' }]);
  t.deepEqual(fake.body(0).tools, [
    {
      functionDeclarations: [
        {
          name: 'get_weather',
          description: 'Current weather of a city',
          parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', nullable: true, enum: ['c', 'f'] } }, required: ['city', 'unit'] },
        },
      ],
    },
  ]);
  t.deepEqual(fake.body(0).toolConfig, { functionCallingConfig: { mode: 'ANY' } });

  messages.push(
    { role: 'assistant', content: null, tool_calls: first.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) },
    { role: 'tool', tool_call_id: 'call_gemini_1', content: '{"temperature":18}' },
  );
  const second = await collectStream(await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool], stream: true }));
  t.is(second.text, 'Paris: 18 degrees.');
  t.deepEqual(fake.body(1).contents, [
    { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'c' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 18 } } }] },
  ]);
});

test('a stream without a finishReason is an error the SDK raises, logged as a stream error', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'truncated', text: 'Half an ans' });
  const id = traceId('gemini-truncated');
  const stream = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Go' }], stream: true }, { headers: { 'x-gateway-trace-id': id } });
  await t.throwsAsync(collectStream(stream), { instanceOf: OpenAI.APIError, message: /ended before it was complete/ });
  t.like(await loggedOnce(gateway, id), { outcome: 'stream_error' });
});

test('an error object inside the stream ends the client stream with it', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(sseWire(fixtureLines('google-shared', 'stream-error.txt'), false));
  });
  const id = traceId('gemini-error-event');
  const stream = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Go' }], stream: true }, { headers: { 'x-gateway-trace-id': id } });
  await t.throwsAsync(collectStream(stream), { instanceOf: OpenAI.APIError, message: /overloaded/ });
  t.like(await loggedOnce(gateway, id), { outcome: 'stream_error', error: { code: 'UNAVAILABLE' } });
});

test('an upstream error keeps its status with Google\'s message and status mapped', async (t) => {
  const { fake, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'error', status: 400, message: 'API key not valid. Please pass a valid API key.' });
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Go' }] }), { instanceOf: OpenAI.BadRequestError });
  t.like(error!.error, { message: 'API key not valid. Please pass a valid API key.', type: 'invalid_request_error', code: 'INVALID_ARGUMENT', provider: 'gemini' });
});
