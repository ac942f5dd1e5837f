import test from 'ava';
import config from '../../gateway.config.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { startMessagesFake } from '../fakes/messages-fake.js';
import { startRenderedFake } from '../fakes/rendered-fake.js';
import { loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { anthropicClient, postMessages } from './helpers.js';

/**
 * Guardrails on the Messages API: input judged before anything goes upstream; output judged on the
 * answer the client gets, plain and streamed, on the translated path (OpenAI) and the native one
 * (Anthropic). A denial is a refusal in the protocol's own shape.
 */

const CARD = '4111 1111 1111 1111';
const usage = { promptTokens: 10, completionTokens: 20 };

let blocking: TestGateway;
let redacting: TestGateway;
test.before(async () => {
  const providers = [openai(), anthropic()];
  blocking = await startGateway({ providers, policies: { tested: config.policies!['pii-block'] }, defaultPolicy: 'tested' });
  redacting = await startGateway({ providers, policies: { tested: config.policies!['pii-redact'] }, defaultPolicy: 'tested' });
});
test.after.always(async () => {
  await blocking.close();
  await redacting.close();
});

const translated = async () => {
  const fake = await startRenderedFake(openaiFake);
  return { fake, headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl } };
};
const native = async () => {
  const fake = await startMessagesFake('sse');
  return { fake, headers: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl } };
};

test('input: a denied request is refused with the Messages error shape before anything goes upstream (plain and streamed)', async (t) => {
  const { fake, headers } = await translated();
  t.teardown(() => fake.close());
  const id = traceId('messages-input-deny');
  for (const stream of [false, true]) {
    const response = await postMessages(
      blocking.url,
      { model: 'gpt-4o', max_tokens: 16, stream, system: 'Be kind.', messages: [{ role: 'user', content: [{ type: 'text', text: `My card is ${CARD}` }] }] },
      { ...headers, 'x-gateway-trace-id': `${id}-${stream}` },
    );
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { type: 'error', error: { type: 'invalid_request_error', message: "The request was refused by the gateway's content policy." } });
  }
  t.is(fake.requests.length, 0);
  const entry = await loggedOnce(blocking, `${id}-false`);
  t.like(entry, { operation: 'messages', status: 400, error: { code: 'guardrail_denied' } });
});

test('input: PII in a tool result is judged too', async (t) => {
  const { fake, headers } = await native();
  t.teardown(() => fake.close());
  const response = await postMessages(
    blocking.url,
    {
      model: 'claude-opus-4-7',
      max_tokens: 16,
      messages: [
        { role: 'user', content: 'Look it up' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: `card ${CARD}` }] }] },
      ],
    },
    headers,
  );
  t.is(response.status, 400);
  t.is(fake.requests.length, 0);
});

test('input: a redacting policy rewrites the Messages request before it goes up natively', async (t) => {
  const { fake, headers } = await native();
  t.teardown(() => fake.close());
  fake.answer({ content: [{ type: 'text', text: 'Noted.' }] });
  const response = await postMessages(redacting.url, { model: 'claude-opus-4-7', max_tokens: 16, system: [{ type: 'text', text: 'Mail a.lopez@example.com' }], messages: [{ role: 'user', content: `card ${CARD}` }] }, headers);
  t.is(response.status, 200);
  const sent = fake.body(0);
  t.false(JSON.stringify(sent).includes('4111'));
  t.false(JSON.stringify(sent).includes('a.lopez@example.com'));
  t.is(sent.max_tokens, 16);
});

test('output, translated, plain: a denied answer is a refusal with no content', async (t) => {
  const { fake, headers } = await translated();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: `Sure, the card is ${CARD}.`, finishReason: 'stop', usage });
  const id = traceId('messages-output-deny');
  const message = await anthropicClient(blocking.url, headers).messages.create(
    { model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: 'Tell me' }] },
    { headers: { 'x-gateway-trace-id': id } },
  );
  t.is(message.stop_reason, 'refusal');
  t.deepEqual(message.content, []);
  const entry = await loggedOnce(blocking, id);
  t.like(
    entry.guardrails.find((verdict) => verdict.side === 'output'),
    { guardrail: 'pii', action: 'deny' },
  );
});

test('output, translated, streamed: the stream ends with stop_reason refusal before the card leaves, and keeps the grammar', async (t) => {
  const { fake, headers } = await translated();
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: `Here it is. The number is ${CARD} as asked.`, finishReason: 'stop', usage });
  const response = await postMessages(blocking.url, { model: 'gpt-4o', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Tell me' }] }, headers);
  const raw = await response.text();
  t.false(raw.includes('4111'));
  const checked = checkMessagesStream(raw);
  t.is(checked.message.stop_reason, 'refusal');
  t.is(checked.error, undefined);

  const stream = anthropicClient(blocking.url, headers).messages.stream({ model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: 'Tell me' }] });
  const final = await stream.finalMessage();
  t.is(final.stop_reason, 'refusal');
  t.false(JSON.stringify(final).includes('4111'));
});

test('output, native, plain and streamed: a denied Anthropic answer is a refusal in the protocol shape', async (t) => {
  const { fake, headers } = await native();
  t.teardown(() => fake.close());
  fake.answer({ content: [{ type: 'text', text: 'Fine. First sentence is safe. ' }, { type: 'text', text: `The card: ${CARD} is here.` }] });
  const message = await anthropicClient(blocking.url, headers).messages.create({ model: 'claude-opus-4-7', max_tokens: 64, messages: [{ role: 'user', content: 'Tell me' }] });
  t.is(message.stop_reason, 'refusal');
  t.deepEqual(message.content, []);

  const response = await postMessages(blocking.url, { model: 'claude-opus-4-7', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Tell me' }] }, headers);
  const raw = await response.text();
  t.false(raw.includes('4111'));
  const checked = checkMessagesStream(raw);
  t.is(checked.message.stop_reason, 'refusal');
  t.is(checked.message.content[0].text, 'Fine. First sentence is safe. ', 'text judged clean was sent');
});

test('output, native, streamed: a redacting policy rewrites text split across deltas, and the deltas still add up', async (t) => {
  const { fake, headers } = await native();
  t.teardown(() => fake.close());
  fake.answer({ content: [{ type: 'thinking', thinking: 'Let me answer.', signature: 'sig' }, { type: 'text', text: `Write to a.lopez@example.com or pay with ${CARD}. Thanks` }] });
  const stream = anthropicClient(redacting.url, headers).messages.stream({ model: 'claude-opus-4-7', max_tokens: 64, messages: [{ role: 'user', content: 'Contact?' }] });
  const final = await stream.finalMessage();
  const text = (final.content[1] as { text: string }).text;
  t.false(text.includes('a.lopez@example.com'));
  t.false(text.includes('4111'));
  t.true(text.endsWith('Thanks'));
  t.is(final.stop_reason, 'end_turn');

  const response = await postMessages(redacting.url, { model: 'claude-opus-4-7', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Contact?' }] }, headers);
  const checked = checkMessagesStream(await response.text());
  t.is(checked.message.content[1].text, text);
  t.deepEqual(checked.message.content[0], { type: 'thinking', thinking: 'Let me answer.', signature: 'sig' });
});
