import test from 'ava';
import { gemini } from '../../plugins/providers/gemini/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { bannedWords } from '../../plugins/guardrails/index.js';
import { startFake } from '../fakes/openai-fake.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { createKey } from '../vault/vault-harness.js';
import { genaiClient, postGemini, streamChecked } from './helpers.js';

/**
 * The Gemini API through the response cache: a plain answer hits a stream (both framings) and back,
 * native and translated; a stream is stored whole; an answer stopped for safety is never stored;
 * a hit is judged again by output guardrails.
 */

let gateway: TestGateway;
let translated: RenderedFake;
const usage = { promptTokens: 5, completionTokens: 3 };
const thought = { text: 'Plan the greeting.', thought: true };

test.before(async () => {
  translated = await startRenderedFake(openaiFake);
  gateway = await startGateway({ providers: [gemini(), openai()], cache: { default: { mode: 'simple', max_age: 600 } } });
});
test.after.always(async () => {
  await gateway?.close();
  await translated?.close();
});

/** A Gemini fake: the whole answer for generateContent, the same answer in three pieces for the stream. */
async function nativeFake() {
  return startFake((request, response) => {
    const model = { modelVersion: 'gemini-2.5-flash', responseId: 'r-1' };
    const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 };
    if (request.url.includes(':generateContent')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [thought, { text: 'Cached hello there.' }] }, finishReason: 'STOP', index: 0 }], usageMetadata, ...model }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const piece = (parts: unknown[], last = false) => `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }], ...(last ? { usageMetadata } : {}), ...model })}\r\n\r\n`;
    response.write(piece([thought]));
    response.write(piece([{ text: 'Cached hello ' }]));
    response.end(piece([{ text: 'there.' }], true));
  });
}

const body = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });

test.serial('native: a plain miss, then streamed hits in both framings that pass the grammar; the provider is asked once', async (t) => {
  const fake = await nativeFake();
  t.teardown(() => fake.close());
  const headers = { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl };
  const miss = await postGemini(gateway.url, '/v1beta/models/gemini-2.5-flash:generateContent', body('native plain first'), headers);
  t.is(miss.headers.get('x-gateway-cache'), 'MISS');
  const answer = (await miss.json()) as Record<string, any>;
  for (const framing of ['sse', 'array'] as const) {
    const hit = await streamChecked(gateway.url, 'gemini-2.5-flash', body('native plain first'), headers, framing);
    t.is(hit.response.headers.get('x-gateway-cache'), 'HIT');
    t.regex(hit.response.headers.get('content-type') ?? '', framing === 'sse' ? /^text\/event-stream/ : /^application\/json/);
    t.is(hit.candidates.get(0)?.text, 'Cached hello there.');
    t.deepEqual(hit.pieces[0].candidates, answer.candidates);
  }
  t.is(fake.requests.length, 1);
});

test.serial('native: a streamed miss is stored whole (thoughts and text joined), then a plain hit through the SDK', async (t) => {
  const fake = await nativeFake();
  t.teardown(() => fake.close());
  const headers = { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl };
  const streamed = await streamChecked(gateway.url, 'gemini-2.5-flash', body('native stream first'), headers, 'sse');
  t.is(streamed.response.headers.get('x-gateway-cache'), 'MISS');
  const hit = await genaiClient(gateway.url, headers).models.generateContent({ model: 'gemini-2.5-flash', contents: 'native stream first' });
  t.is(hit.text, 'Cached hello there.');
  t.deepEqual(hit.candidates?.[0].content?.parts, [thought, { text: 'Cached hello there.' }]);
  t.like(hit.usageMetadata, { promptTokenCount: 5, candidatesTokenCount: 3 });
  t.is(fake.requests.length, 1);
});

test.serial('translated: a streamed miss, then a plain hit', async (t) => {
  translated.answer({ kind: 'text', text: 'Translated hello.', finishReason: 'stop', usage });
  const headers = { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': translated.baseUrl };
  const before = translated.requests.length;
  const streamed = await streamChecked(gateway.url, 'gpt-4o', body('translated stream first'), headers, 'array');
  t.is(streamed.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(streamed.candidates.get(0)?.text, 'Translated hello.');
  const hit = await postGemini(gateway.url, '/v1beta/models/gpt-4o:generateContent', body('translated stream first'), headers);
  t.is(hit.headers.get('x-gateway-cache'), 'HIT');
  t.deepEqual(((await hit.json()) as Record<string, any>).candidates[0], { content: { role: 'model', parts: [{ text: 'Translated hello.' }] }, finishReason: 'STOP', index: 0 });
  t.is(translated.requests.length, before + 1);
});

test.serial('a hit is judged again by the caller\'s output guardrails: stored for one key, denied (SAFETY) for a guarded key on the same shared route', async (t) => {
  const fake = await nativeFake();
  const judging = await startGateway({
    providers: [gemini()],
    policies: { 'no-hello': { output: [bannedWords({ words: ['hello'] })] } },
    routes: { 'shared-gemini': { strategy: { mode: 'single' }, cache: { mode: 'simple', namespace: 'gemini-team' }, targets: [{ provider: 'gemini', custom_host: fake.baseUrl }] } },
  });
  t.teardown(async () => {
    await judging.close();
    await fake.close();
  });
  const open = (await createKey(t, judging, { name: 'gemini-open', provider: 'gemini', provider_key: PROVIDER_KEY, allowed_routes: ['shared-gemini'] })).key;
  const guarded = (await createKey(t, judging, { name: 'gemini-guarded', provider: 'gemini', provider_key: PROVIDER_KEY, guardrail_policy: 'no-hello', allowed_routes: ['shared-gemini'] })).key;
  const via = (key: string) => ({ 'x-goog-api-key': key, 'x-gateway-config': 'shared-gemini' });
  const stored = await postGemini(judging.url, '/v1beta/models/gemini-2.5-flash:generateContent', body('judged on a hit'), via(open));
  t.is(stored.headers.get('x-gateway-cache'), 'MISS');
  t.is(((await stored.json()) as Record<string, any>).candidates[0].finishReason, 'STOP');
  const denied = await postGemini(judging.url, '/v1beta/models/gemini-2.5-flash:generateContent', body('judged on a hit'), via(guarded));
  t.is(denied.headers.get('x-gateway-cache'), 'HIT');
  t.like(((await denied.json()) as Record<string, any>).candidates[0], { finishReason: 'SAFETY', content: { parts: [] } });
  const deniedStream = await streamChecked(judging.url, 'gemini-2.5-flash', body('judged on a hit'), via(guarded), 'sse');
  t.is(deniedStream.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(deniedStream.candidates.get(0)?.finishReason, 'SAFETY');
  t.false(JSON.stringify(deniedStream.pieces).includes('hello'));
  t.is(fake.requests.length, 1);
});

test.serial('an answer the provider stopped for safety is never stored', async (t) => {
  const fake = await startFake((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'SAFETY', index: 0 }], usageMetadata: { promptTokenCount: 2, totalTokenCount: 2 } }));
  });
  t.teardown(() => fake.close());
  const headers = { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl };
  for (let attempt = 0; attempt < 2; attempt++) {
    const response = await postGemini(gateway.url, '/v1beta/models/gemini-2.5-flash:generateContent', body('unsafe'), headers);
    t.is(response.headers.get('x-gateway-cache'), 'MISS');
  }
  t.is(fake.requests.length, 2);
});
