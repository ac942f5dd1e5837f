import test from 'ava';
import type { ServerResponse } from 'node:http';
import { pii } from '../../plugins/guardrails/index.js';
import { gemini } from '../../plugins/providers/gemini/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { genaiClient, streamChecked } from '../gemini/helpers.js';
import { startGateway, type TestGateway } from '../harness.js';
import { maskModel, type MaskModel, randomSplit, seeded } from './mask-fake.js';

/**
 * Issue 37 on the Gemini API: `generateContent` and `streamGenerateContent` mask the request's texts
 * for the model and put the values back in the answer's text parts and function-call args, natively
 * (the provider speaks the Gemini API: its pieces are relayed, their text restored as it flows, a
 * placeholder split across pieces restored whole) and translated to chat. Driven by the official
 * `@google/genai` SDK and by raw streams checked against Google's framing.
 */

const EMAIL = 'ana.lopez@example.com';
const PHONE = '+44 20 7946 0958';
const PROMPT = `Mail ${EMAIL} or call ${PHONE}.`;
const ANSWER = 'Noted: <EMAIL_1> and <PHONE_1>; <EMAIL_7> is not yours <';
const RESTORED = `Noted: ${EMAIL} and ${PHONE}; <EMAIL_7> is not yours <`;
const ARGS = { to: '<EMAIL_1>', note: 'call <PHONE_1>, not <EMAIL_7>' };
const RESTORED_ARGS = { to: EMAIL, note: `call ${PHONE}, not <EMAIL_7>` };

/** A fake Google endpoint whose answer is `pieces` (text pieces streamed one per event), then a function call. */
function googleModel(): { handler: (request: RecordedRequest, response: ServerResponse) => void; pieces: string[]; seen: string[] } {
  const model = {
    pieces: [ANSWER],
    seen: [] as string[],
    handler(request: RecordedRequest, response: ServerResponse) {
      model.seen.push(request.body.toString());
      const call = { functionCall: { name: 'send_mail', args: ARGS } };
      const candidate = (parts: unknown[], finishReason?: string) => ({ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) });
      if (request.url.includes(':generateContent')) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ candidates: [candidate([{ text: model.pieces.join('') }, call], 'STOP')], modelVersion: 'gemini-2.5-flash-001' }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of model.pieces) response.write(`data: ${JSON.stringify({ candidates: [candidate([{ text: piece }])] })}\r\n\r\n`);
      response.write(`data: ${JSON.stringify({ candidates: [candidate([call], 'STOP')], modelVersion: 'gemini-2.5-flash-001' })}\r\n\r\n`);
      response.end();
    },
  };
  return model;
}

let google: ReturnType<typeof googleModel>;
let googleFake: Fake;
let chatModel: MaskModel;
let chatFake: Fake;
let gateway: TestGateway;
test.before(async () => {
  google = googleModel();
  googleFake = await startFake(google.handler);
  chatModel = maskModel();
  chatFake = await startFake(chatModel.handler);
  gateway = await startGateway({ providers: [gemini(), openai()], policies: { masked: { input: [pii({ action: 'mask' })] } }, defaultPolicy: 'masked' });
});
test.after.always(async () => {
  await gateway?.close();
  await googleFake?.close();
  await chatFake?.close();
});

const nativeHeaders = () => ({ 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': googleFake.baseUrl });
const translatedHeaders = () => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': chatFake.baseUrl });
const contents = [{ role: 'user', parts: [{ text: PROMPT }] }];
const leaked = (bodies: readonly string[]) => bodies.some((body) => body.includes(EMAIL) || body.includes(PHONE) || body.includes('ana.lopez'));

test.serial('native generateContent through the SDK: text parts and function-call args restored; the model saw placeholders only', async (t) => {
  google.pieces = [ANSWER];
  const answer = await genaiClient(gateway.url, nativeHeaders()).models.generateContent({ model: 'gemini-2.5-flash', contents: PROMPT });
  const parts = answer.candidates?.[0]?.content?.parts ?? [];
  t.is(parts[0].text, RESTORED);
  t.deepEqual(parts[1].functionCall?.args, RESTORED_ARGS);
  t.is(answer.functionCalls?.[0]?.args?.to, EMAIL);
  t.true(google.seen.at(-1)!.includes('<EMAIL_1>') && google.seen.at(-1)!.includes('<PHONE_1>'));
  t.false(leaked(google.seen));
});

test.serial('native streamGenerateContent: 300 random splits restored exactly, in both framings and through the SDK', async (t) => {
  const next = seeded(3737);
  const wrong: string[] = [];
  for (let round = 0; round < 300; round++) {
    google.pieces = randomSplit(ANSWER, next, 16);
    const framing = round % 2 === 0 ? 'sse' : 'array';
    const checked = await streamChecked(gateway.url, 'gemini-2.5-flash', { contents }, nativeHeaders(), framing);
    const candidate = checked.candidates.get(0)!;
    if (candidate.text !== RESTORED || JSON.stringify(candidate.functionCalls[0]?.args) !== JSON.stringify(RESTORED_ARGS) || candidate.finishReason !== 'STOP') {
      wrong.push(JSON.stringify({ pieces: google.pieces, got: candidate }));
    }
  }
  t.deepEqual(wrong, []);
  google.pieces = ['Noted: <EMA', 'IL_1> and <', 'PHONE_1>; <EMAIL_7> is not yours <'];
  let text = '';
  let args: unknown;
  for await (const chunk of await genaiClient(gateway.url, nativeHeaders()).models.generateContentStream({ model: 'gemini-2.5-flash', contents: PROMPT })) {
    for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
      text += part.text ?? '';
      if (part.functionCall) args = part.functionCall.args;
    }
  }
  t.is(text, RESTORED);
  t.deepEqual(args, RESTORED_ARGS);
  t.false(leaked(google.seen));
});

test.serial('translated to chat: generateContent and its stream restored (text and function-call args) at random splits', async (t) => {
  chatModel.script = { pieces: [ANSWER] };
  const answer = await genaiClient(gateway.url, translatedHeaders()).models.generateContent({ model: 'gpt-4o', contents: PROMPT });
  t.is(answer.text, RESTORED);
  const next = seeded(37);
  for (let round = 0; round < 100; round++) {
    chatModel.script = { pieces: randomSplit(ANSWER, next, 12) };
    const checked = await streamChecked(gateway.url, 'gpt-4o', { contents }, translatedHeaders(), round % 2 === 0 ? 'sse' : 'array');
    t.is(checked.candidates.get(0)?.text, RESTORED, JSON.stringify(chatModel.script.pieces));
  }
  chatModel.script = { pieces: randomSplit(JSON.stringify(ARGS), next, 12), tool: 'send_mail' };
  const tools = [{ functionDeclarations: [{ name: 'send_mail', parametersJsonSchema: { type: 'object' } }] }];
  const checked = await streamChecked(gateway.url, 'gpt-4o', { contents, tools }, translatedHeaders(), 'sse');
  t.deepEqual(checked.candidates.get(0)?.functionCalls[0]?.args, RESTORED_ARGS);
  t.false(leaked(chatModel.seen));
  t.true(chatModel.seen.every((body) => body.includes('<EMAIL_1>')));
});
