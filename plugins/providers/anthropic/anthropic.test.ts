import test from 'ava';
import type { ChatRequest, ProviderTarget, StreamStep } from '../../../core/spec/index.js';
import { clientEvents, fixtureLines, providerFixture, randomBytes, relayText, split, sseWire } from '../../../test/fakes/stream-fuzz.js';
import { anthropic, createAnthropicStreamMapper, fromAnthropicResponse, mapAnthropicError, toAnthropicBody } from './index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

const fixture = (name: string) => JSON.parse(providerFixture('anthropic', name));
const target: ProviderTarget = { baseUrl: 'https://api.anthropic.com/v1', customHost: false, headers: {}, credentials: { apiKey: 'sk-ant-test' }, strict: true };
const loose: ProviderTarget = { ...target, strict: false };
const options = { defaultMaxTokens: 4096 };
const base: ChatRequest = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] };

test('system and developer messages become system blocks; max_tokens defaults; sampling and stop map', (t) => {
  const body = toAnthropicBody(
    {
      ...base,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'hi' },
      ],
      temperature: 1.7,
      top_p: 0.9,
      stop: 'END',
      user: 'user-42',
      frequency_penalty: 1,
    },
    options,
  );
  t.deepEqual(body, {
    model: 'claude-sonnet-4-5',
    max_tokens: 4096,
    messages: [{ role: 'user', content: 'hi' }],
    system: [
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Answer in French.' },
    ],
    temperature: 1,
    top_p: 0.9,
    stop_sequences: ['END'],
    metadata: { user_id: 'user-42' },
  });
  t.is(toAnthropicBody({ ...base, max_tokens: 99, max_completion_tokens: 55 }, options).max_tokens, 55);
  t.deepEqual(toAnthropicBody({ ...base, stop: ['a', 'b'], stream: true }, options).stop_sequences, ['a', 'b']);
  t.true(toAnthropicBody({ ...base, stream: true }, options).stream);
});

test('images: data URLs become base64 sources, http URLs url sources, anything else a 400 naming the part', (t) => {
  const body = toAnthropicBody(
    {
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare', cache_control: { type: 'ephemeral' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
          ],
        },
      ],
    },
    options,
  );
  t.deepEqual(body.messages[0].content, [
    { type: 'text', text: 'Compare', cache_control: { type: 'ephemeral' } },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
  ]);
  const error = t.throws(() =>
    toAnthropicBody({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }, options),
  ) as unknown as { status: number; body: { param: string } };
  t.is(error.status, 400);
  t.is(error.body.param, 'messages[0].content[0].image_url.url');
});

test('a multi-turn tool conversation maps to tool_use and merged tool_result turns', (t) => {
  const body = toAnthropicBody(
    {
      ...base,
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: 'not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '14:00' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
    },
    options,
  );
  t.deepEqual(body.messages, [
    { role: 'user', content: 'Weather and time in Paris?' },
    {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: { arguments: 'not json' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '14:00' }] },
        { type: 'text', text: 'Thanks' },
      ],
    },
  ]);
  t.deepEqual(body.tools, [
    { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    { name: 'get_time', input_schema: { type: 'object', properties: {} } },
  ]);
  t.deepEqual(body.tool_choice, { type: 'any', disable_parallel_tool_use: true });
});

test('tool_choice auto, none and named map to Anthropic tool_choice', (t) => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
  t.deepEqual(toAnthropicBody({ ...base, tools, tool_choice: 'auto' }, options).tool_choice, { type: 'auto' });
  t.deepEqual(toAnthropicBody({ ...base, tools, tool_choice: 'none' }, options).tool_choice, { type: 'none' });
  t.deepEqual(toAnthropicBody({ ...base, tools, tool_choice: { type: 'function', function: { name: 'f' } } }, options).tool_choice, { type: 'tool', name: 'f' });
  t.is(toAnthropicBody({ ...base, tools }, options).tool_choice, undefined);
});

test('thinking maps to extended thinking, max_tokens leaves room for the budget, thinking blocks go back upstream', (t) => {
  const body = toAnthropicBody(
    {
      ...base,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a', content_blocks: [{ type: 'thinking', text: 'hmm', signature: 'sig' }, { type: 'redacted_thinking', data: 'xyz' }, { type: 'text', text: 'a' }] },
        { role: 'user', content: 'q2' },
      ],
    },
    options,
  );
  t.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 2048 });
  t.is(body.max_tokens, 4096 + 2048);
  t.deepEqual(body.messages[1].content, [
    { type: 'thinking', thinking: 'hmm', signature: 'sig' },
    { type: 'redacted_thinking', data: 'xyz' },
    { type: 'text', text: 'a' },
  ]);
  t.deepEqual(toAnthropicBody({ ...base, thinking: { type: 'enabled' } }, options).thinking, { type: 'enabled', budget_tokens: 1024 });
  t.deepEqual(toAnthropicBody({ ...base, thinking: { type: 'disabled' } }, options).thinking, { type: 'disabled' });
});

