import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import OpenAI from 'openai';
import { defineGuardrail, step } from '../../core/spec/index.js';
import { pii } from '../../plugins/guardrails/index.js';
import { groq } from '../../plugins/providers/groq/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, gatewayHeaders, PROVIDER_KEY, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';
import { anthropicClient } from '../messages/helpers.js';
import { maskModel, type MaskModel, randomSplit, seeded, sseData } from './mask-fake.js';

/**
 * Issue 37, "PII masked, then restored", beyond streamed text (pii-mask-streams.e2e.test.ts): tool-call
 * arguments restored in plain and streamed answers on chat, Responses and Messages; structured
 * output; a placeholder the model invents left as written; and the peers' bug reports as
 * regression tests: an analyzer that fails denies the request (it is not passed unmasked), tool-call
 * arguments are restored, a streamed answer is not masked twice. Then the values are searched for
 * in every place the gateway writes: pino's output, the request log store through the dashboard's
 * log API (list, detail, export with bodies) and an error body.
 */

const EMAIL = 'ana.lopez@example.com';
const PHONE = '+44 20 7946 0958';
const PROMPT = `Mail ${EMAIL} or call ${PHONE}.`;
const NEEDLES = [EMAIL, 'ana.lopez', PHONE, '7946 0958'];
const TOOL = { type: 'function' as const, function: { name: 'send_mail', description: 'Sends a mail', parameters: { type: 'object', properties: { to: { type: 'string' }, note: { type: 'string' } } } } };
const ARGUMENTS = '{"to":"<EMAIL_1>","note":"call <PHONE_1>, not <EMAIL_7>"}';
const RESTORED_ARGUMENTS = { to: EMAIL, note: `call ${PHONE}, not <EMAIL_7>` };

let model: MaskModel;
let fake: Fake;
let gateway: TestGateway;
const traces: string[] = [];
test.before(async () => {
  model = maskModel();
  fake = await startFake(model.handler);
  gateway = await startGateway({
    providers: [openai(), groq()],
    policies: { masked: { input: [pii({ action: 'mask' })] } },
    defaultPolicy: 'masked',
  });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

/** Headers of one traced request (the log search at the end finds them all). */
const traced = (label: string, extra: Record<string, string> = {}) => {
  const trace = traceId(label);
  traces.push(trace);
  return { 'x-gateway-trace-id': trace, ...extra };
};
const chat = (label: string, extra: Record<string, string> = {}) => sdkClient(gateway.url, fake.baseUrl, traced(label, extra));
const responses = (label: string) =>
  new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'groq', 'x-gateway-custom-host': fake.baseUrl, ...traced(label) },
  });
const messages = (label: string) => anthropicClient(gateway.url, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, ...traced(label) });

test.serial('chat, plain: text, tool-call arguments and structured output restored; an invented placeholder stays; the model saw placeholders only', async (t) => {
  const from = model.seen.length;
  model.script = { pieces: ['Write to <EMAIL_1> or <PHONE_1>; <EMAIL_7> is not yours.'] };
  const text = await chat('mask-chat').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] });
  t.is(text.choices[0].message.content, `Write to ${EMAIL} or ${PHONE}; <EMAIL_7> is not yours.`);

  model.script = { pieces: [ARGUMENTS], tool: 'send_mail' };
  const call = await chat('mask-chat-tool').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }], tools: [TOOL] });
  const toolCall = call.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  t.deepEqual(JSON.parse(toolCall.function.arguments), RESTORED_ARGUMENTS);

  model.script = { pieces: ['{"email":"<EMAIL_1>","phone":"<PHONE_1>"}'] };
  const structured = await chat('mask-chat-structured').chat.completions.create({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: PROMPT }],
    response_format: { type: 'json_schema', json_schema: { name: 'contact', schema: { type: 'object', properties: { email: { type: 'string' }, phone: { type: 'string' } } } } },
  });
  t.deepEqual(JSON.parse(structured.choices[0].message.content!), { email: EMAIL, phone: PHONE });

  const sent = model.seen.slice(from);
  t.is(sent.length, 3);
  t.false(sent.some((body) => NEEDLES.some((needle) => body.includes(needle))));
  t.true(sent.every((body) => body.includes('Mail <EMAIL_1> or call <PHONE_1>.')));
});

