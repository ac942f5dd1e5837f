import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { conformance as groqSubject } from '../../plugins/providers/groq/groq-conformance.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { parseResponsesSse, validateResponsesStream } from '../fakes/responses-grammar.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';

/**
 * Request bodies as real agents send them, recorded from their SDKs' request types (`__fixtures__/`):
 * a Codex-style turn (developer message, environment context, OpenAI-sealed reasoning, shell calls,
 * a free-form `apply_patch` custom tool, `web_search`, `store: false`, `include`, `prompt_cache_key`,
 * `text.verbosity`, streamed) and an AI SDK call (system message, a PDF as `input_file`, structured
 * output). They work out of the box: natively on OpenAI, translated elsewhere, nothing refused that
 * can be dropped.
 */

const fixture = (name: string): Record<string, any> => JSON.parse(readFileSync(join(process.cwd(), 'test/responses/__fixtures__', name), 'utf8'));

let native: ResponsesFake;
let claude: RenderedFake;
let groq: RenderedFake;
let gateway: TestGateway;

test.before(async () => {
  native = await startResponsesFake();
  claude = await startRenderedFake(anthropicFakeRenderer);
  groq = await startRenderedFake(groqSubject.fake);
  gateway = await startGateway({ providers: [openai(), anthropic(), groqSubject.registration] });
});
test.after.always(async () => {
  await Promise.all([gateway?.close(), native?.close(), claude?.close(), groq?.close()]);
});

const post = (provider: string, host: string, body: unknown, trace: string) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': provider, 'x-gateway-custom-host': host, 'content-type': 'application/json', 'x-gateway-trace-id': trace },
    body: JSON.stringify(body),
  });

test.serial('a Codex turn on Anthropic: translated, streamed, what Claude cannot use dropped and logged', async (t) => {
  claude.answer({ kind: 'text', text: 'Fixed the typo in a.txt.', finishReason: 'stop', usage: { promptTokens: 900, completionTokens: 12 } });
  const trace = traceId('codex-anthropic');
  const response = await post('anthropic', claude.baseUrl, { ...fixture('codex-turn.json'), model: 'claude-sonnet-4-5' }, trace);
  t.is(response.status, 200);
  t.is(response.headers.get('x-gateway-dropped-tools'), 'web_search');
  const parsed = parseResponsesSse(await response.text());
  t.deepEqual(parsed.problems, []);
  const result = validateResponsesStream(parsed.events);
  t.deepEqual(result.problems, []);
  t.deepEqual([...result.texts.values()], ['Fixed the typo in a.txt.']);

  const sent = claude.body(claude.requests.length - 1);
  t.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 8192 }, 'reasoning.effort medium');
  t.deepEqual(sent.tools.map((tool: { name: string }) => tool.name), ['shell', 'apply_patch']);
  t.deepEqual(sent.tools[1].input_schema.required, ['input'], 'the free-form tool takes one string');
  t.true(sent.tools[1].description.includes('Input format (lark)'));
  t.is(sent.system.length, 2, 'instructions and the developer message');
  const assistant = sent.messages.find((message: { role: string }) => message.role === 'assistant');
  t.deepEqual(assistant.content.map((block: { type: string }) => block.type), ['tool_use'], "OpenAI's sealed reasoning is not sent to Claude");
  const entry = (await gateway.waitForEntries(1)).find((candidate) => candidate.traceId === trace)!;
  t.deepEqual(entry.droppedFields, ['tools[2]', 'prompt_cache_key', 'text.verbosity', 'reasoning.summary']);
  t.is(entry.usage?.promptTokens, 900);
});

test.serial('the same Codex turn on OpenAI goes up natively and unchanged', async (t) => {
  native.answer({ kind: 'text', text: 'Done.', webSearch: true });
  const body = fixture('codex-turn.json');
  const response = await post('openai', native.baseUrl, body, traceId('codex-openai'));
  t.is(response.status, 200);
  t.is(response.headers.get('x-gateway-dropped-tools'), null);
  const result = validateResponsesStream(parseResponsesSse(await response.text()).events);
  t.deepEqual(result.problems, []);
  t.deepEqual(native.bodies().at(-1), body);
});

test.serial('an AI SDK call (system message, PDF input_file, json_schema) on a compatible provider', async (t) => {
  groq.answer({ kind: 'text', text: '{"title":"Annual report"}', finishReason: 'stop', usage: { promptTokens: 50, completionTokens: 8 } });
  const response = await post('groq', groq.baseUrl, { ...fixture('ai-sdk-structured-pdf.json'), model: 'llama-3.3-70b-versatile' }, traceId('ai-sdk'));
  t.is(response.status, 200);
  const answer = (await response.json()) as { output: Array<{ type: string; content: Array<{ text: string }> }>; status: string };
  t.is(answer.status, 'completed');
  t.deepEqual(JSON.parse(answer.output[0].content[0].text), { title: 'Annual report' });
  const sent = groq.body(groq.requests.length - 1);
  t.is(sent.messages[0].role, 'system');
  t.deepEqual(sent.messages[1].content[1], { type: 'file', file: { filename: 'report.pdf', file_data: fixture('ai-sdk-structured-pdf.json').input[1].content[1].file_data } });
  t.is(sent.response_format.type, 'json_schema');
  t.is(sent.max_tokens, 512);
});