test('fields Anthropic cannot honour are refused with their param', (t) => {
  for (const [field, value] of [
    ['n', 2],
    ['response_format', { type: 'json_object' }],
    ['logprobs', true],
  ] as const) {
    const error = t.throws(() => toAnthropicBody({ ...base, [field]: value }, options)) as unknown as { status: number; body: { param: string } };
    t.is(error.status, 400);
    t.is(error.body.param, field);
  }
  t.notThrows(() => toAnthropicBody({ ...base, n: 1, response_format: { type: 'text' } }, options));
});

test('a text answer maps with cache usage folded into prompt_tokens', (t) => {
  const response = fromAnthropicResponse(fixture('chat-text.json'), base, target);
  t.like(response, { id: 'msg_01XFDUDYJgAACzvnptvVoYEL', object: 'chat.completion', model: 'claude-sonnet-4-5-20250929' });
  t.deepEqual(response.choices, [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop', logprobs: null }]);
  t.deepEqual(response.usage, {
    prompt_tokens: 12 + 100 + 2048,
    completion_tokens: 10,
    total_tokens: 2170,
    prompt_tokens_details: { cached_tokens: 2048, cache_creation_tokens: 100 },
  });
});

test('a tool_use answer maps to tool_calls with JSON arguments and finish_reason tool_calls', (t) => {
  const response = fromAnthropicResponse(fixture('chat-tool-use.json'), base, target);
  const choice = response.choices[0];
  t.is(choice.finish_reason, 'tool_calls');
  t.is(choice.message.content, "I'll check the weather in San Francisco.");
  t.deepEqual(choice.message.tool_calls, [
    { id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' } },
  ]);
});

test('thinking is returned as content_blocks only when strict compliance is off', (t) => {
  const strict = fromAnthropicResponse(fixture('chat-thinking.json'), base, target);
  t.is(strict.choices[0].message.content, '27 × 453 = 12,231');
  t.is(strict.choices[0].message.content_blocks, undefined);
  const open = fromAnthropicResponse(fixture('chat-thinking.json'), base, loose);
  t.deepEqual(open.choices[0].message.content_blocks, [
    { type: 'thinking', text: 'The user asks for 27 * 453. 27 * 453 = 12231.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
    { type: 'text', text: '27 × 453 = 12,231' },
  ]);
});

test('a refusal maps to content_filter and empty content to an empty string', (t) => {
  t.like(fromAnthropicResponse(fixture('chat-refusal.json'), base, target).choices[0], { finish_reason: 'content_filter', message: { content: '' } });
  const empty = fromAnthropicResponse(fixture('chat-empty.json'), base, target);
  t.like(empty.choices[0], { finish_reason: 'stop', message: { role: 'assistant', content: '' } });
  t.is(empty.usage?.total_tokens, 9);
  t.throws(() => fromAnthropicResponse({ type: 'message' }, base, target));
});

const mapAll = (name: string, request: ChatRequest, to: ProviderTarget): StreamStep[] => {
  const mapper = createAnthropicStreamMapper(request, to);
  return fixtureLines('anthropic', name).map((line) => mapper.map({ event: JSON.parse(line).type, data: line }));
};

test('a text stream maps to a role chunk, content deltas, finish, usage, and done on message_stop', (t) => {
  const steps = mapAll('stream-text.txt', base, target);
  t.deepEqual(steps.at(-1), { done: true });
  t.deepEqual(steps[2], {}, 'ping is ignored');
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
  t.is(chunks[0].id, 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY');
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello! How can I help?');
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'stop');
  t.deepEqual(chunks.at(-1)?.choices, []);
  t.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 35, completion_tokens: 15, total_tokens: 50, prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 0 } });
});

test('a tool-use stream numbers tool calls in order and streams their arguments', (t) => {
  const chunks = mapAll('stream-tool-use.txt', base, target).flatMap((step) => step.chunks ?? []);
  const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  t.deepEqual(calls[0], { index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } });
  const args = (index: number) =>
    calls
      .filter((call) => call.index === index)
      .map((call) => call.function?.arguments ?? '')
      .join('');
  t.deepEqual(JSON.parse(args(0)), { location: 'San Francisco, CA', unit: 'fahrenheit' });
  t.deepEqual(JSON.parse(args(1)), { zone: 'PST' });
  t.is(calls.filter((call) => call.id).length, 2);
  t.is(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason, 'tool_calls');
});

test('thinking deltas and signatures appear as content_blocks only when not strict; unknown events are ignored', (t) => {
  const strictChunks = mapAll('stream-thinking.txt', { ...base, thinking: { type: 'enabled' } }, target).flatMap((step) => step.chunks ?? []);
  t.false(strictChunks.some((chunk) => 'content_blocks' in (chunk.choices[0]?.delta ?? {})));
  const steps = mapAll('stream-thinking.txt', { ...base, thinking: { type: 'enabled' } }, loose);
  t.deepEqual(steps[10], {}, 'an unknown event type is ignored');
  t.deepEqual(steps[8], {}, 'a citations delta is ignored');
  const blocks = steps.flatMap((step) => step.chunks ?? []).flatMap((chunk) => (chunk.choices[0]?.delta.content_blocks as unknown[]) ?? []);
  t.deepEqual(blocks, [
    { index: 0, type: 'thinking', text: 'I need to find the GCD of 1071 and 462.' },
    { index: 0, type: 'thinking', text: ' 1071 = 2 * 462 + 147 ... GCD is 21.' },
    { index: 0, type: 'thinking', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
  ]);
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.is(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason, 'length');
  t.like(chunks.at(-1)?.usage, { prompt_tokens: 35, completion_tokens: 64, prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 5 } });
});

