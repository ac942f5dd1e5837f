import test from 'ava';
import OpenAI from 'openai';
import { pii } from '../../plugins/guardrails/index.js';
import { groq } from '../../plugins/providers/groq/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { genaiClient } from '../gemini/helpers.js';
import { ACCOUNT_KEY, PROVIDER_KEY, sdkClient, startGateway, type TestGateway } from '../harness.js';
import { anthropicClient } from '../messages/helpers.js';
import { maskModel, type MaskModel } from './mask-fake.js';

/**
 * Issue 37, the gap closed: the client gets its values back in restored tool-call arguments and sends
 * that call back in the conversation's history. The history's tool-call arguments are masked on the
 * way in too, with the same placeholders as the rest of the request, so the model never sees the
 * value and sees one placeholder per value: chat `tool_calls`, Responses `function_call` items,
 * Messages `tool_use` input and Gemini `functionCall` args, each through its official SDK.
 */

const EMAIL = 'ana.lopez@example.com';
const PHONE = '+44 20 7946 0958';
const RESTORED_ARGS = JSON.stringify({ to: EMAIL, note: `call ${PHONE}` });
const MASKED_ARGS = { to: '<EMAIL_1>', note: 'call <PHONE_1>' };

let model: MaskModel;
let fake: Fake;
let gateway: TestGateway;
test.before(async () => {
  model = maskModel();
  fake = await startFake(model.handler);
  gateway = await startGateway({ providers: [openai(), groq()], policies: { masked: { input: [pii({ action: 'mask' })] } }, defaultPolicy: 'masked' });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const headers = () => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl });

/** The last request the model got: no value anywhere, and the history's call carries the same placeholders as the user's text. */
function assertSeen(t: import('ava').ExecutionContext): void {
  const body = model.seen.at(-1)!;
  t.false(body.includes(EMAIL) || body.includes('ana.lopez') || body.includes('7946 0958'), 'a value reached the model');
  const sent = JSON.parse(body) as { messages: Array<{ role: string; content: unknown; tool_calls?: Array<{ function: { arguments: string } }> }> };
  const call = sent.messages.find((message) => message.tool_calls)?.tool_calls?.[0];
  t.deepEqual(JSON.parse(call!.function.arguments), MASKED_ARGS);
  t.true(JSON.stringify(sent.messages.at(-1)!.content).includes('<EMAIL_1>'));
}

test.serial('chat: an assistant tool call sent back is masked with the request placeholders', async (t) => {
  model.script = { pieces: ['Sent to <EMAIL_1>.'] };
  const answer = await sdkClient(gateway.url, fake.baseUrl).chat.completions.create({
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'Send the note.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'send_mail', arguments: RESTORED_ARGS } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sent' },
      { role: 'user', content: `Did it reach ${EMAIL}?` },
    ],
  });
  t.is(answer.choices[0].message.content, `Sent to ${EMAIL}.`);
  assertSeen(t);
});

test.serial('Responses (translated to chat): a function_call item sent back is masked', async (t) => {
  model.script = { pieces: ['Sent to <EMAIL_1>.'] };
  const client = new OpenAI({ apiKey: PROVIDER_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, ...headers(), 'x-gateway-provider': 'groq' } });
  const response = await client.responses.create({
    model: 'gpt-4o',
    store: false,
    input: [
      { role: 'user', content: 'Send the note.' },
      { type: 'function_call', call_id: 'call_1', name: 'send_mail', arguments: RESTORED_ARGS },
      { type: 'function_call_output', call_id: 'call_1', output: 'sent' },
      { role: 'user', content: `Did it reach ${EMAIL}?` },
    ],
  });
  t.is(response.output_text, `Sent to ${EMAIL}.`);
  assertSeen(t);
});

test.serial('Messages: a tool_use block sent back is masked', async (t) => {
  model.script = { pieces: ['Sent to <EMAIL_1>.'] };
  const message = await anthropicClient(gateway.url, headers()).messages.create({
    model: 'gpt-4o',
    max_tokens: 64,
    messages: [
      { role: 'user', content: 'Send the note.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'send_mail', input: JSON.parse(RESTORED_ARGS) }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sent' }, { type: 'text', text: `Did it reach ${EMAIL}?` }] },
    ],
  });
  t.deepEqual(message.content.map((block) => (block.type === 'text' ? block.text : '')), [`Sent to ${EMAIL}.`]);
  assertSeen(t);
});

test.serial('Gemini: a functionCall part sent back is masked', async (t) => {
  model.script = { pieces: ['Sent to <EMAIL_1>.'] };
  const answer = await genaiClient(gateway.url, headers()).models.generateContent({
    model: 'gpt-4o',
    contents: [
      { role: 'user', parts: [{ text: 'Send the note.' }] },
      { role: 'model', parts: [{ functionCall: { id: 'call_1', name: 'send_mail', args: JSON.parse(RESTORED_ARGS) } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: 'send_mail', response: { result: 'sent' } } }, { text: `Did it reach ${EMAIL}?` }] },
    ],
  });
  t.is(answer.text, `Sent to ${EMAIL}.`);
  assertSeen(t);
});
