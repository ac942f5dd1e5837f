import type { ServerResponse } from 'node:http';
import test from 'ava';
import OpenAI from 'openai';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { gemini } from '../../plugins/providers/gemini/index.js';
import { geminiFakeRenderer } from '../../plugins/providers/gemini/gemini-fake.js';
import { conformance as groqSubject } from '../../plugins/providers/groq/groq-conformance.js';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { collectResponsesStream } from '../fakes/responses-grammar.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';

/**
 * What real agents send, translated: structured output, reasoning effort and signed reasoning that
 * round-trips (`include: ["reasoning.encrypted_content"]`, and through the store), custom and
 * namespaced tools, built-in tools dropped (header) or refused (config), files and images, fields
 * that are dropped and logged.
 */

const usage = { promptTokens: 7, completionTokens: 4 };
const SIGNATURE = 'EqQBCkgIARABGAIiQL2signature-of-the-thinking';

/** Anthropic answering with signed thinking, text and a tool call (plain or streamed). */
function thinkingAnthropic(request: RecordedRequest, response: ServerResponse): void {
  const body = request.json();
  const blocks = [
    { type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: SIGNATURE },
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Lyon' } },
  ];
  const message = { id: 'msg_01', type: 'message', role: 'assistant', model: body.model, stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 30, output_tokens: 20 } };
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...message, content: blocks }));
    return;
  }
  const sse = (value: Record<string, unknown>) => `event: ${String(value.type)}\ndata: ${JSON.stringify(value)}\n\n`;
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write(sse({ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 30, output_tokens: 1 } } }));
  response.write(sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }));
  response.write(sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants the weather; ' } }));
  response.write(sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'call the tool.' } }));
  response.write(sse({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } }));
  response.write(sse({ type: 'content_block_stop', index: 0 }));
  response.write(sse({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }));
  response.write(sse({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Let me check.' } }));
  response.write(sse({ type: 'content_block_stop', index: 1 }));
  response.write(sse({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {} } }));
  response.write(sse({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } }));
  response.write(sse({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Lyon"}' } }));
  response.write(sse({ type: 'content_block_stop', index: 2 }));
  response.write(sse({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } }));
  response.end(sse({ type: 'message_stop' }));
}

let claude: Fake;
let groq: RenderedFake;
let google: RenderedFake;
let gateway: TestGateway;
let refusing: TestGateway;

test.before(async () => {
  claude = await startFake(thinkingAnthropic);
  groq = await startRenderedFake(groqSubject.fake);
  google = await startRenderedFake(geminiFakeRenderer);
  const providers = [anthropic(), gemini(), groqSubject.registration];
  gateway = await startGateway({ providers });
  refusing = await startGateway({ providers, responses: { builtInTools: 'refuse' } });
});
test.after.always(async () => {
  await Promise.all([gateway?.close(), refusing?.close(), claude?.close(), groq?.close(), google?.close()]);
});

const client = (provider: string, host: string, target = gateway) =>
  new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${target.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': provider, 'x-gateway-custom-host': host },
  });
const viaClaude = () => client('anthropic', claude.baseUrl);
const viaGroq = (target = gateway) => client('groq', groq.baseUrl, target);
const viaGemini = () => client('gemini', google.baseUrl);
const weather: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };

