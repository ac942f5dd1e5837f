import test from 'ava';
import type { ServerResponse } from 'node:http';
import config from '../../gateway.config.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { gemini } from '../../plugins/providers/gemini/index.js';
import { vertexAI } from '../../plugins/providers/vertex-ai/index.js';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { startRenderedFake } from '../fakes/rendered-fake.js';
import { ACCOUNT_KEY, loggedOnce, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { genaiClient, postGemini, streamChecked, weatherDeclaration } from './helpers.js';

/**
 * The Gemini API on the providers that take it natively (Gemini, Gemini models on Vertex AI): the
 * client's body goes up as written (safety settings, Google's built-in tools, thought signatures),
 * the answer comes back as Google sent it, and the pipeline still authenticates, judges and logs it.
 */

let gateway: TestGateway;
let guarded: TestGateway;
let redacting: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [gemini(), vertexAI(), anthropic()] });
  guarded = await startGateway({ providers: [gemini()], policies: { tested: config.policies!['pii-block'] }, defaultPolicy: 'tested' });
  redacting = await startGateway({ providers: [gemini()], policies: { tested: config.policies!['pii-redact'] }, defaultPolicy: 'tested' });
});
test.after.always(async () => {
  await gateway.close();
  await guarded.close();
  await redacting.close();
});

const CARD = '4111 1111 1111 1111';
const usageMetadata = { promptTokenCount: 9, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 17 };
const candidate = (parts: unknown[], finishReason?: string) => ({ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) });
const thought = { text: 'The user wants the weather.', thought: true };
const signedCall = { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQB0e2Kb-signature' };

/** A fake Google endpoint: generateContent, its SSE stream, countTokens; each answer as Google shapes it. */
function googleHandler(pieces: unknown[][]) {
  return (request: RecordedRequest, response: ServerResponse): void => {
    const send = (value: unknown): void => void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (request.url.includes(':countTokens')) {
      send({ totalTokens: 42 });
      return;
    }
    if (request.url.includes(':generateContent')) {
      send({ candidates: [candidate(pieces.flat(), 'STOP')], usageMetadata, modelVersion: 'gemini-2.5-flash-001', responseId: 'resp-1' });
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    pieces.forEach((parts, index) => {
      const last = index === pieces.length - 1;
      response.write(`data: ${JSON.stringify({ candidates: [candidate(parts, last ? 'STOP' : undefined)], ...(last ? { usageMetadata } : {}), modelVersion: 'gemini-2.5-flash-001' })}\r\n\r\n`);
    });
    response.end();
  };
}

interface Native {
  readonly name: string;
  headers(fake: Fake): Record<string, string>;
  /** The path the fake receives for `method`. */
  path(method: string): string;
  /** How the provider credential reaches it. */
  credential(request: RecordedRequest): string | undefined;
}

const NATIVE: Native[] = [
  {
    name: 'gemini',
    headers: (fake) => ({ 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl }),
    path: (method) => `/v1/models/gemini-2.5-flash:${method}`,
    credential: (request) => request.headers['x-goog-api-key'] as string | undefined,
  },
  {
    name: 'vertex-ai',
    headers: (fake) => ({ 'x-gateway-provider': 'vertex-ai', 'x-gateway-custom-host': fake.baseUrl, 'x-gateway-cloud-b-project-id': 'acme-prod', 'x-gateway-cloud-b-region': 'us-central1' }),
    path: (method) => `/v1/projects/acme-prod/locations/us-central1/publishers/google/models/gemini-2.5-flash:${method}`,
    credential: (request) => /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1],
  },
];

const body = {
  contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
  systemInstruction: { parts: [{ text: 'Be brief.' }] },
  tools: [{ functionDeclarations: [weatherDeclaration] }, { googleSearch: {} }],
  safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
  generationConfig: { temperature: 0.3, thinkingConfig: { includeThoughts: true, thinkingBudget: 512 } },
};

for (const native of NATIVE) {
  test(`${native.name}: generateContent goes up as written and comes back as Google sent it (thought signatures intact)`, async (t) => {
    const fake = await startFake(googleHandler([[thought], [signedCall]]));
    t.teardown(() => fake.close());
    const id = traceId(`gemini-native-${native.name}`);
    const response = await postGemini(gateway.url, '/v1beta/models/gemini-2.5-flash:generateContent', body, { ...native.headers(fake), 'x-gateway-trace-id': id });
    t.is(response.status, 200);
    const answer = (await response.json()) as Record<string, any>;
    t.deepEqual(answer.candidates[0].content.parts, [thought, signedCall]);
    t.is(fake.requests[0].url, native.path('generateContent'));
    t.deepEqual(fake.requests[0].json(), body);
    t.is(native.credential(fake.requests[0]), PROVIDER_KEY);
    t.false(JSON.stringify(fake.requests[0].headers).includes(ACCOUNT_KEY));
    const entry = await loggedOnce(gateway, id);
    t.like(entry, { operation: 'generateContent', provider: native.name, model: 'gemini-2.5-flash-001', outcome: 'ok', usage: { promptTokens: 9, completionTokens: 8 } });
    t.is(entry.droppedFields, undefined);
  });

  test(`${native.name}: the SDK's stream is relayed piece by piece; without alt=sse it is reframed as a JSON array`, async (t) => {
    const fake = await startFake(googleHandler([[thought], [{ text: 'Sunny, ' }], [{ text: '21 degrees.' }]]));
    t.teardown(() => fake.close());
    const client = genaiClient(gateway.url, native.headers(fake));
    let text = '';
    let thoughts = '';
    for await (const chunk of await client.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Weather?', config: { thinkingConfig: { includeThoughts: true } } })) {
      for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (part.thought) thoughts += part.text ?? '';
        else text += part.text ?? '';
      }
    }
    t.is(text, 'Sunny, 21 degrees.');
    t.is(thoughts, thought.text);
    t.is(fake.requests[0].url, native.path('streamGenerateContent?alt=sse'));
    for (const framing of ['sse', 'array'] as const) {
      const checked = await streamChecked(gateway.url, 'gemini-2.5-flash', { contents: body.contents }, native.headers(fake), framing);
      t.is(checked.pieces.length, 3);
      t.is(checked.candidates.get(0)?.text, 'Sunny, 21 degrees.');
      t.deepEqual(checked.usage, usageMetadata);
    }
    // Upstream always streams SSE: the gateway asks for it whatever the client's framing.
    t.true(fake.requests.every((request) => request.url.endsWith(':streamGenerateContent?alt=sse')));
  });

  test(`${native.name}: countTokens is counted by the provider`, async (t) => {
    const fake = await startFake(googleHandler([[{ text: 'unused' }]]));
    t.teardown(() => fake.close());
    const counted = await genaiClient(gateway.url, native.headers(fake)).models.countTokens({ model: 'gemini-2.5-flash', contents: 'How many tokens?' });
    t.is(counted.totalTokens, 42);
    t.is(fake.requests[0].url, native.path('countTokens'));
    t.deepEqual(fake.requests[0].json().contents ?? fake.requests[0].json().generateContentRequest.contents, [{ role: 'user', parts: [{ text: 'How many tokens?' }] }]);
  });
}

