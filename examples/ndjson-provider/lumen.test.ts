import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatRequest, ProviderPlugin, ProviderTarget, StreamStep } from '../../core/spec/provider/index.js';
import { runConformance, startScenarioServer } from '../../core/conformance/index.js';
import { ACCOUNT_KEY, startGateway } from '../../test/harness.js';
import { pluginDependencies } from '../../test/plugin-dependencies.js';
import { lumen } from './index.js';
import { toLumenRequest } from './lumen-chat.js';
import { conformance } from './lumen-conformance.js';
import { lumenFake } from './lumen-fake.js';

const root = process.cwd();
const fixture = (name: string) => readFileSync(join(root, 'examples/ndjson-provider/__fixtures__', name), 'utf8');
const json = (name: string) => JSON.parse(fixture(name)) as unknown;

/** A fixed clock, as the gateway's container would inject one. */
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const clock = { now: () => NOW };
const plugin: ProviderPlugin = lumen().create(pluginDependencies({ clock }));
const chat = plugin.operations.chat!;
const target: ProviderTarget = { baseUrl: 'https://api.lumen.example', customHost: false, headers: {}, credentials: { apiKey: 'k' }, strict: true };
const request = json('chat-request.json') as ChatRequest;

/** A recorded stream, fed through the plugin's own decoder in 5-byte reads (lines split anywhere), and mapped. */
function replay(name: string, stream: ChatRequest = { ...request, stream: true }): StreamStep[] {
  const decoder = chat.stream!.createDecoder!();
  const mapper = chat.stream!.createMapper(stream, target);
  const bytes = Buffer.from(fixture(name));
  const events = [];
  for (let offset = 0; offset < bytes.length; offset += 5) events.push(...decoder.push(bytes.subarray(offset, offset + 5)));
  events.push(...decoder.end());
  return events.map((event) => mapper.map(event));
}
const chunksOf = (steps: StreamStep[]): ChatCompletionChunk[] => steps.flatMap((step) => step.chunks ?? []);

test('the request mapping: instructions gathered, text parts joined, calls and results carried, stop and tools as Lumen names them', (t) => {
  t.deepEqual(toLumenRequest(request), json('chat-request.lumen.json'));
  const upstream = chat.toUpstream({ ...request, stream: true }, target);
  t.is(upstream.url, 'https://api.lumen.example/v1/generate');
  t.like(JSON.parse(String(upstream.body)), { stream: true, max_output: 64 });
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Key k' });
  const error = t.throws(() => chat.validate!({ ...request, n: 2 }));
  t.like(error, { status: 400 });
});

test('a recorded text answer maps to a chat completion, created from the injected clock', (t) => {
  t.deepEqual(chat.fromUpstream(json('chat-response-text.json'), request, target), {
    id: 'gen_7Kq2',
    object: 'chat.completion',
    created: Math.floor(NOW / 1000),
    model: 'lumen-1',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny in Oslo, 21 degrees.' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 },
  });
});

test('a recorded tool call maps to tool_calls with its arguments as JSON text', (t) => {
  const response = chat.fromUpstream(json('chat-response-tool-calls.json'), request, target);
  t.deepEqual(response.choices[0].message, {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo","days":[1,2]}' } }],
  });
  t.is(response.choices[0].finish_reason, 'tool_calls');
  t.throws(() => chat.fromUpstream({ id: 'x' }, request, target), { instanceOf: TypeError });
});

test('a recorded NDJSON stream decodes line by line and maps to chunks: one id, the clock, one opening, the length finish, usage last', (t) => {
  const steps = replay('chat-stream-text.ndjson');
  t.true(steps.at(-1)?.done);
  const chunks = chunksOf(steps);
  t.true(chunks.every((chunk) => chunk.id === 'gen_7Kq4' && chunk.created === Math.floor(NOW / 1000) && chunk.model === 'lumen-1'));
  t.deepEqual(chunks[0].choices, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  t.is(chunks.filter((chunk) => chunk.choices[0]?.delta.role === 'assistant').length, 1);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Sunny in Oslo, 21 degrees.');
  t.deepEqual(chunks.at(-2)?.choices, [{ index: 0, delta: {}, finish_reason: 'length' }]);
  t.deepEqual(chunks.at(-1), { id: 'gen_7Kq4', object: 'chat.completion.chunk', created: Math.floor(NOW / 1000), model: 'lumen-1', choices: [], usage: { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 } });
  t.true(chunks.slice(0, -1).every((chunk) => chunk.usage === null));
});

test('a recorded streamed tool call assembles to the same call', (t) => {
  const chunks = chunksOf(replay('chat-stream-tool-calls.ndjson'));
  const deltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  t.deepEqual(deltas[0], { index: 0, id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '' } });
  t.is(deltas.map((delta) => delta.function?.arguments ?? '').join(''), '{"city":"Oslo","days":[1,2]}');
  t.is(chunks.at(-2)?.choices[0].finish_reason, 'tool_calls');
});