test.serial('Anthropic: reasoning.effort becomes a thinking budget; signed thinking round-trips through include and through the store', async (t) => {
  const first = await viaClaude().responses.create({ model: 'claude-sonnet-4-5', input: 'Weather in Lyon?', tools: [weather], reasoning: { effort: 'medium' }, include: ['reasoning.encrypted_content'] });
  t.deepEqual(claude.requests[0].json().thinking, { type: 'enabled', budget_tokens: 8192 });
  t.deepEqual(first.output.map((item) => item.type), ['reasoning', 'message', 'function_call']);
  const reasoning = first.output[0];
  if (reasoning.type !== 'reasoning') return t.fail();
  t.deepEqual(reasoning.summary, [{ type: 'summary_text', text: 'The user wants the weather; call the tool.' }]);
  t.truthy(reasoning.encrypted_content);
  t.false(reasoning.encrypted_content!.includes(' '), 'opaque');

  // The client sends the turn back itself (store: false style): the signature reaches Anthropic intact.
  await viaClaude().responses.create({
    model: 'claude-sonnet-4-5',
    tools: [weather],
    input: [{ role: 'user', content: 'Weather in Lyon?' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: 'toolu_01', output: 'rainy' }],
  });
  const replayed = claude.requests[1].json().messages[1];
  t.deepEqual(replayed.content[0], { type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: SIGNATURE });
  t.deepEqual(replayed.content.map((block: { type: string }) => block.type), ['thinking', 'text', 'tool_use']);

  // Without include the client never sees the envelope, yet previous_response_id replays it from the store.
  const hidden = await viaClaude().responses.create({ model: 'claude-sonnet-4-5', input: 'Weather in Lyon?', tools: [weather] });
  t.false('encrypted_content' in hidden.output[0]);
  await viaClaude().responses.create({ model: 'claude-sonnet-4-5', tools: [weather], previous_response_id: hidden.id, input: [{ type: 'function_call_output', call_id: 'toolu_01', output: 'rainy' }] });
  t.deepEqual(claude.requests.at(-1)!.json().messages[1].content[0], { type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: SIGNATURE });
});

test.serial('Anthropic: streamed thinking gives reasoning summary events and a sealed reasoning item', async (t) => {
  const stream = await viaClaude().responses.create({ model: 'claude-sonnet-4-5', input: 'Weather?', tools: [weather], stream: true, include: ['reasoning.encrypted_content'] });
  const result = await collectResponsesStream(stream);
  t.deepEqual(result.problems, []);
  t.deepEqual([...result.summaries.values()], ['The user wants the weather; call the tool.']);
  for (const type of ['response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done']) {
    t.true(result.types.includes(type), type);
  }
  t.deepEqual(result.response?.output.map((item: { type: string }) => item.type), ['reasoning', 'message', 'function_call']);
  t.truthy(result.response?.output[0].encrypted_content);
  await viaClaude().responses.create({
    model: 'claude-sonnet-4-5',
    tools: [weather],
    input: [{ role: 'user', content: 'Weather?' }, ...result.response!.output, { type: 'function_call_output', call_id: 'toolu_01', output: 'sunny' }],
  });
  t.is(claude.requests.at(-1)!.json().messages[1].content[0].signature, SIGNATURE);
});

test.serial('structured output: json_schema reaches a compatible provider and Gemini; Anthropic refuses it naming text.format', async (t) => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
  groq.answer({ kind: 'text', text: '{"city":"Paris"}', finishReason: 'stop', usage });
  const answer = await viaGroq().responses.create({ model: 'llama-3.3-70b-versatile', input: 'City?', text: { format: { type: 'json_schema', name: 'city', schema, strict: true } } });
  t.deepEqual(JSON.parse(answer.output_text), { city: 'Paris' });
  t.deepEqual(groq.body(groq.requests.length - 1).response_format, { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } });
  google.answer({ kind: 'text', text: '{"city":"Rome"}', finishReason: 'stop', usage });
  const fromGemini = await viaGemini().responses.create({ model: 'gemini-2.5-flash', input: 'City?', text: { format: { type: 'json_schema', name: 'city', schema } }, reasoning: { effort: 'low' } });
  t.deepEqual(JSON.parse(fromGemini.output_text), { city: 'Rome' });
  const config = google.body(google.requests.length - 1).generationConfig;
  t.is(config.responseMimeType, 'application/json');
  t.deepEqual(config.thinkingConfig, { thinkingBudget: 1024 });
  const refused = await t.throwsAsync(viaClaude().responses.create({ model: 'claude-sonnet-4-5', input: 'City?', text: { format: { type: 'json_object' } } }), { instanceOf: OpenAI.BadRequestError });
  t.is((refused as InstanceType<typeof OpenAI.BadRequestError>).param, 'text.format');
});

