import test from 'ava';
import { pii } from '../../plugins/guardrails/index.js';
import { groq } from '../../plugins/providers/groq/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { gatewayHeaders, startGateway, type TestGateway } from '../harness.js';
import { maskModel, type MaskModel, randomSplit, seeded, sseData } from './mask-fake.js';

/**
 * Issue 37, "PII masked, then restored": a streamed answer whose placeholders are split at 1,000
 * random places is restored exactly, on chat, the Responses API and the Messages API, through the
 * gateway to a loopback chat model (the two protocols translated to chat). The model only ever sees
 * placeholders; a placeholder it invents (`<EMAIL_7>`) and text that merely looks like the start
 * of one come back as written.
 */

const EMAIL = 'ana.lopez@example.com';
const PHONE = '+44 20 7946 0958';
const PROMPT = `My mail is ${EMAIL} and my phone ${PHONE}; write ${EMAIL} twice.`;
const ANSWER = 'Noted: <EMAIL_1> and <PHONE_1>. Again <EMAIL_1>! Not <EMAIL_7>, nor <EMAIL_ or a < b <';
const RESTORED = `Noted: ${EMAIL} and ${PHONE}. Again ${EMAIL}! Not <EMAIL_7>, nor <EMAIL_ or a < b <`;
const ROUNDS = 1000;

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

async function post(path: string, body: Record<string, unknown>, provider = 'openai'): Promise<string> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json', 'x-gateway-provider': provider }),
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text}`);
  return text;
}

/** What the model was sent: placeholders, never the values. */
function assertMasked(t: import('ava').ExecutionContext, from: number): void {
  const sent = model.seen.slice(from);
  t.is(sent.length, ROUNDS);
  t.false(sent.some((body) => body.includes(EMAIL) || body.includes(PHONE) || body.includes('ana.lopez')), 'a value reached the model');
  t.true(sent.every((body) => body.includes('<EMAIL_1>') && body.includes('<PHONE_1>')));
}

/** Runs the rounds, each with its own random split; returns the rounds whose restored text differs, with their pieces. */
async function rounds(seed: number, read: (pieces: string[]) => Promise<string>): Promise<string[]> {
  const next = seeded(seed);
  const wrong: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const pieces = randomSplit(ANSWER, next);
    model.script = { pieces };
    const text = await read(pieces);
    if (text !== RESTORED) wrong.push(`round ${round} ${JSON.stringify(pieces)} → ${JSON.stringify(text)}`);
  }
  return wrong;
}

test.serial('chat: 1,000 random splits of a streamed answer, every placeholder restored exactly', async (t) => {
  const from = model.seen.length;
  const wrong = await rounds(1, async () => {
    const raw = await post('/v1/chat/completions', { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: PROMPT }] });
    return sseData(raw)
      .flatMap((chunk) => chunk.choices.map((choice: { delta: { content?: string } }) => choice.delta.content ?? ''))
      .join('');
  });
  t.deepEqual(wrong.slice(0, 3), []);
  assertMasked(t, from);
});

test.serial('Responses API: 1,000 random splits of a streamed answer, the deltas and the completed response restored exactly', async (t) => {
  const from = model.seen.length;
  const wrong = await rounds(2, async () => {
    const events = sseData(await post('/v1/responses', { model: 'llama-3.1-8b-instant', stream: true, input: PROMPT }, 'groq'));
    const deltas = events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta as string).join('');
    const done = events.find((event) => event.type === 'response.output_text.done')?.text;
    const completed = events.find((event) => event.type === 'response.completed')?.response.output[0].content[0].text;
    return deltas === done && done === completed ? deltas : `deltas ${deltas} / done ${done} / completed ${completed}`;
  });
  t.deepEqual(wrong.slice(0, 3), []);
  assertMasked(t, from);
});

test.serial('Messages API: 1,000 random splits of a streamed answer, restored exactly, every stream valid', async (t) => {
  const from = model.seen.length;
  const wrong = await rounds(3, async () => {
    const raw = await post('/v1/messages', { model: 'gpt-4o', max_tokens: 64, stream: true, messages: [{ role: 'user', content: PROMPT }] });
    checkMessagesStream(raw);
    return sseData(raw)
      .filter((event) => event.type === 'content_block_delta' && event.delta.type === 'text_delta')
      .map((event) => event.delta.text as string)
      .join('');
  });
  t.deepEqual(wrong.slice(0, 3), []);
  assertMasked(t, from);
});
