import test, { type ExecutionContext } from 'ava';
import { type Fake, type RecordedRequest, startFake } from './fakes/openai-fake.js';
import { gatewayHeaders, SECRETS, startGateway, type TestGateway } from './harness.js';

/**
 * The chat request schema, through the real HTTP interface: every invalid body is answered 400 with
 * the exact `param` and never reaches the upstream; every valid edge body reaches it as sent.
 */

let fake: Fake;
let gateway: TestGateway;
let smallGateway: TestGateway;

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway();
  smallGateway = await startGateway({ bodyLimitBytes: 1024 });
});

test.after.always(async () => {
  await gateway?.close();
  await smallGateway?.close();
  await fake?.close();
});

type Body = Record<string, unknown>;

const USER = { role: 'user', content: 'Hello' };
const base = (extra: Body = {}): Body => ({ model: 'gpt-4.1', messages: [USER], ...extra });
const without = (body: Body, field: string): Body => {
  const copy = { ...body };
  delete copy[field];
  return copy;
};
const tool = (name: string, extra: Body = {}): Body => ({
  type: 'function',
  function: { name, description: `tool ${name}`, parameters: { type: 'object', properties: {} }, ...extra },
});
const tools = (count: number): Body[] => Array.from({ length: count }, (_, index) => tool(`tool_${index}`));
const functions = (count: number): Body[] => Array.from({ length: count }, (_, index) => ({ name: `fn_${index}`, parameters: { type: 'object' } }));
const name64 = 'a'.repeat(32) + 'B-_9'.repeat(8);
const name65 = `${name64}x`;