test('an error event ends the stream with the mapped error, and malformed data is an error', (t) => {
  const steps = mapAll('stream-error.txt', base, target);
  t.deepEqual(steps.at(-1), { error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: null } });
  const mapper = createAnthropicStreamMapper(base, target);
  t.like(mapper.map({ data: '{"type":"message_st' }).error, { code: 'malformed_stream' });
  t.deepEqual(mapper.map({ data: '[1,2]' }), {});
  t.deepEqual(mapper.map({ data: '{"type":"content_block_delta","index":9,"delta":{"type":"input_json_delta","partial_json":"{"}}' }), {});
});

test('through the relay: the whole stream split at every size gives the same client events', async (t) => {
  const wire = Buffer.from(sseWire(fixtureLines('anthropic', 'stream-tool-use.txt'), true));
  const expected = await relayText([wire], createAnthropicStreamMapper(base, target));
  t.true(expected.endsWith('data: [DONE]\n\n'));
  for (const size of [1, 3, 17, 100]) {
    const text = await relayText(split(wire, size), createAnthropicStreamMapper(base, target));
    t.is(clientEvents(text).length, clientEvents(expected).length, `read size ${size}`);
    t.true(text.endsWith('data: [DONE]\n\n'));
  }
});

test('through the relay: truncated streams and random bytes end with an error event, never a throw', async (t) => {
  const wire = Buffer.from(sseWire(fixtureLines('anthropic', 'stream-text.txt'), true));
  for (const cut of [0, 10, Math.floor(wire.length / 2), wire.length - 30]) {
    const text = await relayText([wire.subarray(0, cut)], createAnthropicStreamMapper(base, target));
    t.false(text.includes('[DONE]'), `cut at ${cut}`);
    t.truthy(clientEvents(text).at(-1)?.error, `cut at ${cut}`);
  }
  for (let seed = 1; seed <= 40; seed++) {
    const noise = randomBytes(seed, 64 + seed * 13);
    const prefixed = Buffer.concat([Buffer.from('event: message_start\ndata: '), noise, Buffer.from('\n\ndata: {"type":"content_block_delta"\n\n')]);
    for (const bytes of [noise, prefixed]) {
      const text = await relayText(split(bytes, 7), createAnthropicStreamMapper(base, loose));
      t.truthy(clientEvents(text).at(-1)?.error, `seed ${seed}`);
    }
  }
  const errorText = await relayText([Buffer.from(sseWire(fixtureLines('anthropic', 'stream-error.txt'), true))], createAnthropicStreamMapper(base, target));
  t.like(clientEvents(errorText).at(-1)?.error, { message: 'Overloaded', type: 'overloaded_error', provider: 'test' });
});

test('mapError reads Anthropic error bodies and describes others by status', (t) => {
  const reply = (status: number, body: string) => ({ status, headers: {}, body: Buffer.from(body) });
  t.deepEqual(mapAnthropicError(reply(400, providerFixture('anthropic', 'error-400.json'))), {
    message: 'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
    type: 'invalid_request_error',
    param: null,
    code: null,
  });
  t.like(mapAnthropicError(reply(529, providerFixture('anthropic', 'error-529.json'))), { type: 'overloaded_error', message: 'Overloaded' });
  t.deepEqual(mapAnthropicError(reply(502, '<html>bad gateway</html>')), { message: 'The provider returned HTTP 502: <html>bad gateway</html>', type: 'api_error', param: null, code: null });
  t.like(mapAnthropicError(reply(429, '')), { type: 'rate_limit_error', message: 'The provider returned HTTP 429.' });
});

test('the plugin posts to /messages with x-api-key and anthropic-version, and its params are declared', (t) => {
  const plugin = anthropic({ version: '2023-06-01' }).create(pluginDependencies());
  const upstream = plugin.operations.chat!.toUpstream(base, target);
  t.is(upstream.url, 'https://api.anthropic.com/v1/messages');
  t.deepEqual(plugin.auth(upstream, target), { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant-test' });
  t.deepEqual(plugin.auth(upstream, { ...target, credentials: {} }), { 'anthropic-version': '2023-06-01' });
  t.is(plugin.baseUrl({}), 'https://api.anthropic.com/v1');
  t.false(plugin.capabilities!.developerRole!('claude-sonnet-4-5'));
  t.is(plugin.operations.embed, undefined);
  t.is(JSON.parse(String(anthropic({ defaultMaxTokens: 77 }).create(pluginDependencies()).operations.chat!.toUpstream(base, target).body)).max_tokens, 77);
});