test.serial('text completions: the prompt masked, the answer restored, plain and streamed (random splits)', async (t) => {
  const from = model.seen.length;
  model.script = { pieces: ['Sent to <EMAIL_1>, not <EMAIL_7>.'] };
  const plain = await chat('mask-completion').completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: PROMPT });
  t.is(plain.choices[0].text, `Sent to ${EMAIL}, not <EMAIL_7>.`);
  const next = seeded(16);
  for (let round = 0; round < 20; round++) {
    model.script = { pieces: randomSplit('Sent to <EMAIL_1> and <PHONE_1>.', next) };
    let text = '';
    for await (const chunk of await chat('mask-completion-stream').completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: PROMPT, stream: true })) text += chunk.choices[0]?.text ?? '';
    t.is(text, `Sent to ${EMAIL} and ${PHONE}.`, `round ${round}: ${JSON.stringify(model.script.pieces)}`);
  }
  t.true(model.seen.slice(from).every((body) => JSON.parse(body).prompt === 'Mail <EMAIL_1> or call <PHONE_1>.'));
});

test.serial('image generation: the prompt masked, the revised prompt restored', async (t) => {
  const from = model.seen.length;
  model.script = { pieces: ['A postcard addressed to <EMAIL_1>, not <EMAIL_7>'] };
  const image = await chat('mask-image').images.generate({ model: 'dall-e-3', prompt: PROMPT });
  t.is(image.data?.[0].revised_prompt, `A postcard addressed to ${EMAIL}, not <EMAIL_7>`);
  t.is(JSON.parse(model.seen[from]).prompt, 'Mail <EMAIL_1> or call <PHONE_1>.');
});

test.serial('chat, streamed: tool-call arguments split at random places are restored (50 splits, through the SDK)', async (t) => {
  const next = seeded(11);
  for (let round = 0; round < 50; round++) {
    model.script = { pieces: randomSplit(ARGUMENTS, next), tool: 'send_mail' };
    const stream = await chat('mask-chat-tool-stream').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }], tools: [TOOL], stream: true });
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        for (const delta of choice.delta.tool_calls ?? []) args += delta.function?.arguments ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    t.deepEqual(JSON.parse(args), RESTORED_ARGUMENTS, `round ${round}: ${JSON.stringify(model.script.pieces)}`);
    t.is(finish, 'tool_calls');
  }
});

test.serial('Responses API: a function call restored, plain and streamed (deltas, done, completed)', async (t) => {
  model.script = { pieces: [ARGUMENTS], tool: 'send_mail' };
  const tools = [{ type: 'function' as const, name: 'send_mail', parameters: TOOL.function.parameters, strict: false }];
  const plain = await responses('mask-responses-tool').responses.create({ model: 'llama-3.1-8b-instant', input: PROMPT, tools });
  const item = plain.output.find((entry) => entry.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
  t.deepEqual(JSON.parse(item.arguments), RESTORED_ARGUMENTS);

  model.script = { pieces: randomSplit(ARGUMENTS, seeded(12)), tool: 'send_mail' };
  const response = await fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json', 'x-gateway-provider': 'groq', ...traced('mask-responses-tool-stream') }),
    body: JSON.stringify({ model: 'llama-3.1-8b-instant', input: PROMPT, tools, stream: true }),
  });
  const events = sseData(await response.text());
  const deltas = events.filter((event) => event.type === 'response.function_call_arguments.delta').map((event) => event.delta as string).join('');
  t.deepEqual(JSON.parse(deltas), RESTORED_ARGUMENTS);
  t.deepEqual(JSON.parse(events.find((event) => event.type === 'response.function_call_arguments.done')!.arguments), RESTORED_ARGUMENTS);
  const completed = events.find((event) => event.type === 'response.completed')!.response;
  t.deepEqual(JSON.parse(completed.output.find((entry: { type: string }) => entry.type === 'function_call').arguments), RESTORED_ARGUMENTS);
});

