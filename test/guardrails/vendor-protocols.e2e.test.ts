import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import OpenAI from 'openai';
import { lakeraGuard } from '../../plugins/guardrails/lakera-guard/index.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { collectResponsesStream } from '../fakes/responses-grammar.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { postMessages } from '../messages/helpers.js';
import { startVendorFake, TRIGGER, type VendorFake } from './vendor-contract.js';

// A vendor guardrail on the other protocols the gateway serves: the Messages API and the Responses
// API, input refused in the protocol's shape before anything goes upstream, streamed answers cut
// by the vendor's output verdict. Lakera Guard's fake stands for any vendor.

const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/lakera-guard/__fixtures__', name), 'utf8'));
const KEY = 'lakera-protocols-key-0123456789';

let vendor: VendorFake;
let chat: RenderedFake;
let responses: ResponsesFake;
let gateway: TestGateway;

test.before(async () => {
  vendor = await startVendorFake({
    check: (request) => (request.headers.authorization === `Bearer ${KEY}` && request.url === '/v2/guard' ? [] : ['authorization or path']),
    texts: (request) => request.json().messages.map((message: { content: string }) => message.content),
    answer: (_request, unsafe) => ({ body: fixture(unsafe.some(Boolean) ? 'guard-flagged.json' : 'guard-clean.json') }),
    error: { status: 500, body: fixture('error.json') },
  });
  chat = await startRenderedFake(openaiFake);
  responses = await startResponsesFake();
  const guard = lakeraGuard({ baseUrl: vendor.origin, apiKey: KEY });
  gateway = await startGateway({ providers: [openai(), anthropic()], policies: { vendor: { input: [guard], output: [guard] } }, defaultPolicy: 'vendor' });
});
test.after.always(async () => {
  await Promise.all([gateway?.close(), vendor?.close(), chat?.close(), responses?.close()]);
});

const messagesHeaders = () => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': chat.baseUrl });

test.serial('Messages API: a prompt the vendor flags is refused in the Messages error shape; nothing goes upstream', async (t) => {
  const before = chat.requests.length;
  const response = await postMessages(gateway.url, { model: 'gpt-4o', max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: `do ${TRIGGER}` }] }] }, messagesHeaders());
  t.is(response.status, 400);
  t.deepEqual(await response.json(), { type: 'error', error: { type: 'invalid_request_error', message: "The request was refused by the gateway's content policy." } });
  t.is(chat.requests.length, before);
  t.deepEqual(vendor.problems, []);
});

test.serial('Messages API, streamed: the vendor\'s output verdict ends the stream with stop_reason refusal, the flagged sentence never sent', async (t) => {
  chat.answer({ kind: 'text', text: `All good so far. Then a ${TRIGGER} sentence. The end.`, finishReason: 'stop', usage: { promptTokens: 5, completionTokens: 9 } });
  const response = await postMessages(gateway.url, { model: 'gpt-4o', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Tell me' }] }, messagesHeaders());
  const raw = await response.text();
  t.false(raw.includes(TRIGGER));
  const checked = checkMessagesStream(raw);
  t.is(checked.message.stop_reason, 'refusal');
  t.is(checked.error, undefined);
  t.deepEqual(vendor.problems, []);
});

const responsesClient = () =>
  new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': responses.baseUrl },
  });

test.serial('Responses API: a flagged input is 400 guardrail_denied; a streamed answer the vendor flags ends with response.incomplete (content_filter)', async (t) => {
  const before = responses.requests.length;
  const error = await t.throwsAsync(responsesClient().responses.create({ model: 'gpt-5-mini', input: `please ${TRIGGER}` }), { instanceOf: OpenAI.BadRequestError });
  t.is((error as InstanceType<typeof OpenAI.BadRequestError>).code, 'guardrail_denied');
  t.is(responses.requests.length, before);

  responses.answer({ kind: 'text', text: `Sure. The first part is fine.\nThe second part says ${TRIGGER} here.\nMore text after that.` });
  const stream = await responsesClient().responses.create({ model: 'gpt-5-mini', input: 'Talk', stream: true });
  const result = await collectResponsesStream(stream);
  t.deepEqual(result.problems, []);
  t.is(result.terminal, 'response.incomplete');
  t.deepEqual(result.response?.incomplete_details, { reason: 'content_filter' });
  t.false([...result.texts.values()].join('').includes(TRIGGER));
  t.deepEqual(vendor.problems, []);
});