test.serial('custom and namespaced tools become chat functions and come back as their own items, plain and streamed', async (t) => {
  const tools: OpenAI.Responses.Tool[] = [
    { type: 'custom', name: 'apply_patch', description: 'Apply a patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /.+/' } },
    { type: 'namespace', name: 'files', description: 'File tools', tools: [{ type: 'function', name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } }] } as OpenAI.Responses.Tool,
  ];
  groq.answer({ kind: 'toolCall', id: 'call_ns', name: 'files__read', arguments: '{"path":"a.txt"}', usage });
  const namespaced = await viaGroq().responses.create({ model: 'llama-3.3-70b-versatile', input: 'Read a.txt', tools });
  const sent = groq.body(groq.requests.length - 1).tools.map((tool: { function: { name: string } }) => tool.function.name);
  t.deepEqual(sent, ['apply_patch', 'files__read']);
  t.like(namespaced.output[0], { type: 'function_call', name: 'read', namespace: 'files', arguments: '{"path":"a.txt"}' });

  groq.answer({ kind: 'toolCall', id: 'call_patch', name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\nfix' }), usage });
  const custom = await viaGroq().responses.create({ model: 'llama-3.3-70b-versatile', input: 'Patch it', tools });
  t.like(custom.output[0], { type: 'custom_tool_call', name: 'apply_patch', call_id: 'call_patch', input: '*** Begin Patch\nfix' });

  const stream = await viaGroq().responses.create({ model: 'llama-3.3-70b-versatile', input: 'Patch it', tools, stream: true });
  const result = await collectResponsesStream(stream);
  t.deepEqual(result.problems, []);
  t.true(result.types.includes('response.custom_tool_call_input.done'));
  t.like(result.response?.output[0], { type: 'custom_tool_call', input: '*** Begin Patch\nfix' });

  // The calls and their outputs go back as chat tool turns.
  groq.answer({ kind: 'text', text: 'Patched.', finishReason: 'stop', usage });
  await viaGroq().responses.create({
    model: 'llama-3.3-70b-versatile',
    tools,
    input: [
      { role: 'user', content: 'Patch it' },
      { type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: '*** Begin Patch\nfix' },
      { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' },
    ],
  });
  const messages = groq.body(groq.requests.length - 1).messages;
  t.deepEqual(messages[1].tool_calls, [{ id: 'call_patch', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\nfix' }) } }]);
  t.deepEqual(messages[2], { role: 'tool', tool_call_id: 'call_patch', content: 'Done!' });
});

test.serial('built-in tools: dropped with x-gateway-dropped-tools and logged; refused with 400 when configured', async (t) => {
  groq.answer({ kind: 'text', text: 'No search here.', finishReason: 'stop', usage });
  const trace = traceId('dropped-tools');
  const { data, response } = await viaGroq()
    .responses.create(
      { model: 'llama-3.3-70b-versatile', input: 'News?', tools: [{ type: 'web_search' }, weather, { type: 'file_search', vector_store_ids: ['vs_1'] }], truncation: 'auto', service_tier: 'auto', prompt_cache_key: 'k' },
      { headers: { 'x-gateway-trace-id': trace } },
    )
    .withResponse();
  t.is(data.output_text, 'No search here.');
  t.is(response.headers.get('x-gateway-dropped-tools'), 'web_search, file_search');
  const body = groq.body(groq.requests.length - 1);
  t.deepEqual(body.tools.map((tool: { function: { name: string } }) => tool.function.name), ['get_weather']);
  for (const field of ['truncation', 'service_tier', 'prompt_cache_key', 'input', 'instructions']) t.false(field in body, field);
  const entry = (await gateway.waitForEntries(1)).find((candidate) => candidate.traceId === trace);
  t.deepEqual(entry?.droppedFields, ['tools[0]', 'tools[2]', 'truncation', 'service_tier', 'prompt_cache_key']);

  const before = groq.requests.length;
  const refused = await t.throwsAsync(viaGroq(refusing).responses.create({ model: 'llama-3.3-70b-versatile', input: 'News?', tools: [weather, { type: 'web_search' }] }), { instanceOf: OpenAI.BadRequestError });
  t.is((refused as InstanceType<typeof OpenAI.BadRequestError>).param, 'tools[1].type');
  t.is((refused as InstanceType<typeof OpenAI.BadRequestError>).code, 'unsupported_tool');
  t.is(groq.requests.length, before);
});

test.serial('developer and system messages, images and PDF files map to chat parts; fields needing provider state are refused', async (t) => {
  groq.answer({ kind: 'text', text: 'Seen.', finishReason: 'stop', usage });
  const pdf = `data:application/pdf;base64,${Buffer.from('%PDF-1.4 fake').toString('base64')}`;
  await viaGroq().responses.create({
    model: 'llama-3.3-70b-versatile',
    instructions: 'Be precise.',
    input: [
      { role: 'developer', content: 'Answer in French.' },
      { role: 'system', content: [{ type: 'input_text', text: 'Extra rules.' }] },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Describe these.' },
          { type: 'input_image', image_url: 'https://example.test/cat.png', detail: 'low' },
          { type: 'input_file', file_data: pdf, filename: 'doc.pdf' },
        ],
      },
    ],
  });
  const { messages } = groq.body(groq.requests.length - 1);
  t.deepEqual(messages, [
    { role: 'system', content: 'Be precise.' },
    // Groq does not know the developer role: it goes as system, as on chat.
    { role: 'system', content: 'Answer in French.' },
    { role: 'system', content: 'Extra rules.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Describe these.' },
        { type: 'image_url', image_url: { url: 'https://example.test/cat.png', detail: 'low' } },
        // The chat `file` part (added to chat in the same issue): PDFs travel as it.
        { type: 'file', file: { file_data: pdf, filename: 'doc.pdf' } },
      ],
    },
  ]);
  const background = await t.throwsAsync(viaGroq().responses.create({ model: 'llama-3.3-70b-versatile', input: 'x', background: true }), { instanceOf: OpenAI.BadRequestError });
  t.is((background as InstanceType<typeof OpenAI.BadRequestError>).param, 'background');
});

