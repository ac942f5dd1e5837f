import test from 'ava';
import config from '../../gateway.config.js';
import { openAIHandler } from '../fakes/openai-fake.js';
import { assertDenied, policyGateway } from './helpers.js';

// Input guardrails judge the text of every operation that has one, not only chat and completions.
const CARD = '4111 1111 1111 1111';
const EMAIL = 'jane.doe@example.com';

test('pii-block refuses an embedding input, a speech input and an image prompt carrying PII; nothing is sent', async (t) => {
  const setup = await policyGateway(config.policies!['pii-block'], openAIHandler);
  t.teardown(() => setup.close());
  await assertDenied(t, setup.client.embeddings.create({ model: 'text-embedding-3-small', input: ['fine', `card ${CARD}`] }));
  await assertDenied(t, setup.client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: `Write to ${EMAIL}` }));
  await assertDenied(t, setup.client.images.generate({ prompt: `A poster showing ${CARD}` }));
  t.is(setup.fake.requests.length, 0);
  const allowed = await setup.client.embeddings.create({ model: 'text-embedding-3-small', input: ['nothing personal here'], encoding_format: 'float' });
  t.is(allowed.data.length, 1);
});

test('pii-redact rewrites an embedding input (array kept an array) and an image prompt before they leave', async (t) => {
  const setup = await policyGateway(config.policies!['pii-redact'], openAIHandler);
  t.teardown(() => setup.close());
  await setup.client.embeddings.create({ model: 'text-embedding-3-small', input: ['plain', `mail ${EMAIL} now`], encoding_format: 'float' });
  const embedded = setup.fake.requests.at(-1)!.json();
  t.is(embedded.input.length, 2);
  t.is(embedded.input[0], 'plain');
  t.false(embedded.input[1].includes(EMAIL));
  t.regex(embedded.input[1], /^mail \S+ now$/);
  await setup.client.images.generate({ prompt: `A poster showing ${CARD}` });
  const image = setup.fake.requests.at(-1)!.json();
  t.false(image.prompt.includes('4111'));
  const tokens = await setup.client.embeddings.create({ model: 'text-embedding-3-small', input: [1, 2, 3], encoding_format: 'float' });
  t.is(tokens.data.length, 1, 'token ids have no text to judge and pass unchanged');
  t.deepEqual(setup.fake.requests.at(-1)!.json().input, [1, 2, 3]);
});
