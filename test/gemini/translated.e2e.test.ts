import test from 'ava';
import { FunctionCallingConfigMode, Type } from '@google/genai';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { groq, groqManifest } from '../../plugins/providers/groq/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { compatibleFake } from '../../plugins/providers/openai-compatible/openai-compatible-fake.js';
import type { ProviderFakeRenderer } from '../../core/spec/index.js';
import { startFake } from '../fakes/openai-fake.js';
import { startRenderedFake } from '../fakes/rendered-fake.js';
import { loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { genaiClient, PNG_BASE64, postGemini, streamChecked, weatherDeclaration } from './helpers.js';

/**
 * The Gemini API translated to chat and back, through the official `@google/genai` SDK, on Anthropic,
 * OpenAI and an OpenAI-compatible provider (Groq), each against a loopback fake of its own API.
 */

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [anthropic(), openai(), groq()] });
});
test.after.always(() => gateway.close());

const usage = { promptTokens: 12, completionTokens: 6 };

interface Translated {
  readonly name: string;
  readonly model: string;
  readonly renderer: ProviderFakeRenderer;
  /** The chat messages the provider received (its own wire shape). */
  readonly path: string;
  readonly schemaMode: boolean;
  readonly embeddings: boolean;
}

const TRANSLATED: Translated[] = [
  { name: 'anthropic', model: 'claude-sonnet-4-5', renderer: anthropicFakeRenderer, path: '/v1/messages', schemaMode: false, embeddings: false },
  { name: 'openai', model: 'gpt-4o', renderer: openaiFake, path: '/v1/chat/completions', schemaMode: true, embeddings: true },
  { name: 'groq', model: 'llama-3.3-70b-versatile', renderer: compatibleFake(groqManifest), path: '/chat/completions', schemaMode: true, embeddings: false },
];