test.serial('Messages API: tool_use input restored, plain and streamed (input_json_delta split at random places)', async (t) => {
  model.script = { pieces: [ARGUMENTS], tool: 'send_mail' };
  const tools = [{ name: 'send_mail', description: 'Sends a mail', input_schema: { type: 'object' as const, properties: TOOL.function.parameters.properties } }];
  const plain = await messages('mask-messages-tool').messages.create({ model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }], tools });
  const block = plain.content.find((entry) => entry.type === 'tool_use');
  t.deepEqual(block?.type === 'tool_use' ? block.input : undefined, RESTORED_ARGUMENTS);

  const next = seeded(13);
  for (let round = 0; round < 20; round++) {
    model.script = { pieces: randomSplit(ARGUMENTS, next), tool: 'send_mail' };
    const stream = messages('mask-messages-tool-stream').messages.stream({ model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }], tools });
    const message = await stream.finalMessage();
    const streamed = message.content.find((entry) => entry.type === 'tool_use');
    t.deepEqual(streamed?.type === 'tool_use' ? streamed.input : undefined, RESTORED_ARGUMENTS, `round ${round}`);
  }
});

test.serial('regression (a peer re-masks streamed answers): with pii on both sides, the answer comes back with the values, plain and streamed, not masked twice', async (t) => {
  const answer = 'Your mail is <EMAIL_1>, your phone <PHONE_1>.';
  const restored = `Your mail is ${EMAIL}, your phone ${PHONE}.`;
  // Output guardrails judge what the model wrote (placeholders); the values put back after them are the user's own, not masked again.
  const both = await startGateway({ providers: [openai()], policies: { both: { input: [pii({ action: 'mask' })], output: [pii({ action: 'mask' })] } }, defaultPolicy: 'both' });
  t.teardown(() => both.close());
  const twice = sdkClient(both.url, fake.baseUrl);
  model.script = { pieces: [answer] };
  t.is((await twice.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] })).choices[0].message.content, restored);
  model.script = { pieces: randomSplit(answer, seeded(14)) };
  const stream = await twice.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.is(text, restored);
  // A value the model wrote itself is still judged (and redacted) by the output side.
  model.script = { pieces: ['Also write to bo@example.org.'] };
  t.is((await twice.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] })).choices[0].message.content, 'Also write to [REDACTED_EMAIL].');
  // And the masking-only policy of the shared gateway agrees.
  model.script = { pieces: [answer] };
  t.is((await chat('mask-twice').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] })).choices[0].message.content, restored);
});

