import test from 'ava';
import { startRenderedFake } from '../fakes/rendered-fake.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { loggedOnce, SECRETS, startGateway, type TestGateway, traceId } from '../harness.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { anthropicClient, PDF_BASE64, PNG_BASE64, postMessages, streamChecked, weatherTool } from './helpers.js';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [openai()] });
});
test.after.always(() => gateway.close());

const usage = { promptTokens: 30, completionTokens: 9 };

const setup = async () => {
  const fake = await startRenderedFake(openaiFake);
  const headers = { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl };
  return { fake, headers, client: anthropicClient(gateway.url, headers) };
};

test('messages.create through OpenAI: the request is translated to chat, the answer is a Message, logged as operation messages', async (t) => {
  const { fake, headers, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Bonjour !', finishReason: 'stop', usage });
  const id = traceId('messages-openai-plain');
  const message = await client.messages.create(
    {
      model: 'gpt-4o-mini',
      max_tokens: 128,
      system: [{ type: 'text', text: 'Answer in French.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }] }],
      stop_sequences: ['###'],
      metadata: { user_id: 'user-7' },
    },
    { headers: { ...headers, 'x-gateway-trace-id': id } },
  );
  t.is(message.type, 'message');
  t.is(message.role, 'assistant');
  t.true(message.id.startsWith('msg_'));
  t.deepEqual(message.content, [{ type: 'text', text: 'Bonjour !' }]);
  t.is(message.stop_reason, 'end_turn');
  t.like(message.usage, { input_tokens: 30, output_tokens: 9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });

  t.is(fake.requests[0].url, '/v1/chat/completions');
  t.is(fake.requests[0].headers.authorization, `Bearer ${SECRETS[1]}`);
  t.is(fake.requests[0].headers['x-api-key'], undefined, 'the gateway key is never forwarded');
  t.deepEqual(fake.body(0), {
    model: 'gpt-4o-mini',
    max_tokens: 128,
    messages: [
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: [{ type: 'text', text: 'Hello' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }] },
    ],
    stop: ['###'],
    user: 'user-7',
  });
  const entry = await loggedOnce(gateway, id);
  t.like(entry, { operation: 'messages', provider: 'openai', status: 200, path: '/v1/messages', usage: { promptTokens: 30, completionTokens: 9, totalTokens: 39 } });
  t.deepEqual(entry.droppedFields, ['cache_control']);
});

test('messages.stream through OpenAI: the chat chunks come back as Anthropic events that pass the grammar', async (t) => {
  const { fake, headers, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Streaming answers arrive in pieces.', finishReason: 'stop', usage });
  const id = traceId('messages-openai-stream');
  const stream = client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }, { headers: { ...headers, 'x-gateway-trace-id': id } });
  let text = '';
  stream.on('text', (delta) => {
    text += delta;
  });
  const final = await stream.finalMessage();
  t.is(text, 'Streaming answers arrive in pieces.');
  t.deepEqual(final.content, [{ type: 'text', text: 'Streaming answers arrive in pieces.' }]);
  t.is(final.stop_reason, 'end_turn');
  t.like(final.usage, { input_tokens: 30, output_tokens: 9 });
  t.true(fake.body(0).stream);
  const entry = await loggedOnce(gateway, id);
  t.like(entry, { operation: 'messages', streaming: true, status: 200, outcome: 'ok', usage: { promptTokens: 30, completionTokens: 9 } });

  const checked = await streamChecked(gateway.url, { model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }, headers);
  t.is(checked.response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.deepEqual(checked.message.content, [{ type: 'text', text: 'Streaming answers arrive in pieces.' }]);
  t.is(checked.message.stop_reason, 'end_turn');
  t.deepEqual(
    checked.events.map((event) => event.event).filter((name, index, all) => name !== 'content_block_delta' || all[index - 1] !== 'content_block_delta'),
    ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
  );
});

test('a tool round trip through OpenAI: tool_use out, tool_result back, plain and streamed', async (t) => {
  const { fake, headers, client } = await setup();
  t.teardown(() => fake.close());
  const call = { kind: 'toolCall' as const, id: 'call_42', name: 'get_weather', arguments: '{"city":"Paris"}', usage };
  fake.answer(call, call, { kind: 'text', text: 'It is sunny in Paris.', finishReason: 'stop', usage });
  const first = await client.messages.create({
    model: 'gpt-4o-mini',
    max_tokens: 256,
    tools: [weatherTool],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
  });
  t.is(first.stop_reason, 'tool_use');
  t.deepEqual(first.content, [{ type: 'tool_use', id: 'call_42', name: 'get_weather', input: { city: 'Paris' } }]);
  t.like(fake.body(0), {
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city.', parameters: weatherTool.input_schema } }],
    tool_choice: 'required',
    parallel_tool_calls: false,
  });

  const streamed = await streamChecked(gateway.url, { model: 'gpt-4o-mini', max_tokens: 256, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] }, headers);
  t.deepEqual(streamed.message.content, [{ type: 'tool_use', id: 'call_42', name: 'get_weather', input: { city: 'Paris' } }]);
  t.is(streamed.message.stop_reason, 'tool_use');

  const second = await client.messages.create({
    model: 'gpt-4o-mini',
    max_tokens: 256,
    tools: [weatherTool],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_42', content: 'sunny, 24°C' }, { type: 'text', text: 'Thanks' }] },
    ],
  });
  t.deepEqual(second.content, [{ type: 'text', text: 'It is sunny in Paris.' }]);
  t.deepEqual(fake.body(2).messages, [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_42', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_42', content: 'sunny, 24°C' },
    { role: 'user', content: 'Thanks' },
  ]);
});