test('gemini: embedContent through the SDK goes up as batchEmbedContents and comes back in Google\'s shape', async (t) => {
  const fake = await startFake((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ embeddings: [{ values: [0.5, 0.25] }, { values: [0.125, 1] }] }));
  });
  t.teardown(() => fake.close());
  const client = genaiClient(gateway.url, { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl });
  const response = await client.models.embedContent({ model: 'gemini-embedding-001', contents: ['one', 'two'] });
  t.deepEqual(response.embeddings?.map((embedding) => embedding.values), [[0.5, 0.25], [0.125, 1]]);
  t.is(fake.requests[0].url, '/v1/models/gemini-embedding-001:batchEmbedContents');
  t.deepEqual(fake.requests[0].json().requests.map((entry: any) => entry.content.parts[0].text), ['one', 'two']);
});

test('vertex-ai: a Claude model named on the Gemini routes is translated through chat (rawPredict)', async (t) => {
  const fake = await startRenderedFake(anthropicFakeRenderer);
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'Claude on Vertex.', finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 4 } });
  const headers = { 'x-gateway-provider': 'vertex-ai', 'x-gateway-custom-host': fake.baseUrl, 'x-gateway-cloud-b-project-id': 'acme-prod', 'x-gateway-cloud-b-region': 'us-east5' };
  const response = await genaiClient(gateway.url, headers).models.generateContent({ model: 'claude-sonnet-4-5@20250929', contents: 'Hi' });
  t.is(response.text, 'Claude on Vertex.');
  t.regex(fake.requests[0].url, /publishers\/anthropic\/models\/claude-sonnet-4-5@20250929:rawPredict$/);
});