test('a recorded stream error ends the stream with the provider message; a line that is not JSON is a malformed stream', (t) => {
  const steps = replay('chat-stream-error.ndjson');
  t.deepEqual(steps.at(-1), { error: { message: 'Lumen is overloaded.', type: 'api_error', param: null, code: 'overloaded' } });
  const mapper = chat.stream!.createMapper(request, target);
  t.is(mapper.map({ data: '{"type":"text","te' }).error?.code, 'malformed_stream');
});

test('a recorded error body maps to its message and code; a body that is not JSON is described by status', (t) => {
  const reply = (status: number, body: string) => ({ status, headers: {}, body: Buffer.from(body) });
  t.deepEqual(plugin.mapError(reply(404, fixture('chat-response-error.json'))), {
    message: 'The model lumen-9 does not exist.',
    type: 'not_found_error',
    param: null,
    code: 'unknown_model',
  });
  t.is(plugin.mapError(reply(502, '<html>Bad gateway</html>')).message, 'The provider returned HTTP 502: <html>Bad gateway</html>');
});

test('the NDJSON example passes the conformance kit', async (t) => {
  const report = await runConformance(conformance);
  t.true(report.passed, JSON.stringify(report.results.filter((result) => result.outcome === 'fail')));
  const skipped = report.results.filter((result) => result.outcome === 'skip').map((result) => result.name);
  t.deepEqual(skipped, ['chat.n', 'embeddings', 'rerank', 'images', 'speech', 'transcription'], 'only what Lumen declares it lacks is skipped');
});

test("through the gateway, the adapter reads the gateway's injected clock, plain and streamed", async (t) => {
  const server = await startScenarioServer(lumenFake);
  const gateway = await startGateway({ providers: [lumen()] }, {}, { clock });
  try {
    const client = new OpenAI({
      apiKey: 'lumen-key',
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'lumen', 'x-gateway-custom-host': server.baseUrl },
    });
    server.scenario = { kind: 'text', text: 'Clockwork answer.', finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 2 } };
    const answer = await client.chat.completions.create({ model: 'lumen-1', messages: [{ role: 'user', content: 'Hi' }] });
    t.is(answer.created, Math.floor(NOW / 1000));
    t.is(answer.choices[0].message.content, 'Clockwork answer.');
    const stream = await client.chat.completions.create({ model: 'lumen-1', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const created = new Set<number>();
    let content = '';
    for await (const chunk of stream) {
      created.add(chunk.created);
      content += chunk.choices[0]?.delta?.content ?? '';
    }
    t.deepEqual([...created], [Math.floor(NOW / 1000)]);
    t.is(content, 'Clockwork answer.');
    t.is(server.received.at(-1)?.headers.authorization, 'Key lumen-key');
  } finally {
    await gateway.close();
    await server.close();
  }
});

test('the guide shows every file of the NDJSON example exactly as it is', (t) => {
  const guide = readFileSync(join(root, 'docs/writing-a-provider.md'), 'utf8');
  const shown = [...guide.matchAll(/<!-- ndjson example file: (examples\/ndjson-provider\/\S+) -->\n```ts\n([\s\S]*?)```\n/g)];
  t.deepEqual(shown.map((match) => match[1]).sort(), [
    'examples/ndjson-provider/index.ts',
    'examples/ndjson-provider/lumen-chat.ts',
    'examples/ndjson-provider/lumen-conformance.ts',
    'examples/ndjson-provider/lumen-error.ts',
    'examples/ndjson-provider/lumen-fake.ts',
  ]);
  for (const [, path, code] of shown) t.is(code, readFileSync(join(root, path), 'utf8'), `${path} differs from the guide`);
});