test.serial('regression (a peer fails open when its analyzer errors): a masking step that fails or times out denies the request; nothing goes upstream', async (t) => {
  const broken = defineGuardrail<Record<string, never>>(
    { id: 'broken-analyzer', version: '1.0.0', description: 'An analyzer that fails.', stages: ['input'], incremental: true, params: { type: 'object' } },
    () => () => {
      throw new Error(`analyzer down while reading ${EMAIL}`);
    },
  );
  const hanging = defineGuardrail<Record<string, never>>(
    { id: 'hanging-analyzer', version: '1.0.0', description: 'An analyzer that never answers.', stages: ['input'], incremental: true, params: { type: 'object' } },
    () => () => new Promise(() => {}),
  );
  const before = model.seen.length;
  for (const [policy, failure] of [[{ input: [broken({}), pii({ action: 'mask' })] }, 'error'], [{ input: [step(hanging({}), { timeoutMs: 50 }), pii({ action: 'mask' })] }, 'timeout']] as const) {
    const failing = await startGateway({ providers: [openai()], policies: { failing: policy }, defaultPolicy: 'failing' });
    t.teardown(() => failing.close());
    const response = await fetch(`${failing.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json' }),
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] }),
    });
    t.is(response.status, 400);
    const body = await response.text();
    t.is(JSON.parse(body).error.code, 'guardrail_denied');
    t.false(NEEDLES.some((needle) => body.includes(needle)), 'the error body quotes nothing');
    const entries = await failing.waitForEntries(1);
    t.like(entries[0].guardrails[0], { action: 'deny', failure });
    t.is(entries[0].guardrails.length, 1, 'the chain stopped at the failure');
    t.false(NEEDLES.some((needle) => failing.rawLog().includes(needle)));
  }
  t.is(model.seen.length, before, 'nothing was sent upstream');
});

test.serial('the values are in no sink: pino, the request log store through the log API (list, detail, export with bodies), an error body; the log shows the masked request', async (t) => {
  // An upstream error quoting what it was sent: the client's error body carries placeholders only.
  model.script = { pieces: [], error: true };
  const error = await t.throwsAsync(chat('mask-error').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] }), { instanceOf: OpenAI.BadRequestError });
  t.true(error!.message.includes('<EMAIL_1>'), error!.message);
  const errorBody = JSON.stringify((error as InstanceType<typeof OpenAI.BadRequestError>).error);
  // And a streamed answer, so that a stream's captured body is searched too.
  model.script = { pieces: randomSplit('Mail <EMAIL_1> now.', seeded(15)) };
  let streamed = '';
  for await (const chunk of await chat('mask-sinks-stream').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }], stream: true })) {
    streamed += chunk.choices[0]?.delta.content ?? '';
  }
  t.is(streamed, `Mail ${EMAIL} now.`);

  await gateway.waitForEntries(traces.length, 5000);
  await gateway.gateway.flushLogs();
  const admin = { 'x-gateway-api-key': ACCOUNT_KEY };
  const getJson = async (path: string): Promise<any> => (await fetch(`${gateway.url}${path}`, { headers: admin })).json();
  const list = await getJson('/admin/logs?limit=500');
  const ids: string[] = list.data.filter((row: { trace_id: string }) => traces.includes(row.trace_id)).map((row: { id: string }) => row.id);
  t.is(ids.length, traces.length, 'every request is in the store');
  const details: Array<Record<string, any>> = await Promise.all(ids.map((id) => getJson(`/admin/logs/${id}`)));
  const sinks: Record<string, string> = {
    pino: gateway.rawLog(),
    entries: JSON.stringify(gateway.entries()),
    list: JSON.stringify(list),
    detail: JSON.stringify(details),
    export: await (await fetch(`${gateway.url}/admin/logs/export?format=jsonl&bodies=true`, { headers: admin })).text(),
    error: errorBody,
  };
  const leaks = Object.entries(sinks).flatMap(([sink, text]) => NEEDLES.filter((needle) => text.includes(needle)).map((needle) => `${needle} in ${sink}`));
  t.deepEqual(leaks, []);
  // The searches were real: the bodies are stored, the request as the model got it.
  const first = details.find((detail) => detail.trace_id === traces[0])!;
  t.true(String(first.request_body).includes('Mail <EMAIL_1> or call <PHONE_1>.'), String(first.request_body));
  // The answer the client got had the values back; the log stores it with them masked.
  t.true(String(first.response_body).includes(`Write to [FLAGGED] or [FLAGGED]`), String(first.response_body));
  t.like(first.guardrails?.[0] ?? {}, { guardrail: 'pii', action: 'transform', changes: { email: 1, phone: 1 } });
});

test.serial('the response cache stores placeholders and a hit is restored with the asking request\'s own values, plain and streamed', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mask-cache-'));
  const cached = await startGateway(
    { providers: [openai()], policies: { masked: { input: [pii({ action: 'mask' })] } }, defaultPolicy: 'masked', cache: { default: { mode: 'simple', max_age: 600 } } },
    { GATEWAY_DATA_DIR: dataDir },
  );
  let open = true;
  t.teardown(() => (open ? cached.close() : undefined));
  const client = sdkClient(cached.url, fake.baseUrl);
  const from = model.seen.length;
  model.script = { pieces: ['Sent to <EMAIL_1>.'] };
  const ask = (mail: string) => client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `Mail ${mail} please.` }] }).withResponse();
  const first = await ask(EMAIL);
  t.is(first.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(first.data.choices[0].message.content, `Sent to ${EMAIL}.`);
  // Another user's address masks to the same request: the stored answer is served, with their value.
  const second = await ask('bo@example.org');
  t.is(second.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(second.data.choices[0].message.content, 'Sent to bo@example.org.');
  let streamed = '';
  for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `Mail ${EMAIL} please.` }], stream: true })) {
    streamed += chunk.choices[0]?.delta.content ?? '';
  }
  t.is(streamed, `Sent to ${EMAIL}.`);
  t.is(model.seen.length - from, 1, 'the second request and the stream were answered from the cache');
  // Closed, the gateway has written what its cache holds.
  await cached.close();
  open = false;
  const files = readdirSync(dataDir).filter((name) => name.startsWith('cache'));
  t.true(files.length > 0);
  const stored = files.map((name) => readFileSync(join(dataDir, name)).toString('latin1')).join('\n');
  t.true(stored.includes('Sent to <EMAIL_1>.'), 'the answer is stored as the model wrote it');
  t.false(NEEDLES.some((needle) => stored.includes(needle)) || stored.includes('bo@example.org'));
});