test('output guardrails judge a native answer: a denied JSON answer is finishReason SAFETY with no parts; a denied stream is cut the same way', async (t) => {
  const fake = await startFake(googleHandler([[{ text: 'Your card is ' }], [{ text: `${CARD}. Keep it.` }]]));
  t.teardown(() => fake.close());
  const headers = { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl };
  const plain = await postGemini(guarded.url, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: body.contents }, headers);
  t.is(plain.status, 200);
  const answer = (await plain.json()) as Record<string, any>;
  t.deepEqual(answer.candidates[0], { content: { role: 'model', parts: [] }, finishReason: 'SAFETY', index: 0 });
  for (const framing of ['sse', 'array'] as const) {
    const checked = await streamChecked(guarded.url, 'gemini-2.5-flash', { contents: body.contents }, headers, framing);
    t.is(checked.candidates.get(0)?.finishReason, 'SAFETY');
    t.false(JSON.stringify(checked.pieces).includes(CARD));
  }
});

test('gemini through the SDK: a function-calling round trip keeps the thought signature, structured output goes up as written', async (t) => {
  const answers = [
    { candidates: [candidate([thought, signedCall], 'STOP')], usageMetadata, modelVersion: 'gemini-2.5-flash' },
    { candidates: [candidate([{ text: 'Sunny in Paris.' }], 'STOP')], usageMetadata, modelVersion: 'gemini-2.5-flash' },
    { candidates: [candidate([{ text: '{"city":"Paris","celsius":21}' }], 'STOP')], usageMetadata, modelVersion: 'gemini-2.5-flash' },
  ];
  const fake = await startFake((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers[Math.min(fake.requests.length - 1, answers.length - 1)]));
  });
  t.teardown(() => fake.close());
  const client = genaiClient(gateway.url, { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl });
  const config = { tools: [{ functionDeclarations: [weatherDeclaration] }], thinkingConfig: { includeThoughts: true } };
  const first = await client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Weather in Paris?', config });
  t.deepEqual(first.functionCalls?.map(({ name, args }) => ({ name, args })), [{ name: 'get_weather', args: { city: 'Paris' } }]);
  const history = [
    { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
    first.candidates![0].content!,
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] },
  ];
  const second = await client.models.generateContent({ model: 'gemini-2.5-flash', contents: history, config });
  t.is(second.text, 'Sunny in Paris.');
  t.deepEqual(fake.requests[1].json().contents[1].parts, [thought, signedCall], 'the signed call went back to Google as the model gave it');

  const schema = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'integer' } }, required: ['city', 'celsius'] };
  const structured = await client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Weather as JSON', config: { responseMimeType: 'application/json', responseJsonSchema: schema } });
  t.deepEqual(JSON.parse(structured.text ?? ''), { city: 'Paris', celsius: 21 });
  t.like(fake.requests[2].json().generationConfig, { responseMimeType: 'application/json', responseJsonSchema: schema });
});

test('output guardrails that allow a native stream: text held back by the window comes out whole, before its candidate finishes', async (t) => {
  const fake = await startFake(googleHandler([[thought], [{ text: 'Sunny and ' }], [{ text: 'warm' }], [{ text: ' today.' }]]));
  t.teardown(() => fake.close());
  const headers = { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl };
  for (const framing of ['sse', 'array'] as const) {
    const checked = await streamChecked(guarded.url, 'gemini-2.5-flash', { contents: body.contents }, headers, framing);
    t.is(checked.candidates.get(0)?.text, 'Sunny and warm today.');
    t.is(checked.candidates.get(0)?.thoughts, thought.text);
    t.is(checked.candidates.get(0)?.finishReason, 'STOP');
    t.deepEqual(checked.usage, usageMetadata);
  }
  const plain = await postGemini(guarded.url, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: body.contents }, headers);
  t.deepEqual(((await plain.json()) as Record<string, any>).candidates[0].content.parts, [thought, { text: 'Sunny and ' }, { text: 'warm' }, { text: ' today.' }]);
});

test('a redacting policy rewrites native answers in place: the card never leaves, the rest of the text and the thoughts do', async (t) => {
  const fake = await startFake(googleHandler([[thought], [{ text: 'Your card is ' }], [{ text: `${CARD}. Keep it.` }]]));
  t.teardown(() => fake.close());
  const headers = { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': fake.baseUrl };
  for (const framing of ['sse', 'array'] as const) {
    const checked = await streamChecked(redacting.url, 'gemini-2.5-flash', { contents: body.contents }, headers, framing);
    const text = checked.candidates.get(0)?.text ?? '';
    t.false(text.includes(CARD));
    t.regex(text, /^Your card is .+\. Keep it\.$/);
    t.is(checked.candidates.get(0)?.thoughts, thought.text);
    t.is(checked.candidates.get(0)?.finishReason, 'STOP');
  }
  const plain = await postGemini(redacting.url, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: body.contents }, headers);
  const parts = ((await plain.json()) as Record<string, any>).candidates[0].content.parts;
  t.deepEqual(parts[0], thought);
  t.false(JSON.stringify(parts).includes(CARD));
});