for (const provider of TRANSLATED) {
  const setup = async () => {
    const fake = await startRenderedFake(provider.renderer);
    const headers = { 'x-gateway-provider': provider.name, 'x-gateway-custom-host': fake.baseUrl };
    return { fake, headers, client: genaiClient(gateway.url, headers) };
  };

  test(`${provider.name}: generateContent through the SDK, with a system instruction, an image and generation config`, async (t) => {
    const { fake, client } = await setup();
    t.teardown(() => fake.close());
    fake.answer({ kind: 'text', text: `Hello from ${provider.name}.`, finishReason: 'stop', usage });
    const id = traceId(`gemini-${provider.name}-plain`);
    const response = await client.models.generateContent({
      model: provider.model,
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }, { text: 'What is this?' }] }],
      config: {
        systemInstruction: 'Be brief.',
        temperature: 0.2,
        maxOutputTokens: 100,
        stopSequences: ['END'],
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT' as never, threshold: 'BLOCK_NONE' as never }],
        tools: [{ googleSearch: {} }],
        httpOptions: { headers: { 'x-gateway-trace-id': id } },
      },
    });
    t.is(response.text, `Hello from ${provider.name}.`);
    t.is(response.candidates?.[0].finishReason as string | undefined, 'STOP');
    t.like(response.usageMetadata, { promptTokenCount: 12, candidatesTokenCount: 6, totalTokenCount: 18 });
    t.true(fake.requests[0].url.endsWith(provider.path));
    const sent = fake.body(0);
    t.is(sent.max_tokens, 100);
    t.is(sent.temperature, 0.2);
    t.true(JSON.stringify(sent).includes('Be brief.'));
    t.true(JSON.stringify(sent).includes(PNG_BASE64));
    t.false(JSON.stringify(sent).includes('HARM_CATEGORY'));
    const entry = await loggedOnce(gateway, id);
    t.like(entry, { operation: 'generateContent', provider: provider.name, status: 200, outcome: 'ok', usage: { promptTokens: 12, completionTokens: 6 } });
    t.deepEqual([...(entry.droppedFields ?? [])].sort(), ['safetySettings', 'tools.googleSearch']);
  });

  test(`${provider.name}: generateContentStream through the SDK, and both framings pass the stream grammar`, async (t) => {
    const { fake, headers, client } = await setup();
    t.teardown(() => fake.close());
    fake.answer({ kind: 'text', text: 'Streamed in several pieces.', finishReason: 'length', usage });
    let text = '';
    let finish: string | undefined;
    for await (const chunk of await client.models.generateContentStream({ model: provider.model, contents: 'Go' })) {
      text += chunk.text ?? '';
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    t.is(text, 'Streamed in several pieces.');
    t.is(finish, 'MAX_TOKENS');
    for (const framing of ['sse', 'array'] as const) {
      const checked = await streamChecked(gateway.url, provider.model, { contents: [{ role: 'user', parts: [{ text: 'Go' }] }] }, headers, framing);
      t.is(checked.candidates.get(0)?.text, 'Streamed in several pieces.');
      t.is(checked.candidates.get(0)?.finishReason, 'MAX_TOKENS');
      t.like(checked.usage, { promptTokenCount: 12, candidatesTokenCount: 6 });
      t.regex(checked.response.headers.get('content-type') ?? '', framing === 'sse' ? /^text\/event-stream/ : /^application\/json/);
    }
  });

  test(`${provider.name}: a function-calling round trip (plain and streamed)`, async (t) => {
    const { fake, client } = await setup();
    t.teardown(() => fake.close());
    fake.answer({ kind: 'toolCall', id: 'call_7', name: 'get_weather', arguments: '{"city":"Oslo"}', usage }, { kind: 'toolCall', id: 'call_8', name: 'get_weather', arguments: '{"city":"Lima"}', usage }, { kind: 'text', text: 'Cold in Oslo.', finishReason: 'stop', usage });
    const config = { tools: [{ functionDeclarations: [weatherDeclaration] }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } } };
    const first = await client.models.generateContent({ model: provider.model, contents: 'Weather in Oslo?', config });
    t.deepEqual(first.functionCalls?.map(({ name, args }) => ({ name, args })), [{ name: 'get_weather', args: { city: 'Oslo' } }]);
    const tools = JSON.stringify(fake.body(0).tools);
    t.true(tools.includes('get_weather'));
    let streamed: Record<string, unknown> | undefined;
    for await (const chunk of await client.models.generateContentStream({ model: provider.model, contents: 'Weather in Lima?', config })) {
      streamed = chunk.functionCalls?.[0] ? { name: chunk.functionCalls[0].name, args: chunk.functionCalls[0].args } : streamed;
    }
    t.deepEqual(streamed, { name: 'get_weather', args: { city: 'Lima' } });
    const second = await client.models.generateContent({
      model: provider.model,
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Oslo?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'cold' } } }] },
      ],
      config: { tools: [{ functionDeclarations: [weatherDeclaration] }] },
    });
    t.is(second.text, 'Cold in Oslo.');
    const sent = JSON.stringify(fake.body(2));
    // The call and its result are paired by the id the gateway gave the call (Gemini's calls carry none).
    t.true(sent.includes('call_g1_0'));
    t.true(sent.includes('cold'));
  });

  test(`${provider.name}: structured output ${provider.schemaMode ? 'becomes a JSON-schema response format' : 'is refused with a Google-shaped 400 naming the provider and the field'}`, async (t) => {
    const { fake, headers, client } = await setup();
    t.teardown(() => fake.close());
    fake.answer({ kind: 'text', text: '{"city":"Oslo"}', finishReason: 'stop', usage });
    const config = { responseMimeType: 'application/json', responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] } };
    if (provider.schemaMode) {
      const response = await client.models.generateContent({ model: provider.model, contents: 'Where?', config });
      t.deepEqual(JSON.parse(response.text ?? ''), { city: 'Oslo' });
      t.like(fake.body(0).response_format, { type: 'json_schema', json_schema: { schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } });
      return;
    }
    const response = await postGemini(gateway.url, `/v1beta/models/${provider.model}:generateContent`, { contents: [{ parts: [{ text: 'Where?' }] }], generationConfig: config }, headers);
    t.is(response.status, 400);
    const body = (await response.json()) as { error: { code: number; status: string; message: string; details: Array<Record<string, any>> } };
    t.like(body.error, { code: 400, status: 'INVALID_ARGUMENT' });
    t.regex(body.error.message, new RegExp(`"${provider.name}".*generationConfig\\.responseSchema`));
    t.is(body.error.details[0].metadata.field, 'generationConfig.responseSchema');
    t.is(fake.requests.length, 0);
  });

  test(`${provider.name}: countTokens is the gateway's estimate, never a completion`, async (t) => {
    const { fake, client } = await setup();
    t.teardown(() => fake.close());
    const counted = await client.models.countTokens({ model: provider.model, contents: 'The quick brown fox jumps over the lazy dog.' });
    t.true((counted.totalTokens ?? 0) >= 10 && (counted.totalTokens ?? 0) <= 20);
    t.is(fake.requests.length, 0);
  });

  test(`${provider.name}: embeddings ${provider.embeddings ? 'through the embeddings operation' : 'are refused with a 400 naming the provider'}`, async (t) => {
    const { fake, headers, client } = await setup();
    t.teardown(() => fake.close());
    fake.answer({ kind: 'embedding', vectors: [[0.1, 0.2], [0.3, 0.4]], promptTokens: 4 });
    const model = provider.embeddings ? 'text-embedding-3-small' : provider.model;
    if (provider.embeddings) {
      const response = await client.models.embedContent({ model, contents: ['one', 'two'], config: { outputDimensionality: 2, taskType: 'RETRIEVAL_DOCUMENT' } });
      t.deepEqual(response.embeddings?.map((embedding) => embedding.values), [[0.1, 0.2], [0.3, 0.4]]);
      t.like(fake.body(0), { model, input: ['one', 'two'], dimensions: 2 });
      const single = await postGemini(gateway.url, `/v1beta/models/${model}:embedContent`, { content: { parts: [{ text: 'one' }] } }, headers);
      t.deepEqual(await single.json(), { embedding: { values: [0.1, 0.2] } });
      return;
    }
    const response = await postGemini(gateway.url, `/v1beta/models/${model}:batchEmbedContents`, { requests: [{ model: `models/${model}`, content: { parts: [{ text: 'one' }] } }] }, headers);
    t.is(response.status, 400);
    const body = (await response.json()) as { error: { message: string; status: string } };
    t.is(body.error.status, 'INVALID_ARGUMENT');
    t.regex(body.error.message, new RegExp(`"${provider.name}"`));
    t.is(fake.requests.length, 0);
  });
}

