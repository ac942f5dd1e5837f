import test from 'ava';
import { pii } from '../../plugins/guardrails/index.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { type MessagesFake, startMessagesFake } from '../fakes/messages-fake.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { gatewayHeaders, startGateway, type TestGateway } from '../harness.js';
import { anthropicClient, postMessages } from '../messages/helpers.js';
import { sseData } from './mask-fake.js';

/**
 * Masking on the providers that speak the protocols natively (OpenAI's Responses API, Anthropic's
 * Messages API): the provider's own events are relayed, their text parts and blocks restored as
 * they flow, function-call arguments and tool input restored per item or block, and the events
 * that repeat a whole text or item (`done`, `output_item.done`, `response.completed`) restored whole.
 * The fakes split deltas at fixed widths; shifting the answer by 0 to 11 characters moves every
 * placeholder across every split position.
 */

const EMAIL = 'ana.lopez@example.com';
const PHONE = '+44 20 7946 0958';
const PROMPT = `Mail ${EMAIL} or call ${PHONE}.`;
const NEEDLES = [EMAIL, PHONE];
const ANSWER = 'Noted: <EMAIL_1> and <PHONE_1>; <EMAIL_7> is not yours <';
const RESTORED = `Noted: ${EMAIL} and ${PHONE}; <EMAIL_7> is not yours <`;
const ARGUMENTS = { to: '<EMAIL_1>', note: 'call <PHONE_1>, not <EMAIL_7>' };
const RESTORED_ARGUMENTS = { to: EMAIL, note: `call ${PHONE}, not <EMAIL_7>` };
const SHIFTS = Array.from({ length: 12 }, (_, shift) => shift);

let responsesFake: ResponsesFake;
let messagesFake: MessagesFake;
let gateway: TestGateway;
test.before(async () => {
  responsesFake = await startResponsesFake();
  messagesFake = await startMessagesFake('sse');
  gateway = await startGateway({ providers: [openai(), anthropic()], policies: { masked: { input: [pii({ action: 'mask' })] } }, defaultPolicy: 'masked' });
});
test.after.always(async () => {
  await gateway?.close();
  await responsesFake?.close();
  await messagesFake?.close();
});

const sentMasked = (bodies: readonly string[]) => bodies.length > 0 && bodies.every((body) => body.includes('<EMAIL_1>') && !NEEDLES.some((needle) => body.includes(needle)));

async function postResponses(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: gatewayHeaders(responsesFake.baseUrl, { 'content-type': 'application/json', 'x-gateway-provider': 'openai' }),
    body: JSON.stringify({ model: 'gpt-5-mini', input: PROMPT, ...body }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`answered ${response.status}: ${text}`);
  return text;
}

test.serial('native Responses: streamed text restored at every split position (deltas, done, completed); plain too', async (t) => {
  for (const shift of SHIFTS) {
    const pad = '~'.repeat(shift);
    responsesFake.answer({ kind: 'text', text: pad + ANSWER });
    const events = sseData(await postResponses({ stream: true }));
    const deltas = events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('');
    t.is(deltas, pad + RESTORED, `shift ${shift}`);
    t.is(events.find((event) => event.type === 'response.output_text.done')?.text, pad + RESTORED);
    t.is(events.find((event) => event.type === 'response.output_item.done')?.item.content[0].text, pad + RESTORED);
    t.is(events.find((event) => event.type === 'response.completed')?.response.output[0].content[0].text, pad + RESTORED);
  }
  responsesFake.answer({ kind: 'text', text: ANSWER });
  t.is(JSON.parse(await postResponses({})).output[0].content[0].text, RESTORED);
  t.true(sentMasked(responsesFake.requests.map((request) => request.body.toString())));
});

test.serial('native Responses: function-call arguments restored at every split position, streamed and plain', async (t) => {
  for (const shift of SHIFTS) {
    const args = ' '.repeat(shift) + JSON.stringify(ARGUMENTS);
    responsesFake.answer({ kind: 'call', name: 'send_mail', arguments: args, callId: 'call_1' });
    const events = sseData(await postResponses({ stream: true }));
    const deltas = events.filter((event) => event.type === 'response.function_call_arguments.delta').map((event) => event.delta).join('');
    t.deepEqual(JSON.parse(deltas), RESTORED_ARGUMENTS, `shift ${shift}`);
    t.deepEqual(JSON.parse(events.find((event) => event.type === 'response.function_call_arguments.done')!.arguments), RESTORED_ARGUMENTS);
    t.deepEqual(JSON.parse(events.find((event) => event.type === 'response.output_item.done')!.item.arguments), RESTORED_ARGUMENTS);
    t.deepEqual(JSON.parse(events.find((event) => event.type === 'response.completed')!.response.output[0].arguments), RESTORED_ARGUMENTS);
  }
  responsesFake.answer({ kind: 'call', name: 'send_mail', arguments: JSON.stringify(ARGUMENTS), callId: 'call_1' });
  t.deepEqual(JSON.parse(JSON.parse(await postResponses({})).output[0].arguments), RESTORED_ARGUMENTS);
});

const messagesHeaders = () => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': messagesFake.baseUrl });

test.serial('native Messages: a text block and a tool_use block restored at every split position, streamed (valid events) and plain', async (t) => {
  const tools = [{ name: 'send_mail', input_schema: { type: 'object' as const } }];
  for (const shift of [...SHIFTS, 20, 31, 45]) {
    const pad = '~'.repeat(shift);
    messagesFake.answer({ content: [{ type: 'text', text: pad + ANSWER }, { type: 'tool_use', id: 'toolu_1', name: 'send_mail', input: { pad, ...ARGUMENTS } }], stopReason: 'tool_use' });
    const response = await postMessages(gateway.url, { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, tools, messages: [{ role: 'user', content: PROMPT }] }, messagesHeaders());
    const raw = await response.text();
    checkMessagesStream(raw);
    const deltas = sseData(raw).filter((event) => event.type === 'content_block_delta');
    t.is(deltas.filter((event) => event.index === 0).map((event) => event.delta.text).join(''), pad + RESTORED, `shift ${shift}`);
    t.deepEqual(JSON.parse(deltas.filter((event) => event.index === 1).map((event) => event.delta.partial_json).join('')), { pad, ...RESTORED_ARGUMENTS });
  }
  messagesFake.answer({ content: [{ type: 'text', text: ANSWER }, { type: 'tool_use', id: 'toolu_1', name: 'send_mail', input: ARGUMENTS }], stopReason: 'tool_use' });
  const message = await anthropicClient(gateway.url, messagesHeaders()).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, tools, messages: [{ role: 'user', content: PROMPT }] });
  t.deepEqual(message.content.map((block) => (block.type === 'text' ? block.text : block.type === 'tool_use' ? block.input : undefined)), [RESTORED, RESTORED_ARGUMENTS]);
  t.true(sentMasked(messagesFake.requests.map((request) => request.body.toString())));
});