test.serial('max_output_tokens reached: status incomplete with reason max_output_tokens, plain and streamed', async (t) => {
  groq.answer({ kind: 'text', text: 'Cut sh', finishReason: 'length', usage });
  const plain = await viaGroq().responses.create({ model: 'llama-3.3-70b-versatile', input: 'Long story', max_output_tokens: 16 });
  t.is(plain.status, 'incomplete');
  t.deepEqual(plain.incomplete_details, { reason: 'max_output_tokens' });
  t.is(groq.body(groq.requests.length - 1).max_tokens, 16);
  const stream = await viaGroq().responses.create({ model: 'llama-3.3-70b-versatile', input: 'Long story', max_output_tokens: 16, stream: true });
  const result = await collectResponsesStream(stream);
  t.deepEqual(result.problems, []);
  t.is(result.terminal, 'response.incomplete');
  t.deepEqual(result.response?.incomplete_details, { reason: 'max_output_tokens' });
});

test.serial("a provider's own refusal of a translated field names the Responses field", async (t) => {
  const before = claude.requests.length;
  // Anthropic takes images as data or http(s) URLs only: its chat mapping refuses this one, and the
  // error names `input` (a chat message's index is not an input item's).
  const error = await t.throwsAsync(
    viaClaude().responses.create({ model: 'claude-sonnet-4-5', instructions: 'x', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://example.test/cat.png', detail: 'auto' }] }] }),
    { instanceOf: OpenAI.BadRequestError },
  );
  t.is((error as InstanceType<typeof OpenAI.BadRequestError>).param, 'input');
  t.regex((error as Error).message, /data URL or an http\(s\):\/\/ URL/);
  t.is(claude.requests.length, before);
});
