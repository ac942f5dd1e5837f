import test from 'ava';
import OpenAI from 'openai';
import { pii } from '../../plugins/guardrails/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { answering } from './helpers.js';

// A policy attached to a virtual key (guardrail_policy), as README shows: denial and redaction through the SDK.
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(answering('Reach me at jane.doe@example.com any time.'));
  gateway = await startGateway({
    policies: {
      'pii-block': { input: [pii({ action: 'deny' })], output: [pii({ action: 'deny' })] },
      'pii-redact': { input: [pii({ action: 'redact' })], output: [pii({ action: 'redact' })] },
    },
  });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const keyClient = (key: string) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': key } });
const card = 'My card is 4111 1111 1111 1111, please remember it.';

test.serial('a key with pii-block: input with a card number is 400 guardrail_denied and never reaches the provider', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'blocked', provider: 'openai', provider_key: 'sk-policy-secret-0123456789', custom_host: fake.baseUrl, guardrail_policy: 'pii-block' });
  const before = fake.requests.length;
  const error = await t.throwsAsync(keyClient(key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: card }] }), {
    instanceOf: OpenAI.BadRequestError,
  });
  t.is(error?.code, 'guardrail_denied');
  t.is(error?.type, 'invalid_request_error');
  t.is(fake.requests.length, before);
  const answer = await keyClient(key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'How do I reach you?' }] });
  t.is(answer.choices[0].finish_reason, 'content_filter', 'the answer carries an email: cut');
  t.is(answer.choices[0].message.content, null);
});

test.serial('a key with pii-redact: the provider sees the card redacted, the client sees the email redacted', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'redacted', provider: 'openai', provider_key: 'sk-policy-secret-0123456789', custom_host: fake.baseUrl, guardrail_policy: 'pii-redact' });
  const answer = await keyClient(key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: card }] });
  const sent = fake.requests.at(-1)!.json();
  t.false(JSON.stringify(sent).includes('4111 1111 1111 1111'));
  t.regex(sent.messages[0].content, /My card is \S+, please remember it\./);
  t.false(answer.choices[0].message.content?.includes('jane.doe@example.com'));
  t.regex(answer.choices[0].message.content ?? '', /^Reach me at \S+ any time\.$/);
});

test.serial('a key naming an unknown policy is refused at creation with 400 param guardrail_policy', async (t) => {
  const created = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'nope', provider: 'openai', provider_key: 'sk-x-0123456789abcdef', guardrail_policy: 'no-such-policy' });
  t.is(created.status, 400);
  t.is(created.json.error.param, 'guardrail_policy');
});
