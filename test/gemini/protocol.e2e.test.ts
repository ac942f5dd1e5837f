import test from 'ava';
import { GoogleGenAI } from '@google/genai';
import config from '../../gateway.config.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { gemini } from '../../plugins/providers/gemini/index.js';
import { geminiFakeRenderer } from '../../plugins/providers/gemini/gemini-fake.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { checkGeminiStream } from './stream-grammar.js';
import { startFake } from '../fakes/openai-fake.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { ACCOUNT_KEY, loggedOnce, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { postGemini, streamChecked } from './helpers.js';

/**
 * The Gemini API's routes as a protocol: the gateway key in `x-goog-api-key` or `?key=` (never
 * recorded), provider and model selection (a provider prefix as path segments, aliases, routes),
 * Google's error shape, and guardrail denials as Google reports a blocked prompt or answer.
 */

let openaiUpstream: RenderedFake;
let claudeUpstream: RenderedFake;
let geminiUpstream: RenderedFake;
let gateway: TestGateway;
let guarded: TestGateway;
let throttled: TestGateway;
const usage = { promptTokens: 7, completionTokens: 3 };

test.before(async () => {
  openaiUpstream = await startRenderedFake(openaiFake);
  claudeUpstream = await startRenderedFake(anthropicFakeRenderer);
  geminiUpstream = await startRenderedFake(geminiFakeRenderer);
  const providers = [openai(), anthropic(), gemini()];
  gateway = await startGateway({
    providers,
    models: { fast: { strategy: { mode: 'single' }, targets: [{ name: 'gpt', provider: 'openai', custom_host: openaiUpstream.baseUrl, override_params: { model: 'gpt-4o-mini' } }] } },
    routes: {
      'gemini-first': {
        strategy: { mode: 'fallback' },
        targets: [
          { name: 'gemini', provider: 'gemini', custom_host: geminiUpstream.baseUrl },
          { name: 'claude', provider: 'anthropic', custom_host: claudeUpstream.baseUrl, override_params: { model: 'claude-sonnet-4-5' } },
        ],
      },
    },
  });
  guarded = await startGateway({ providers, policies: { tested: config.policies!['pii-block'] }, defaultPolicy: 'tested' });
  throttled = await startGateway({ providers, server: { failedAuth: { perAddress: 2, global: 1000, windowMs: 60_000 } } } as never);
});
test.after.always(async () => {
  await Promise.all([gateway?.close(), guarded?.close(), throttled?.close(), openaiUpstream?.close(), claudeUpstream?.close(), geminiUpstream?.close()]);
});

const CARD = '4111 1111 1111 1111';
const contents = [{ role: 'user', parts: [{ text: 'Hello' }] }];
const openaiHeaders = () => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openaiUpstream.baseUrl });

test.serial('the gateway key as ?key= works, and is never in the log entry, the log or the upstream request', async (t) => {
  openaiUpstream.answer({ kind: 'text', text: 'Keyed by query.', finishReason: 'stop', usage });
  const id = traceId('gemini-query-key');
  const before = openaiUpstream.requests.length;
  const response = await fetch(`${gateway.url}/v1beta/models/gpt-4o:streamGenerateContent?alt=sse&key=${ACCOUNT_KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-trace-id': id, ...openaiHeaders() },
    body: JSON.stringify({ contents }),
  });
  t.is(response.status, 200);
  t.is(checkGeminiStream(await response.text(), 'sse').candidates.get(0)?.text, 'Keyed by query.');
  const entry = await loggedOnce(gateway, id);
  t.is(entry.path, '/v1beta/models/gpt-4o:streamGenerateContent');
  t.false(JSON.stringify(entry).includes(ACCOUNT_KEY));
  t.false(gateway.rawLog().includes(ACCOUNT_KEY));
  const upstream = openaiUpstream.requests[before];
  t.false(upstream.url.includes('key='));
  t.false(JSON.stringify(upstream.headers).includes(ACCOUNT_KEY));
});

test.serial('a wrong gateway key as ?key= is a Google-shaped 401, throttled like a wrong key header (429 past the limit)', async (t) => {
  const statuses: number[] = [];
  let last: Record<string, any> = {};
  for (let attempt = 0; attempt < 3; attempt++) {
    const response = await fetch(`${throttled.url}/v1beta/models/gpt-4o:generateContent?key=vk-wrong-${attempt}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents }) });
    statuses.push(response.status);
    last = (await response.json()) as Record<string, any>;
    if (attempt === 0) t.like(last.error, { code: 401, status: 'UNAUTHENTICATED' });
  }
  t.deepEqual(statuses, [401, 401, 429]);
  t.like(last.error, { code: 429, status: 'RESOURCE_EXHAUSTED' });
  t.false(throttled.rawLog().includes('vk-wrong-'));
});