/** Each request carries a row id that the gateway forwards upstream, so the fake's requests can be attributed. */
let rowCounter = 0;
/** Requests sent to each gateway, to check that each produced exactly one log entry. */
const sent = new Map<TestGateway, number>();
async function post(target: TestGateway, body: string, extraHeaders: Record<string, string> = {}): Promise<{ response: Response; row: string }> {
  const row = `row-${++rowCounter}`;
  sent.set(target, (sent.get(target) ?? 0) + 1);
  const response = await fetch(`${target.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, {
      'content-type': 'application/json',
      'x-gateway-forward-headers': 'x-test-row',
      'x-test-row': row,
      ...extraHeaders,
    }),
    body,
  });
  return { response, row };
}

const receivedFor = (row: string): RecordedRequest[] => fake.requests.filter((request) => request.headers['x-test-row'] === row);

interface InvalidRow {
  readonly title: string;
  readonly body: Body;
  readonly param: string;
  readonly headers?: Record<string, string>;
}

const LENIENT = { 'x-gateway-strict-api-compliance': 'false' };

const PDF_URL = 'data:application/pdf;base64,JVBERi0xLjQK';
const userParts = (...content: Body[]): Body => base({ messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, ...content] }] });

/** Malformed file and input_audio parts: each names the exact field. */
function fileRows(): InvalidRow[] {
  const file = (value: unknown): Body => ({ type: 'file', file: value });
  const audio = (value: unknown): Body => ({ type: 'input_audio', input_audio: value });
  return [
    { title: 'file part without file', body: userParts({ type: 'file' }), param: 'messages[0].content[1].file' },
    { title: 'file part with file a string', body: userParts(file(PDF_URL)), param: 'messages[0].content[1].file' },
    { title: 'file part with neither file_data nor file_id', body: userParts(file({ filename: 'a.pdf' })), param: 'messages[0].content[1].file' },
    { title: 'file_data not a string', body: userParts(file({ file_data: 42 })), param: 'messages[0].content[1].file.file_data' },
    { title: 'file_data empty', body: userParts(file({ file_data: '' })), param: 'messages[0].content[1].file.file_data' },
    { title: 'file_data raw base64, not a data URL', body: userParts(file({ file_data: 'JVBERi0xLjQK' })), param: 'messages[0].content[1].file.file_data' },
    { title: 'file_data a data URL without base64', body: userParts(file({ file_data: 'data:application/pdf,hello' })), param: 'messages[0].content[1].file.file_data' },
    { title: 'file_data with characters outside base64', body: userParts(file({ file_data: 'data:application/pdf;base64,JVBE Ri0x' })), param: 'messages[0].content[1].file.file_data' },
    { title: 'file_data a data URL without media type', body: userParts(file({ file_data: 'data:;base64,JVBERi0x' })), param: 'messages[0].content[1].file.file_data' },
    { title: 'file_id empty', body: userParts(file({ file_id: '' })), param: 'messages[0].content[1].file.file_id' },
    { title: 'file_id a number', body: userParts(file({ file_id: 7 })), param: 'messages[0].content[1].file.file_id' },
    { title: 'filename a number', body: userParts(file({ file_data: PDF_URL, filename: 7 })), param: 'messages[0].content[1].file.filename' },
    { title: 'input_audio part without input_audio', body: userParts({ type: 'input_audio' }), param: 'messages[0].content[1].input_audio' },
    { title: 'input_audio without data', body: userParts(audio({ format: 'wav' })), param: 'messages[0].content[1].input_audio.data' },
    { title: 'input_audio data empty', body: userParts(audio({ data: '', format: 'wav' })), param: 'messages[0].content[1].input_audio.data' },
    { title: 'input_audio data as a data URL', body: userParts(audio({ data: 'data:audio/wav;base64,UklGRg==', format: 'wav' })), param: 'messages[0].content[1].input_audio.data' },
    { title: 'input_audio without format', body: userParts(audio({ data: 'UklGRg==' })), param: 'messages[0].content[1].input_audio.format' },
    { title: 'input_audio format flac', body: userParts(audio({ data: 'UklGRg==', format: 'flac' })), param: 'messages[0].content[1].input_audio.format' },
    {
      title: 'file part in a system message',
      body: base({ messages: [{ role: 'system', content: [{ type: 'file', file: { file_data: PDF_URL } }] }, USER] }),
      param: 'messages[0].content[0].type',
    },
    {
      title: 'input_audio part in an assistant message',
      body: base({ messages: [USER, { role: 'assistant', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] }),
      param: 'messages[1].content[0].type',
    },
  ];
}

const invalidRows: InvalidRow[] = [
  // model
  { title: 'model missing', body: without(base(), 'model'), param: 'model' },
  { title: 'model not a string', body: base({ model: 42 }), param: 'model' },
  { title: 'model null', body: base({ model: null }), param: 'model' },
  { title: 'model empty', body: base({ model: '' }), param: 'model' },
  // messages
  { title: 'messages missing', body: without(base(), 'messages'), param: 'messages' },
  { title: 'messages not an array', body: base({ messages: 'Hello' }), param: 'messages' },
  { title: 'messages empty', body: base({ messages: [] }), param: 'messages' },
  { title: 'message not an object', body: base({ messages: ['Hello'] }), param: 'messages[0]' },
  { title: 'message without role', body: base({ messages: [{ content: 'Hello' }] }), param: 'messages[0].role' },
  { title: 'message with unknown role', body: base({ messages: [{ role: 'robot', content: 'Hello' }] }), param: 'messages[0].role' },
  { title: 'system message without content', body: base({ messages: [{ role: 'system' }, USER] }), param: 'messages[0].content' },
  { title: 'system message with numeric content', body: base({ messages: [{ role: 'system', content: 5 }, USER] }), param: 'messages[0].content' },
  { title: 'system message with null content', body: base({ messages: [{ role: 'system', content: null }, USER] }), param: 'messages[0].content' },
  {
    title: 'system message with non-string name',
    body: base({ messages: [{ role: 'system', content: 'Be brief.', name: 5 }, USER] }),
    param: 'messages[0].name',
  },
  {
    title: 'system message with image part',
    body: base({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, USER] }),
    param: 'messages[0].content[0].type',
  },
  { title: 'developer message without content', body: base({ messages: [USER, { role: 'developer' }] }), param: 'messages[1].content' },
  { title: 'user message without content', body: base({ messages: [{ role: 'user' }] }), param: 'messages[0].content' },
  { title: 'user message with numeric content', body: base({ messages: [USER, USER, { role: 'user', content: 42 }] }), param: 'messages[2].content' },
  { title: 'user message with empty parts array', body: base({ messages: [{ role: 'user', content: [] }] }), param: 'messages[0].content' },
  {
    title: 'user content part of unknown type',
    body: base({ messages: [{ role: 'user', content: [{ type: 'audio', data: 'x' }] }] }),
    param: 'messages[0].content[0].type',
  },
  {
    title: 'user content part without type',
    body: base({ messages: [{ role: 'user', content: [{ text: 'x' }] }] }),
    param: 'messages[0].content[0].type',
  },
  {
    title: 'user text part without text',
    body: base({ messages: [{ role: 'user', content: [{ type: 'text' }] }] }),
    param: 'messages[0].content[0].text',
  },
  {
    title: 'user image part with empty url',
    body: base({ messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: '' } }] }] }),
    param: 'messages[0].content[1].image_url.url',
  },
  {
    title: 'user image part with bad detail',
    body: base({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'ultra' } }] }] }),
    param: 'messages[0].content[0].image_url.detail',
  },
  // file and input_audio parts (issue 17)
  ...fileRows(),
  {
    title: 'assistant message without content or tool_calls',
    body: base({ messages: [USER, { role: 'assistant', content: null }] }),
    param: 'messages[1].content',
  },
  {
    title: 'assistant tool_calls not an array',
    body: base({ messages: [USER, { role: 'assistant', tool_calls: {} }] }),
    param: 'messages[1].tool_calls',
  },
  {
    title: 'assistant tool call without id',
    body: base({ messages: [USER, { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }] }),
    param: 'messages[1].tool_calls[0].id',
  },
  {
    title: 'assistant tool call without arguments',
    body: base({ messages: [USER, { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f' } }] }] }),
    param: 'messages[1].tool_calls[0].function.arguments',
  },
  {
    title: 'tool message without tool_call_id',
    body: base({ messages: [USER, { role: 'assistant', content: 'ok' }, { role: 'tool', content: '42' }] }),
    param: 'messages[2].tool_call_id',
  },
  {
    title: 'tool message without content',
    body: base({ messages: [USER, { role: 'tool', tool_call_id: 'call_1' }] }),
    param: 'messages[1].content',
  },
  { title: 'function message without name', body: base({ messages: [USER, { role: 'function', content: '42' }] }), param: 'messages[1].name' },
  {
    title: 'function message with parts array',
    body: base({ messages: [USER, { role: 'function', name: 'f', content: [{ type: 'text', text: '42' }] }] }),
    param: 'messages[1].content',
  },
  // penalties
  { title: 'frequency_penalty -2.01', body: base({ frequency_penalty: -2.01 }), param: 'frequency_penalty' },
  { title: 'frequency_penalty 2.01', body: base({ frequency_penalty: 2.01 }), param: 'frequency_penalty' },
  { title: 'frequency_penalty as string', body: base({ frequency_penalty: '1' }), param: 'frequency_penalty' },
  { title: 'presence_penalty -2.01', body: base({ presence_penalty: -2.01 }), param: 'presence_penalty' },
  { title: 'presence_penalty 2.01', body: base({ presence_penalty: 2.01 }), param: 'presence_penalty' },
  // logit_bias
  { title: 'logit_bias -101', body: base({ logit_bias: { 50256: -101 } }), param: 'logit_bias.50256' },
  { title: 'logit_bias 101', body: base({ logit_bias: { 50256: 101 } }), param: 'logit_bias.50256' },
  { title: 'logit_bias non-integer', body: base({ logit_bias: { 15: 1.5 } }), param: 'logit_bias.15' },
  { title: 'logit_bias non-numeric key', body: base({ logit_bias: { abc: 1 } }), param: 'logit_bias.abc' },
  { title: 'logit_bias negative key', body: base({ logit_bias: { '-1': 1 } }), param: 'logit_bias.-1' },
  { title: 'logit_bias as array', body: base({ logit_bias: [1] }), param: 'logit_bias' },
  // logprobs
  { title: 'logprobs as string', body: base({ logprobs: 'yes' }), param: 'logprobs' },
  { title: 'top_logprobs -1', body: base({ logprobs: true, top_logprobs: -1 }), param: 'top_logprobs' },
  { title: 'top_logprobs 21', body: base({ logprobs: true, top_logprobs: 21 }), param: 'top_logprobs' },
  { title: 'top_logprobs non-integer', body: base({ logprobs: true, top_logprobs: 2.5 }), param: 'top_logprobs' },
  { title: 'top_logprobs 5 without logprobs', body: base({ top_logprobs: 5 }), param: 'top_logprobs' },
  { title: 'top_logprobs 5 with logprobs false', body: base({ logprobs: false, top_logprobs: 5 }), param: 'top_logprobs' },
  // max_tokens, n
  { title: 'max_tokens 0', body: base({ max_tokens: 0 }), param: 'max_tokens' },
  { title: 'max_tokens -1', body: base({ max_tokens: -1 }), param: 'max_tokens' },
  { title: 'max_tokens 1.5', body: base({ max_tokens: 1.5 }), param: 'max_tokens' },
  { title: 'n 0', body: base({ n: 0 }), param: 'n' },
  { title: 'n 129', body: base({ n: 129 }), param: 'n' },
  // response_format
  { title: 'response_format with bad type', body: base({ response_format: { type: 'xml' } }), param: 'response_format.type' },
  { title: 'response_format without type', body: base({ response_format: {} }), param: 'response_format.type' },
  { title: 'response_format as string', body: base({ response_format: 'json_object' }), param: 'response_format' },
  {
    title: 'response_format json_schema without json_schema',
    body: base({ response_format: { type: 'json_schema' } }),
    param: 'response_format.json_schema',
  },
  {
    title: 'response_format json_schema without name',
    body: base({ response_format: { type: 'json_schema', json_schema: { schema: { type: 'object' } } } }),
    param: 'response_format.json_schema.name',
  },
  {
    title: 'response_format json_schema name of 65 characters',
    body: base({ response_format: { type: 'json_schema', json_schema: { name: name65 } } }),
    param: 'response_format.json_schema.name',
  },
  {
    title: 'response_format json_schema name with a space',
    body: base({ response_format: { type: 'json_schema', json_schema: { name: 'my schema' } } }),
    param: 'response_format.json_schema.name',
  },
  {
    title: 'response_format json_schema strict "yes"',
    body: base({ response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: 'yes' } } }),
    param: 'response_format.json_schema.strict',
  },
  {
    title: 'response_format json_schema schema not an object',
    body: base({ response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: 'object' } } }),
    param: 'response_format.json_schema.schema',
  },
  // seed
  { title: 'seed 1e19', body: base({ seed: 1e19 }), param: 'seed' },
  { title: 'seed -1e19', body: base({ seed: -1e19 }), param: 'seed' },
  { title: 'seed 1.5', body: base({ seed: 1.5 }), param: 'seed' },
  // stop
  { title: 'stop empty array', body: base({ stop: [] }), param: 'stop' },
  { title: 'stop with 5 items', body: base({ stop: ['a', 'b', 'c', 'd', 'e'] }), param: 'stop' },
  { title: 'stop with a non-string item', body: base({ stop: ['a', 1] }), param: 'stop[1]' },
  { title: 'stop as number', body: base({ stop: 5 }), param: 'stop' },
  // stream, stream_options
  { title: 'stream as string', body: base({ stream: 'true' }), param: 'stream' },
  { title: 'stream_options without stream', body: base({ stream_options: { include_usage: true } }), param: 'stream_options' },
  { title: 'stream_options with stream false', body: base({ stream: false, stream_options: { include_usage: true } }), param: 'stream_options' },
  {
    title: 'stream_options include_usage not boolean',
    body: base({ stream: true, stream_options: { include_usage: 'yes' } }),
    param: 'stream_options.include_usage',
  },
  { title: 'stream_options not an object', body: base({ stream: true, stream_options: true }), param: 'stream_options' },
  // thinking
  { title: 'thinking under strict compliance (default)', body: base({ thinking: { type: 'enabled', budget_tokens: 1024 } }), param: 'thinking' },
  {
    title: 'thinking under explicit strict compliance',
    body: base({ thinking: { type: 'disabled' } }),
    param: 'thinking',
    headers: { 'x-gateway-strict-api-compliance': 'true' },
  },
  {
    title: 'thinking budget_tokens 0 (lenient)',
    body: base({ thinking: { type: 'enabled', budget_tokens: 0 } }),
    param: 'thinking.budget_tokens',
    headers: LENIENT,
  },
  {
    title: 'thinking budget_tokens 1.5 (lenient)',
    body: base({ thinking: { type: 'enabled', budget_tokens: 1.5 } }),
    param: 'thinking.budget_tokens',
    headers: LENIENT,
  },
  { title: "thinking type 'maybe' (lenient)", body: base({ thinking: { type: 'maybe' } }), param: 'thinking.type', headers: LENIENT },
  { title: 'thinking without type (lenient)', body: base({ thinking: { budget_tokens: 10 } }), param: 'thinking.type', headers: LENIENT },
  { title: 'thinking not an object (lenient)', body: base({ thinking: 'on' }), param: 'thinking', headers: LENIENT },
  // temperature, top_p
  { title: 'temperature -0.1', body: base({ temperature: -0.1 }), param: 'temperature' },
  { title: 'temperature 2.1', body: base({ temperature: 2.1 }), param: 'temperature' },
  { title: 'top_p -0.1', body: base({ top_p: -0.1 }), param: 'top_p' },
  { title: 'top_p 1.1', body: base({ top_p: 1.1 }), param: 'top_p' },
  // tools
  { title: '129 tools', body: base({ tools: tools(129) }), param: 'tools' },
  { title: 'tools not an array', body: base({ tools: tool('a') }), param: 'tools' },
  { title: 'tool of type retrieval', body: base({ tools: [{ type: 'retrieval', function: { name: 'a' } }] }), param: 'tools[0].type' },
  { title: 'tool without function', body: base({ tools: [{ type: 'function' }] }), param: 'tools[0].function' },
  { title: 'tool name with a space', body: base({ tools: [tool('get weather')] }), param: 'tools[0].function.name' },
  { title: 'tool name of 65 characters', body: base({ tools: [tool('ok'), tool(name65)] }), param: 'tools[1].function.name' },
  { title: 'tool name empty', body: base({ tools: [tool('')] }), param: 'tools[0].function.name' },
  { title: 'tool parameters not an object', body: base({ tools: [tool('a', { parameters: 'object' })] }), param: 'tools[0].function.parameters' },
  { title: 'tool parameters as array', body: base({ tools: [tool('a', { parameters: [] })] }), param: 'tools[0].function.parameters' },
  // tool_choice
  { title: 'tool_choice bad string', body: base({ tools: tools(1), tool_choice: 'always' }), param: 'tool_choice' },
  { title: "tool_choice 'required' without tools", body: base({ tool_choice: 'required' }), param: 'tool_choice' },
  {
    title: 'tool_choice naming an unknown tool',
    body: base({ tools: tools(2), tool_choice: { type: 'function', function: { name: 'tool_9' } } }),
    param: 'tool_choice.function.name',
  },
  {
    title: 'tool_choice of wrong type',
    body: base({ tools: tools(1), tool_choice: { type: 'tool', function: { name: 'tool_0' } } }),
    param: 'tool_choice.type',
  },
  {
    title: 'tool_choice without function',
    body: base({ tools: tools(1), tool_choice: { type: 'function' } }),
    param: 'tool_choice.function',
  },
  // parallel_tool_calls, user
  { title: 'parallel_tool_calls as string', body: base({ tools: tools(1), parallel_tool_calls: 'yes' }), param: 'parallel_tool_calls' },
  { title: 'user as number', body: base({ user: 5 }), param: 'user' },
  // functions, function_call (deprecated)
  { title: 'functions empty', body: base({ functions: [] }), param: 'functions' },
  { title: '129 functions', body: base({ functions: functions(129) }), param: 'functions' },
  { title: 'functions not an array', body: base({ functions: { name: 'f' } }), param: 'functions' },
  { title: 'function with a bad name', body: base({ functions: [{ name: 'bad name!' }] }), param: 'functions[0].name' },
  { title: 'function without a name', body: base({ functions: [{ name: 'ok' }, { description: 'x' }] }), param: 'functions[1].name' },
  { title: 'function_call bad string', body: base({ functions: functions(1), function_call: 'required' }), param: 'function_call' },
  { title: 'function_call naming an unknown function', body: base({ functions: functions(1), function_call: { name: 'fn_7' } }), param: 'function_call.name' },
  { title: 'function_call object without name', body: base({ functions: functions(1), function_call: {} }), param: 'function_call.name' },
];

const invalidRowIds: string[] = [];

for (const row of invalidRows) {
  test.serial(`invalid: ${row.title} → 400 param ${row.param}`, async (t) => {
    const before = fake.requests.length;
    const { response, row: id } = await post(gateway, JSON.stringify(row.body), row.headers);
    invalidRowIds.push(id);
    t.is(response.status, 400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    t.like(body, { error: { type: 'invalid_request_error', param: row.param } });
    t.is(typeof body.error.message, 'string');
    t.is(fake.requests.length, before, 'the upstream must not be called');
  });
}

test.serial('no invalid body reached the upstream', (t) => {
  t.is(invalidRowIds.length, invalidRows.length);
  t.true(invalidRows.length >= 45);
  const reached = fake.requests.filter((request) => invalidRowIds.includes(String(request.headers['x-test-row'])));
  t.is(reached.length, 0);
  // Serial tests run before any concurrent one: nothing at all has been sent upstream yet.
  t.is(fake.requests.length, 0);
});

interface ValidRow {
  readonly title: string;
  /** A body object, or JSON text sent verbatim. */
  readonly body: Body | string;
  /** Top-level fields whose value the upstream must receive exactly as sent. */
  readonly fields: readonly string[];
  readonly headers?: Record<string, string>;
}

/** The base body as JSON text with `members` (JSON text) appended. */
const withRaw = (members: string): string => `${JSON.stringify(base()).slice(0, -1)},${members}}`;

const validRows: ValidRow[] = [
  { title: 'frequency_penalty -2', body: base({ frequency_penalty: -2 }), fields: ['frequency_penalty'] },
  { title: 'frequency_penalty 2', body: base({ frequency_penalty: 2 }), fields: ['frequency_penalty'] },
  { title: 'presence_penalty -2', body: base({ presence_penalty: -2 }), fields: ['presence_penalty'] },
  { title: 'presence_penalty 2', body: base({ presence_penalty: 2 }), fields: ['presence_penalty'] },
  { title: 'temperature 0', body: base({ temperature: 0 }), fields: ['temperature'] },
  { title: 'temperature 2', body: base({ temperature: 2 }), fields: ['temperature'] },
  { title: 'top_p 0', body: base({ top_p: 0 }), fields: ['top_p'] },
  { title: 'top_p 1', body: base({ top_p: 1 }), fields: ['top_p'] },
  { title: 'n 1', body: base({ n: 1 }), fields: ['n'] },
  { title: 'n 128', body: base({ n: 128 }), fields: ['n'] },
  { title: 'top_logprobs 0 with logprobs', body: base({ logprobs: true, top_logprobs: 0 }), fields: ['logprobs', 'top_logprobs'] },
  { title: 'top_logprobs 20 with logprobs', body: base({ logprobs: true, top_logprobs: 20 }), fields: ['logprobs', 'top_logprobs'] },
  { title: 'logit_bias -100 and 100', body: base({ logit_bias: { 50256: -100, 15: 100, 0: 0 } }), fields: ['logit_bias'] },
  // Written as JSON text: the digits do not fit a double, so the client sends them verbatim.
  { title: 'seed 9223372036854775807', body: withRaw('"seed":9223372036854775807'), fields: ['seed'] },
  { title: 'seed -9223372036854775807', body: withRaw('"seed":-9223372036854775807'), fields: ['seed'] },
  { title: 'seed -9223372036854775808', body: withRaw('"seed":-9223372036854775808'), fields: ['seed'] },
  { title: 'seed 0', body: base({ seed: 0 }), fields: ['seed'] },
  { title: 'stop with 4 items', body: base({ stop: ['a', 'b', 'c', '\n'] }), fields: ['stop'] },
  { title: 'stop with 1 item', body: base({ stop: ['END'] }), fields: ['stop'] },
  { title: 'stop as string', body: base({ stop: 'END' }), fields: ['stop'] },
  { title: 'stop null', body: base({ stop: null }), fields: ['stop'] },
  { title: 'max_tokens 1', body: base({ max_tokens: 1 }), fields: ['max_tokens'] },
  { title: 'max_completion_tokens 1', body: base({ max_completion_tokens: 1 }), fields: ['max_completion_tokens'] },
  {
    title: 'nulls wherever nullable',
    body: base({
      frequency_penalty: null,
      presence_penalty: null,
      logit_bias: null,
      logprobs: null,
      top_logprobs: null,
      max_tokens: null,
      max_completion_tokens: null,
      n: null,
      response_format: null,
      seed: null,
      stop: null,
      stream: null,
      stream_options: null,
      temperature: null,
      top_p: null,
    }),
    fields: [
      'frequency_penalty',
      'presence_penalty',
      'logit_bias',
      'logprobs',
      'top_logprobs',
      'max_tokens',
      'max_completion_tokens',
      'n',
      'response_format',
      'seed',
      'stop',
      'stream',
      'stream_options',
      'temperature',
      'top_p',
    ],
  },
  { title: '128 tools', body: base({ tools: tools(128), tool_choice: 'auto' }), fields: ['tools', 'tool_choice'] },
  {
    title: 'tool name of 64 characters chosen by tool_choice',
    body: base({ tools: [tool(name64)], tool_choice: { type: 'function', function: { name: name64 } }, parallel_tool_calls: false }),
    fields: ['tools', 'tool_choice', 'parallel_tool_calls'],
  },
  { title: "tool_choice 'required' with a tool", body: base({ tools: tools(1), tool_choice: 'required' }), fields: ['tools', 'tool_choice'] },
  { title: "tool_choice 'none'", body: base({ tools: tools(1), tool_choice: 'none' }), fields: ['tool_choice'] },
  {
    title: 'response_format json_schema with a 64-character name',
    body: base({
      response_format: {
        type: 'json_schema',
        json_schema: { name: name64, description: 'an answer', schema: { type: 'object' }, strict: null },
      },
    }),
    fields: ['response_format'],
  },
  { title: 'response_format json_object', body: base({ response_format: { type: 'json_object' } }), fields: ['response_format'] },
  { title: 'response_format text', body: base({ response_format: { type: 'text' } }), fields: ['response_format'] },
  {
    title: 'user content as text and image_url parts',
    body: base({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          ],
        },
      ],
    }),
    fields: ['messages'],
  },
  {
    title: 'user content with file parts (data URL with parameters, file id) and wav / mp3 audio',
    body: userParts(
      { type: 'file', file: { file_data: PDF_URL, filename: 'report.pdf' } },
      { type: 'file', file: { file_data: 'data:text/plain;charset=utf-8;base64,aGk=' } },
      { type: 'file', file: { file_id: 'file-abc123' } },
      { type: 'file', file: { file_data: PDF_URL, file_id: 'file-abc123', filename: '' } },
      { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZF', format: 'wav' } },
      { type: 'input_audio', input_audio: { data: 'SUQzBA==', format: 'mp3' } },
    ),
    fields: ['messages'],
  },
  {
    title: 'assistant with tool_calls and null content, then a tool message',
    body: base({
      tools: [tool('get_weather')],
      messages: [
        USER,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      ],
    }),
    fields: ['messages', 'tools'],
  },
  {
    title: 'function message with deprecated functions and function_call',
    body: base({
      functions: [{ name: 'lookup', description: 'look up', parameters: { type: 'object' } }],
      function_call: { name: 'lookup' },
      messages: [
        USER,
        { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{}' } },
        { role: 'function', name: 'lookup', content: 'found' },
      ],
    }),
    fields: ['messages', 'functions', 'function_call'],
  },
  { title: '128 functions with function_call auto', body: base({ functions: functions(128), function_call: 'auto' }), fields: ['functions', 'function_call'] },
  { title: 'function_call none', body: base({ functions: functions(1), function_call: 'none' }), fields: ['function_call'] },
  {
    title: 'developer and named system messages',
    body: base({
      messages: [{ role: 'developer', content: 'Answer in French.' }, { role: 'system', content: 'Be brief.', name: 'policy' }, USER],
    }),
    fields: ['messages'],
  },
  {
    title: 'system content as text parts',
    body: base({ messages: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, USER] }),
    fields: ['messages'],
  },
  { title: 'user string and named user message', body: base({ messages: [{ role: 'user', content: '', name: 'alice' }] }), fields: ['messages'] },
  { title: 'unknown top-level field is forwarded', body: base({ foo: 1, metadata: { a: 'b' } }), fields: ['foo', 'metadata'] },
  { title: 'user string and stream false', body: base({ user: 'user-1234', stream: false, logprobs: false }), fields: ['user', 'stream', 'logprobs'] },
  {
    title: 'thinking with strict compliance off',
    body: base({ thinking: { type: 'enabled', budget_tokens: 1 } }),
    fields: ['thinking'],
    headers: LENIENT,
  },
  { title: 'thinking disabled with strict compliance off', body: base({ thinking: { type: 'disabled' } }), fields: ['thinking'], headers: LENIENT },
  { title: 'thinking null under strict compliance', body: base({ thinking: null }), fields: ['thinking'] },
];

test('the valid table is large enough', (t) => {
  t.true(validRows.length >= 25);
});

for (const row of validRows) {
  test(`valid: ${row.title} → 200, reaches the upstream as sent`, async (t) => {
    const sent = typeof row.body === 'string' ? row.body : JSON.stringify(row.body);
    const { response, row: id } = await post(gateway, sent, row.headers);
    const answer = (await response.json()) as Record<string, any>;
    t.is(response.status, 200, JSON.stringify(answer));
    t.is(answer.object, 'chat.completion');
    const received = receivedFor(id);
    t.is(received.length, 1);
    t.is(received[0].method, 'POST');
    t.is(received[0].url, '/v1/chat/completions');
    const upstreamBody = received[0].json();
    const expected = JSON.parse(sent) as Body;
    for (const field of row.fields) {
      t.true(field in upstreamBody, `${field} reaches the upstream`);
      t.deepEqual(upstreamBody[field], expected[field], field);
    }
    // The OpenAI provider sends a non-streamed request up as it came.
    t.deepEqual(upstreamBody, expected);
  });
}

test('valid: stream with stream_options include_usage true reaches the upstream', async (t) => {
  const { response, row } = await post(gateway, JSON.stringify(base({ stream: true, stream_options: { include_usage: true } })));
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const text = await response.text();
  t.true(text.includes('data: '));
  const received = receivedFor(row);
  t.is(received.length, 1);
  t.like(received[0].json(), { stream: true, stream_options: { include_usage: true }, model: 'gpt-4.1' });
});

async function expectNotForwarded(t: ExecutionContext, target: TestGateway, body: string, status: number, type: string) {
  const { response, row } = await post(target, body);
  t.is(response.status, status);
  const answer = (await response.json()) as { error: Record<string, unknown> };
  t.is(answer.error.type, type);
  t.is(receivedFor(row).length, 0);
  return answer;
}

test('body that is not JSON → 400', async (t) => {
  const answer = await expectNotForwarded(t, gateway, '{"model": "gpt-4.1", "messages": [', 400, 'invalid_request_error');
  t.is(answer.error.code, 'invalid_json');
});

test('empty body → 400', async (t) => {
  const answer = await expectNotForwarded(t, gateway, '', 400, 'invalid_request_error');
  t.is(answer.error.code, 'invalid_json');
});

test('body that is a JSON array → 400', async (t) => {
  const answer = await expectNotForwarded(t, gateway, JSON.stringify([base()]), 400, 'invalid_request_error');
  t.is(answer.error.code, 'invalid_json');
});

test('body that is a JSON string or null → 400', async (t) => {
  await expectNotForwarded(t, gateway, '"hello"', 400, 'invalid_request_error');
  await expectNotForwarded(t, gateway, 'null', 400, 'invalid_request_error');
});

/** A valid chat body of exactly `size` bytes (ASCII only). */
const bodyOfSize = (size: number): string => {
  const empty = JSON.stringify(base({ messages: [{ role: 'user', content: '' }] }));
  const padding = size - empty.length;
  if (padding < 0) throw new Error('size too small');
  return JSON.stringify(base({ messages: [{ role: 'user', content: 'x'.repeat(padding) }] }));
};

test('body over the limit → 413, not forwarded', async (t) => {
  const body = bodyOfSize(4096);
  t.is(Buffer.byteLength(body), 4096);
  const answer = await expectNotForwarded(t, smallGateway, body, 413, 'request_too_large');
  t.is(answer.error.code, 'body_too_large');
});

test('body one byte over the limit → 413; exactly at the limit → 200', async (t) => {
  const over = bodyOfSize(1025);
  t.is(Buffer.byteLength(over), 1025);
  await expectNotForwarded(t, smallGateway, over, 413, 'request_too_large');

  const atLimit = bodyOfSize(1024);
  t.is(Buffer.byteLength(atLimit), 1024);
  const { response, row } = await post(smallGateway, atLimit);
  t.is(response.status, 200);
  await response.arrayBuffer();
  t.is(receivedFor(row).length, 1);
  t.deepEqual(receivedFor(row)[0].json(), JSON.parse(atLimit));
});

test.after('every request produced exactly one log entry, and no log line holds a secret', async (t) => {
  t.true(sent.size === 2);
  for (const [target, count] of sent) {
    await target.waitForEntries(count);
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.is(target.entries().length, count);
    for (const secret of SECRETS) t.false(target.rawLog().includes(secret));
  }
});
