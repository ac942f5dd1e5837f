import test from 'ava';
import OpenAI from 'openai';
import config from '../../gateway.config.js';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { collectResponsesStream } from '../fakes/responses-grammar.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';

/**
 * Guardrails judge the Responses API like chat: input texts (instructions, input messages, tool
 * outputs) before anything is sent; answers plain and streamed, translated and native. A denial
 * of a stream ends it the protocol's way: `response.incomplete` with reason `content_filter`.
 */

const CARD = '4111 1111 1111 1111';
const EMAIL = 'jane.doe@example.com';
const usage = { promptTokens: 5, completionTokens: 3 };

let native: ResponsesFake;
let claude: RenderedFake;
let blocking: TestGateway;
let redacting: TestGateway;

test.before(async () => {
  native = await startResponsesFake();
  claude = await startRenderedFake(anthropicFakeRenderer);
  const policies = { 'pii-block': config.policies!['pii-block'], 'pii-redact': config.policies!['pii-redact'] };
  blocking = await startGateway({ providers: [openai(), anthropic()], policies, defaultPolicy: 'pii-block' });
  redacting = await startGateway({ providers: [openai(), anthropic()], policies, defaultPolicy: 'pii-redact' });
});
test.after.always(async () => {
  await Promise.all([blocking?.close(), redacting?.close(), native?.close(), claude?.close()]);
});

const providers = [
  { id: 'anthropic', model: 'claude-sonnet-4-5', host: () => claude.baseUrl, answer: (text: string) => claude.answer({ kind: 'text', text, finishReason: 'stop', usage }), sent: () => claude.requests.length, body: () => claude.body(claude.requests.length - 1) },
  { id: 'openai', model: 'gpt-5-mini', host: () => native.baseUrl, answer: (text: string) => native.answer({ kind: 'text', text }), sent: () => native.requests.length, body: () => native.bodies().at(-1)! },
];

const client = (gateway: TestGateway, provider: (typeof providers)[number]) =>
  new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': provider.id, 'x-gateway-custom-host': provider.host() },
  });

for (const provider of providers) {
  test.serial(`${provider.id}: input with a card number is 400 guardrail_denied and never sent (string input, items, tool output)`, async (t) => {
    const before = provider.sent();
    const inputs: OpenAI.Responses.ResponseCreateParams['input'][] = [
      `My card is ${CARD}`,
      [{ role: 'user', content: [{ type: 'input_text', text: `Card: ${CARD}` }] }],
      [{ type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: `found ${CARD}` }],
    ];
    for (const input of inputs) {
      const error = await t.throwsAsync(client(blocking, provider).responses.create({ model: provider.model, input }), { instanceOf: OpenAI.BadRequestError });
      t.is((error as InstanceType<typeof OpenAI.BadRequestError>).code, 'guardrail_denied');
    }
    const instructions = await t.throwsAsync(client(blocking, provider).responses.create({ model: provider.model, input: 'hi', instructions: `Card ${CARD}` }), { instanceOf: OpenAI.BadRequestError });
    t.is((instructions as InstanceType<typeof OpenAI.BadRequestError>).code, 'guardrail_denied');
    t.is(provider.sent(), before);
  });

  test.serial(`${provider.id}: a plain answer with PII is denied: incomplete, content_filter, the text withheld`, async (t) => {
    provider.answer(`Write to ${EMAIL} please.`);
    const trace = traceId('responses-output-deny');
    const response = await client(blocking, provider).responses.create({ model: provider.model, input: 'How do I reach you?' }, { headers: { 'x-gateway-trace-id': trace } });
    t.is(response.status, 'incomplete');
    t.deepEqual(response.incomplete_details, { reason: 'content_filter' });
    t.false(JSON.stringify(response).includes(EMAIL));
    const entry = (await blocking.waitForEntries(1)).find((candidate) => candidate.traceId === trace)!;
    t.like(entry.guardrails.find((verdict) => verdict.side === 'output'), { guardrail: 'pii', action: 'deny' });
  });

  test.serial(`${provider.id}: a streamed answer with PII ends with response.incomplete (content_filter), the PII never sent`, async (t) => {
    provider.answer(`Sure. The first part is fine.\nThe second part has ${EMAIL} in it.\nMore text after that.`);
    const stream = await client(blocking, provider).responses.create({ model: provider.model, input: 'Talk', stream: true });
    const result = await collectResponsesStream(stream);
    t.deepEqual(result.problems, []);
    t.is(result.terminal, 'response.incomplete');
    t.deepEqual(result.response?.incomplete_details, { reason: 'content_filter' });
    const streamed = [...result.texts.values()].join('');
    t.false(streamed.includes('jane.doe'));
    t.false(JSON.stringify(result.response).includes(EMAIL));
  });

  test.serial(`${provider.id}: pii-redact rewrites the input before it is sent and the answer as it streams`, async (t) => {
    provider.answer(`Reach me at ${EMAIL} any time.`);
    const plain = await client(redacting, provider).responses.create({ model: provider.model, input: [{ role: 'user', content: `My card is ${CARD}, remember it.` }] });
    t.false(JSON.stringify(provider.body()).includes(CARD));
    t.regex(plain.output_text, /^Reach me at \S+ any time\.$/);
    t.false(plain.output_text.includes(EMAIL));

    provider.answer(`Reach me at ${EMAIL} any time.`);
    const stream = await client(redacting, provider).responses.create({ model: provider.model, input: 'Contact?', stream: true });
    const result = await collectResponsesStream(stream);
    t.deepEqual(result.problems, []);
    t.is(result.terminal, 'response.completed');
    const streamed = [...result.texts.values()].join('');
    t.regex(streamed, /^Reach me at \S+ any time\.$/);
    t.false(streamed.includes(EMAIL));
    t.is(result.response?.output.find((item: { type: string }) => item.type === 'message')?.content[0].text, streamed);
  });
}
