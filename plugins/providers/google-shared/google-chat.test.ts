import test from 'ava';
import type { ChatRequest, ProviderTarget, StreamStep } from '../../../core/spec/index.js';
import { clientEvents, fixtureLines, providerFixture, randomBytes, relayText, split, sseWire } from '../../../test/fakes/stream-fuzz.js';
import { createGeminiStreamMapper, fromGeminiResponse, mapGoogleError, toGeminiBody } from './index.js';

const fixture = (name: string) => JSON.parse(providerFixture('google-shared', name));
const target: ProviderTarget = { baseUrl: 'https://generativelanguage.googleapis.com/v1beta', customHost: false, headers: {}, credentials: { apiKey: 'k' }, strict: true };
const loose: ProviderTarget = { ...target, strict: false };
const base: ChatRequest = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] };

test('system and developer messages become systemInstruction; generation settings map', (t) => {
  const body = toGeminiBody({
    ...base,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'French.' }] },
      { role: 'user', content: 'hi' },
    ],
    temperature: 0.3,
    top_p: 0.8,
    max_tokens: 100,
    n: 2,
    stop: ['END'],
    presence_penalty: 0.5,
    frequency_penalty: 0.25,
    seed: 7,
    response_format: { type: 'json_object' },
    logit_bias: { '1': 2 },
  });
  t.deepEqual(body, {
    contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'French.' }] },
    generationConfig: {
      temperature: 0.3,
      topP: 0.8,
      maxOutputTokens: 100,
      candidateCount: 2,
      stopSequences: ['END'],
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      seed: 7,
      responseMimeType: 'application/json',
    },
  });
  t.deepEqual(toGeminiBody({ ...base, max_completion_tokens: 9, stop: 'x' }).generationConfig, { maxOutputTokens: 9, stopSequences: ['x'] });
});

test('json_schema response formats send a cleaned responseSchema', (t) => {
  const body = toGeminiBody({
    ...base,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'answer', strict: true, schema: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer' } }, required: ['n'] } },
    },
  });
  t.deepEqual(body.generationConfig, { responseMimeType: 'application/json', responseSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } });
});

test('images: data URLs become inlineData, http and gs URLs fileData with a MIME type from the extension', (t) => {
  const body = toGeminiBody({
    ...base,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRg==' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a/cat.PNG?x=1' } },
          { type: 'image_url', image_url: { url: 'gs://bucket/photo' } },
        ],
      },
    ],
  });
  t.deepEqual(body.contents[0].parts, [
    { text: 'What is this?' },
    { inlineData: { mimeType: 'image/webp', data: 'UklGRg==' } },
    { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/a/cat.PNG?x=1' } },
    { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/photo' } },
  ]);
  const error = t.throws(() => toGeminiBody({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }] })) as unknown as {
    status: number;
    body: { param: string };
  };
  t.is(error.status, 400);
  t.is(error.body.param, 'messages[0].content[0].image_url.url');
});