test('a PDF document goes to chat as a file part (file_data data URL and filename)', async (t) => {
  const { fake, headers, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'One page.', finishReason: 'stop', usage });
  const message = await client.messages.create({
    model: 'gpt-4o-mini',
    max_tokens: 64,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 }, title: 'report.pdf' },
          { type: 'text', text: 'How many pages?' },
        ],
      },
    ],
  });
  t.deepEqual(message.content, [{ type: 'text', text: 'One page.' }]);
  t.deepEqual(fake.body(0).messages[0].content, [
    { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF_BASE64}`, filename: 'report.pdf' } },
    { type: 'text', text: 'How many pages?' },
  ]);
  t.is(headers['x-gateway-provider'], 'openai');
});

test('fields OpenAI cannot take are dropped and listed in the log; the request still succeeds', async (t) => {
  const { fake, headers } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'ok', finishReason: 'stop', usage });
  const id = traceId('messages-dropped');
  const response = await postMessages(
    gateway.url,
    {
      model: 'gpt-4o-mini',
      max_tokens: 64,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 5,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      tools: [weatherTool, { type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'text', text: 'Hello' }] },
        { role: 'user', content: 'Again' },
      ],
    },
    { ...headers, 'x-gateway-trace-id': id, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-management-2025-06-27' },
    '/v1/messages?beta=true',
  );
  t.is(response.status, 200);
  const body = fake.body(0);
  t.like(body, { temperature: 0.5, top_p: 0.9 });
  t.false('top_k' in body);
  t.false('thinking' in body);
  t.false('context_management' in body);
  t.is(body.tools.length, 1);
  t.deepEqual(body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello' },
    { role: 'user', content: 'Again' },
  ]);
  t.is(fake.requests[0].headers['anthropic-beta'], undefined);
  const entry = await loggedOnce(gateway, id);
  t.deepEqual([...(entry.droppedFields ?? [])].sort(), ['content.thinking', 'context_management', 'output_config.effort', 'thinking', 'tools.web_search_20250305', 'top_k']);
});

test('an upstream error keeps its status and gets the Messages error shape', async (t) => {
  const { fake, headers, client } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'error', status: 429, message: 'Slow down', retryAfter: '3' });
  const error = await t.throwsAsync(client.messages.create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }));
  t.is((error as { status?: number }).status, 429);
  const response = await postMessages(gateway.url, { model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }, headers);
  t.is(response.status, 429);
  t.is(response.headers.get('retry-after'), '3');
  t.deepEqual(await response.json(), { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } });
});

test('a stream cut short by the upstream ends with an error event', async (t) => {
  const { fake, headers } = await setup();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'truncated', text: 'Half an answ' });
  const response = await postMessages(gateway.url, { model: 'gpt-4o-mini', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'Hi' }] }, headers);
  const checked = checkMessagesStream(await response.text());
  t.like(checked.error, { type: 'api_error' });
  t.is(checked.events.at(-1)?.event, 'error');
});