test.serial('the SDK with only a base URL and a key: a provider prefix written as path segments picks the provider', async (t) => {
  openaiUpstream.answer({ kind: 'text', text: 'Prefixed.', finishReason: 'stop', usage });
  const before = openaiUpstream.requests.length;
  const client = new GoogleGenAI({ apiKey: ACCOUNT_KEY, httpOptions: { baseUrl: gateway.url, headers: { authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-custom-host': openaiUpstream.baseUrl } } });
  const response = await client.models.generateContent({ model: 'openai/gpt-4o', contents: 'Hi' });
  t.is(response.text, 'Prefixed.');
  t.is(openaiUpstream.body(before).model, 'gpt-4o');
  // Google serves the same methods under /v1 too.
  const v1 = await postGemini(gateway.url, '/v1/models/openai/gpt-4o:generateContent', { contents }, { 'x-gateway-custom-host': openaiUpstream.baseUrl });
  t.is(v1.status, 200);
});

test.serial('a model alias and a route with a fallback from the native provider to a translated one', async (t) => {
  openaiUpstream.answer({ kind: 'text', text: 'Aliased.', finishReason: 'stop', usage });
  const before = openaiUpstream.requests.length;
  const aliased = await postGemini(gateway.url, '/v1beta/models/fast:generateContent', { contents }, {});
  t.is(aliased.status, 200);
  t.is(((await aliased.json()) as Record<string, any>).candidates[0].content.parts[0].text, 'Aliased.');
  t.is(openaiUpstream.body(before).model, 'gpt-4o-mini');

  geminiUpstream.answer({ kind: 'error', status: 503, message: 'overloaded' });
  claudeUpstream.answer({ kind: 'text', text: 'Claude took over.', finishReason: 'stop', usage });
  const id = traceId('gemini-route');
  const routed = await postGemini(gateway.url, '/v1beta/models/gemini-2.5-flash:generateContent', { contents, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] }, { 'x-gateway-config': 'gemini-first', 'x-gateway-trace-id': id });
  t.is(routed.status, 200);
  t.is(((await routed.json()) as Record<string, any>).candidates[0].content.parts[0].text, 'Claude took over.');
  t.deepEqual(geminiUpstream.body(geminiUpstream.requests.length - 1).safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }], 'the native attempt kept them');
  const entry = await loggedOnce(gateway, id);
  t.like(entry, { operation: 'generateContent', provider: 'anthropic' });
  t.deepEqual(entry.attempts?.map((attempt) => attempt.target), ['gemini', 'claude']);
  t.deepEqual(entry.droppedFields, ['safetySettings']);
});

test.serial('errors have Google\'s shape: a malformed request names the field, an upstream error keeps its status', async (t) => {
  const invalid = await postGemini(gateway.url, '/v1beta/models/gpt-4o:generateContent', { contents: [{ role: 'user' }] }, openaiHeaders());
  t.is(invalid.status, 400);
  const body = (await invalid.json()) as Record<string, any>;
  t.like(body.error, { code: 400, status: 'INVALID_ARGUMENT' });
  t.is(body.error.details[0].metadata.field, 'contents[0].parts');

  openaiUpstream.answer({ kind: 'error', status: 429, message: 'Slow down', retryAfter: '3' });
  const limited = await postGemini(gateway.url, '/v1beta/models/gpt-4o:generateContent', { contents }, openaiHeaders());
  t.is(limited.status, 429);
  t.is(limited.headers.get('retry-after'), '3');
  t.like(((await limited.json()) as Record<string, any>).error, { code: 429, status: 'RESOURCE_EXHAUSTED' });

  const missing = await fetch(`${gateway.url}/v1beta/models/gpt-4o:generateContent`, { method: 'POST', body: '{}' });
  t.is(missing.status, 401);
  t.like(((await missing.json()) as Record<string, any>).error, { code: 401, status: 'UNAUTHENTICATED' });

  const unknown = await postGemini(gateway.url, '/v1beta/models/gpt-4o:predict', { contents }, openaiHeaders());
  t.is(unknown.status, 404);
  t.like(((await unknown.json()) as Record<string, any>).error, { code: 404, status: 'NOT_FOUND' });

  const cached = await postGemini(gateway.url, '/v1beta/models/gpt-4o:generateContent', { contents, cachedContent: 'cachedContents/abc' }, openaiHeaders());
  t.is(cached.status, 400);
  t.regex(((await cached.json()) as Record<string, any>).error.message, /"openai".*cachedContent/);
});

test.serial('an input guardrail denial is a blocked prompt (promptFeedback.blockReason), plain and in both stream framings; nothing goes upstream', async (t) => {
  const before = openaiUpstream.requests.length;
  const denied = { contents: [{ role: 'user', parts: [{ text: `My card is ${CARD}` }] }] };
  const id = traceId('gemini-input-deny');
  const plain = await postGemini(guarded.url, '/v1beta/models/gpt-4o:generateContent', denied, { ...openaiHeaders(), 'x-gateway-trace-id': id });
  t.is(plain.status, 200);
  const answer = (await plain.json()) as Record<string, any>;
  t.is(answer.promptFeedback.blockReason, 'SAFETY');
  t.is(answer.candidates, undefined);
  for (const framing of ['sse', 'array'] as const) {
    const checked = await streamChecked(guarded.url, 'gpt-4o', denied, openaiHeaders(), framing);
    t.is(checked.blockReason, 'SAFETY');
  }
  t.is(openaiUpstream.requests.length, before);
  t.like(await loggedOnce(guarded, id), { operation: 'generateContent', outcome: 'error', error: { code: 'guardrail_denied' } });
});

test.serial('an output guardrail denial on a translated answer is finishReason SAFETY with no parts, plain and streamed', async (t) => {
  openaiUpstream.answer({ kind: 'text', text: `Your card is ${CARD}.`, finishReason: 'stop', usage });
  const plain = await postGemini(guarded.url, '/v1beta/models/gpt-4o:generateContent', { contents }, openaiHeaders());
  const answer = (await plain.json()) as Record<string, any>;
  t.deepEqual(answer.candidates[0], { content: { role: 'model', parts: [] }, finishReason: 'SAFETY', index: 0 });
  for (const framing of ['sse', 'array'] as const) {
    const checked = await streamChecked(guarded.url, 'gpt-4o', { contents }, openaiHeaders(), framing);
    t.is(checked.candidates.get(0)?.finishReason, 'SAFETY');
    t.false(JSON.stringify(checked.pieces).includes(CARD));
  }
});

test.serial('GET /v1beta/models lists the provider\'s models as Google names them', async (t) => {
  const fake = await startFake((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o', object: 'model', created: 1, owned_by: 'openai' }] }));
  });
  t.teardown(() => fake.close());
  const response = await fetch(`${gateway.url}/v1beta/models`, { headers: { 'x-goog-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl } });
  t.is(response.status, 200);
  const body = (await response.json()) as { models: Array<{ name: string; supportedGenerationMethods: string[] }> };
  t.is(fake.requests[0].url, '/v1/models');
  t.is(body.models[0].name, 'models/gpt-4o');
  t.true(body.models[0].supportedGenerationMethods.includes('generateContent'));
  t.true(body.models[0].supportedGenerationMethods.includes('embedContent'));
  const none = await fetch(`${gateway.url}/v1beta/models`, { headers: { 'x-goog-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'anthropic' } });
  t.is(none.status, 400);
  t.regex(((await none.json()) as Record<string, any>).error.message, /"anthropic"/);
});