test('a multi-turn tool conversation: functionCall parts, functionResponse parts named after the call, merged in one turn', (t) => {
  const body = toGeminiBody({
    ...base,
    messages: [
      { role: 'user', content: 'Weather and time?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temp":18}' },
      { role: 'tool', tool_call_id: 'call_b', content: '14:00' },
    ],
    tools: [
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  t.deepEqual(body.contents, [
    { role: 'user', parts: [{ text: 'Weather and time?' }] },
    {
      role: 'model',
      parts: [{ text: 'Let me look.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }],
    },
    {
      role: 'user',
      parts: [{ functionResponse: { name: 'get_weather', response: { temp: 18 } } }, { functionResponse: { name: 'get_time', response: { content: '14:00' } } }],
    },
  ]);
  t.deepEqual(body.tools, [
    {
      functionDeclarations: [
        { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        { name: 'get_time' },
      ],
    },
  ]);
  t.deepEqual(body.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
});

test('tool_choice auto, none and required map to function calling modes', (t) => {
  const tools = [{ type: 'function', function: { name: 'f' } }];
  t.deepEqual(toGeminiBody({ ...base, tools, tool_choice: 'auto' }).toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
  t.deepEqual(toGeminiBody({ ...base, tools, tool_choice: 'none' }).toolConfig, { functionCallingConfig: { mode: 'NONE' } });
  t.deepEqual(toGeminiBody({ ...base, tools, tool_choice: 'required' }).toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  t.is(toGeminiBody({ ...base, tool_choice: 'auto' }).toolConfig, undefined);
});

test('thinking maps to thinkingConfig', (t) => {
  t.deepEqual(toGeminiBody({ ...base, thinking: { type: 'enabled', budget_tokens: 512 } }).generationConfig, { thinkingConfig: { includeThoughts: true, thinkingBudget: 512 } });
  t.deepEqual(toGeminiBody({ ...base, thinking: { type: 'enabled' } }).generationConfig, { thinkingConfig: { includeThoughts: true } });
  t.deepEqual(toGeminiBody({ ...base, thinking: { type: 'disabled' } }).generationConfig, { thinkingConfig: { thinkingBudget: 0 } });
  t.deepEqual(toGeminiBody({ ...base, reasoning_effort: 'low' }).generationConfig, { thinkingConfig: { thinkingBudget: 1024 } });
});

test('a text answer maps with thoughts and cached tokens in usage', (t) => {
  const response = fromGeminiResponse(fixture('chat-text.json'), base, target);
  t.like(response, { id: 'chatcmpl-mz3jaNTdL7ubz7IPu5L5oAY', object: 'chat.completion', model: 'gemini-2.5-flash' });
  t.deepEqual(response.choices, [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop', logprobs: null }]);
  t.deepEqual(response.usage, {
    prompt_tokens: 1200,
    completion_tokens: 49,
    total_tokens: 1249,
    prompt_tokens_details: { cached_tokens: 1024 },
    completion_tokens_details: { reasoning_tokens: 40 },
  });
});

test('function calls map to tool_calls with finish_reason tool_calls and null content', (t) => {
  const choice = fromGeminiResponse(fixture('chat-function-call.json'), base, target).choices[0];
  t.is(choice.finish_reason, 'tool_calls');
  t.is(choice.message.content, null);
  t.is(choice.message.tool_calls?.length, 2);
  t.regex(choice.message.tool_calls![0].id, /^call_[0-9a-f]{24}$/);
  t.not(choice.message.tool_calls![0].id, choice.message.tool_calls![1].id);
  t.deepEqual(
    choice.message.tool_calls!.map((call) => [call.function.name, JSON.parse(call.function.arguments)]),
    [
      ['get_weather', { location: 'Paris', unit: 'celsius' }],
      ['get_time', { zone: 'CET' }],
    ],
  );
});

test('thought parts stay out of content and appear as content_blocks only when not strict', (t) => {
  const strict = fromGeminiResponse(fixture('chat-thinking.json'), base, target).choices[0].message;
  t.deepEqual(strict, { role: 'assistant', content: '27 × 453 = 12,231' });
  const open = fromGeminiResponse(fixture('chat-thinking.json'), base, loose).choices[0].message;
  t.deepEqual(open.content_blocks, [
    { type: 'thinking', text: '**Computing** 27*453: 27*400=10800, 27*53=1431, total 12231.' },
    { type: 'text', text: '27 × 453 = 12,231' },
  ]);
});

test('blocked prompts and safety stops map to content_filter; empty candidates to empty content', (t) => {
  t.like(fromGeminiResponse(fixture('chat-blocked.json'), base, target), { choices: [{ finish_reason: 'content_filter', message: { content: null } }], usage: { prompt_tokens: 7 } });
  t.like(fromGeminiResponse(fixture('chat-safety.json'), base, target).choices[0], { finish_reason: 'content_filter', message: { content: null } });
  t.like(fromGeminiResponse(fixture('chat-empty.json'), base, target).choices[0], { finish_reason: 'stop', message: { content: '' } });
  t.throws(() => fromGeminiResponse('nope', base, target));
});

const mapAll = (name: string, request: ChatRequest, to: ProviderTarget): StreamStep[] => {
  const mapper = createGeminiStreamMapper(request, to);
  return fixtureLines('google-shared', name).map((line) => mapper.map({ data: line }));
};

test('a text stream: role on the first chunk, content, finish, usage, done after the finishReason', (t) => {
  const steps = mapAll('stream-text.txt', base, target);
  t.true(steps.at(-1)?.done);
  t.false(steps.slice(0, -1).some((step) => step.done));
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: 'Hello' });
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello! How can I help?');
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'stop');
  t.deepEqual(chunks.at(-1)?.choices, []);
  t.like(chunks.at(-1)?.usage, { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 });
  t.is(chunks[0].id, 'chatcmpl-st3jaNTdL7ubz7IPu5L5oAY');
});

test('a function-call stream emits indexed tool calls with whole arguments and finish_reason tool_calls', (t) => {
  const chunks = mapAll('stream-function-call.txt', base, target).flatMap((step) => step.chunks ?? []);
  const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  t.deepEqual(
    calls.map((call) => [call.index, call.type, call.function?.name, JSON.parse(call.function?.arguments ?? '')]),
    [
      [0, 'function', 'get_weather', { location: 'Paris' }],
      [1, 'function', 'get_time', { zone: 'CET' }],
    ],
  );
  t.true(calls.every((call) => typeof call.id === 'string' && call.id.startsWith('call_')));
  t.is(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason, 'tool_calls');
});

test('thinking streams to content_blocks only when not strict; unknown shapes are ignored; MAX_TOKENS is length', (t) => {
  const strictChunks = mapAll('stream-thinking.txt', base, target).flatMap((step) => step.chunks ?? []);
  t.false(strictChunks.some((chunk) => 'content_blocks' in (chunk.choices[0]?.delta ?? {})));
  const steps = mapAll('stream-thinking.txt', base, loose);
  t.deepEqual(steps[1], { chunks: [] }, 'an event of an unknown shape emits nothing');
  const chunks = steps.flatMap((step) => step.chunks ?? []);
  t.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content_blocks: [{ index: 0, type: 'thinking', text: 'Let me think about 2+2.' }] });
  t.is(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason, 'length');
  t.like(chunks.at(-1)?.usage, { completion_tokens: 51, completion_tokens_details: { reasoning_tokens: 50 }, prompt_tokens_details: { cached_tokens: 2 } });
});

test('a blocked prompt ends the stream with content_filter; an error object ends it with the error', (t) => {
  const blocked = mapAll('stream-blocked.txt', base, target);
  t.true(blocked[0].done);
  t.is(blocked[0].chunks?.[0].choices[0].finish_reason, 'content_filter');
  const errored = mapAll('stream-error.txt', base, target);
  t.deepEqual(errored[1], { error: { message: 'The model is overloaded. Please try again later.', type: 'overloaded_error', param: null, code: 'UNAVAILABLE' } });
  t.like(createGeminiStreamMapper(base, target).map({ data: '{"candidates":[' }).error, { code: 'malformed_stream' });
});

test('malformed candidates and parts are skipped, never thrown, streamed or not', (t) => {
  const events = [
    '{"candidates":{}}',
    '{"candidates":[null]}',
    '{"candidates":[{"content":{"parts":[null]}}]}',
    '{"candidates":[{"content":{"parts":{}}}]}',
    '{"candidates":[{"content":null,"index":"x","finishReason":7}]}',
    '{"candidates":[{"content":{"parts":[5,"x",{"functionCall":null},{"text":"ok"}]}}]}',
    '{"promptFeedback":null,"usageMetadata":[],"modelVersion":3}',
  ];
  for (const data of events) {
    const mapper = createGeminiStreamMapper(base, loose);
    t.notThrows(() => mapper.map({ data }), data);
    t.notThrows(() => fromGeminiResponse(JSON.parse(data), base, loose), data);
  }
  // What is well formed in a malformed event still maps.
  const mapped = createGeminiStreamMapper(base, loose).map({ data: events[5] });
  t.deepEqual(mapped.chunks?.map((chunk) => chunk.choices[0].delta), [{ role: 'assistant', content: 'ok' }]);
  t.deepEqual(createGeminiStreamMapper(base, loose).map({ data: events[1] }), { chunks: [] });
  const answer = fromGeminiResponse({ candidates: [null, { content: { parts: [{ text: 'b' }] }, finishReason: 'STOP' }] }, base, loose);
  t.deepEqual(answer.choices.map((choice) => [choice.index, choice.message.content]), [[1, 'b']], 'the candidate keeps its position');
});

test('n > 1: the stream ends once every candidate has finished', (t) => {
  const mapper = createGeminiStreamMapper({ ...base, n: 2 }, target);
  const first = mapper.map({ data: '{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP","index":0},{"content":{"parts":[{"text":"b"}]},"index":1}]}' });
  t.falsy(first.done);
  t.deepEqual(
    first.chunks?.map((chunk) => [chunk.choices[0].index, chunk.choices[0].delta.content, chunk.choices[0].finish_reason]),
    [
      [0, 'a', null],
      [0, undefined, 'stop'],
      [1, 'b', null],
    ],
  );
  const second = mapper.map({ data: '{"candidates":[{"content":{"parts":[{"text":"c"}]},"finishReason":"STOP","index":1}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7}}' });
  t.true(second.done);
  t.like(second.chunks?.at(-1)?.usage, { total_tokens: 7 });
});

test('through the relay: splits at any size agree; truncation and random bytes end in an error event', async (t) => {
  const wire = Buffer.from(sseWire(fixtureLines('google-shared', 'stream-function-call.txt'), false));
  const whole = await relayText([wire], createGeminiStreamMapper(base, target));
  t.true(whole.endsWith('data: [DONE]\n\n'));
  for (const size of [1, 5, 64]) {
    const text = await relayText(split(wire, size), createGeminiStreamMapper(base, target));
    t.is(clientEvents(text).length, clientEvents(whole).length);
  }
  const textWire = Buffer.from(sseWire(fixtureLines('google-shared', 'stream-text.txt'), false));
  for (const cut of [0, 20, Math.floor(textWire.length / 2), textWire.length - 5]) {
    const text = await relayText([textWire.subarray(0, cut)], createGeminiStreamMapper(base, target));
    t.false(text.includes('[DONE]'), `cut at ${cut}`);
    t.truthy(clientEvents(text).at(-1)?.error);
  }
  for (let seed = 1; seed <= 40; seed++) {
    const noise = randomBytes(seed * 7919, 50 + seed * 11);
    const framed = Buffer.concat([Buffer.from('data: '), noise, Buffer.from('\n\n')]);
    for (const bytes of [noise, framed]) {
      const text = await relayText(split(bytes, 9), createGeminiStreamMapper(base, loose));
      t.truthy(clientEvents(text).at(-1)?.error, `seed ${seed}`);
    }
  }
});

test('mapGoogleError reads Google error bodies (object or array) and describes others by status', (t) => {
  const reply = (status: number, body: string) => ({ status, headers: {}, body: Buffer.from(body) });
  t.deepEqual(mapGoogleError(reply(400, providerFixture('google-shared', 'error-400.json'))), {
    message: '* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties: should be non-empty for OBJECT type\n',
    type: 'invalid_request_error',
    param: null,
    code: 'INVALID_ARGUMENT',
  });
  t.like(mapGoogleError(reply(429, `[${providerFixture('google-shared', 'error-429.json')}]`)), { type: 'rate_limit_error', code: 'RESOURCE_EXHAUSTED' });
  t.deepEqual(mapGoogleError(reply(500, 'upstream connect error')), { message: 'The provider returned HTTP 500: upstream connect error', type: 'api_error', param: null, code: null });
});

test('a function call\'s thoughtSignature travels in the call id and goes back with the call', (t) => {
  const answer = fromGeminiResponse(
    { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'CiQB0e2Kb+sig==' }] }, finishReason: 'STOP' }] },
    base,
    target,
  );
  const call = answer.choices[0].message.tool_calls![0];
  t.regex(call.id, /^call_[0-9a-f]{24}~ts~CiQB0e2Kb\+sig==$/);
  const body = toGeminiBody({
    ...base,
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'ok' },
    ],
  });
  t.deepEqual(body.contents.slice(1), [
    { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'CiQB0e2Kb+sig==' }] },
    { role: 'user', parts: [{ functionResponse: { name: 'f', response: { content: 'ok' } } }] },
  ]);
});