test('a compatible server\'s reasoning comes back as thought parts when the request asks for them (includeThoughts), and not otherwise', async (t) => {
  const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
  const fake = await startFake((_request, response) => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
      sse({ id: 'chatcmpl-r1', object: 'chat.completion.chunk', created: 1, model: 'deepseek-r1', choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(chunk({ role: 'assistant', content: '', reasoning_content: 'Think ' }));
    response.write(chunk({ reasoning_content: 'hard.' }));
    response.write(chunk({ content: 'Done.' }));
    response.write(chunk({}, 'stop', { x_groq: { usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } } }));
    response.end('data: [DONE]\n\n');
  });
  t.teardown(() => fake.close());
  const headers = { 'x-gateway-provider': 'groq', 'x-gateway-custom-host': fake.baseUrl };
  const contents = [{ role: 'user', parts: [{ text: 'Go' }] }];
  const asked = await streamChecked(gateway.url, 'deepseek-r1', { contents, generationConfig: { thinkingConfig: { includeThoughts: true } } }, headers, 'sse');
  t.like(asked.candidates.get(0), { thoughts: 'Think hard.', text: 'Done.', finishReason: 'STOP' });
  const plain = await streamChecked(gateway.url, 'deepseek-r1', { contents }, headers, 'array');
  t.like(plain.candidates.get(0), { thoughts: '', text: 'Done.', finishReason: 'STOP' });
});
