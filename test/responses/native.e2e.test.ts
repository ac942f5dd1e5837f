import test from 'ava';
import OpenAI from 'openai';
import { azureOpenAI } from '../../plugins/providers/azure-openai/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { collectResponsesStream } from '../fakes/responses-grammar.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';

/**
 * OpenAI and Azure OpenAI keep their own Responses API: the request goes up untranslated (the
 * client's bytes when the gateway changed nothing), the answer and events come back as the provider
 * sent them (renumbered), and the gateway still reads usage, logs, stores and judges them.
 */

interface NativeCase {
  readonly id: string;
  readonly headers: (fake: ResponsesFake) => Record<string, string>;
  readonly path: RegExp;
  readonly auth: (headers: Record<string, string | string[] | undefined>) => boolean;
  readonly model: string;
}

const cases: NativeCase[] = [
  { id: 'openai', headers: (fake) => ({ 'x-gateway-custom-host': fake.baseUrl }), path: /^\/v1\/responses$/, auth: (headers) => headers.authorization === `Bearer ${PROVIDER_KEY}`, model: 'gpt-5-mini' },
  {
    id: 'azure-openai',
    headers: (fake) => ({ 'x-gateway-custom-host': `${fake.origin}/openai`, 'x-gateway-cloud-a-deployment-id': 'my-gpt5-deployment' }),
    path: /^\/openai\/responses\?api-version=2025-04-01-preview$/,
    auth: (headers) => headers['api-key'] === PROVIDER_KEY && headers.authorization === undefined,
    model: 'gpt-5-mini',
  },
];

async function setup(native: NativeCase): Promise<{ gateway: TestGateway; fake: ResponsesFake; client: OpenAI; close(): Promise<void> }> {
  const fake = await startResponsesFake();
  const gateway = await startGateway({ providers: [openai(), azureOpenAI()] });
  const client = new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': native.id, ...native.headers(fake) },
  });
  return { gateway, fake, client, close: async () => void (await Promise.all([gateway.close(), fake.close()])) };
}

const weatherTool: OpenAI.Responses.Tool = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

for (const native of cases) {
  test.serial(`${native.id}: responses.create goes up natively, usage is read and logged`, async (t) => {
    const { gateway, fake, client, close } = await setup(native);
    try {
      fake.answer({ kind: 'text', text: 'Native hello' });
      const trace = traceId('native-plain');
      const response = await client.responses.create({ model: native.model, input: 'Hi', instructions: 'Be nice.', reasoning: { effort: 'low' } }, { headers: { 'x-gateway-trace-id': trace } });
      t.is(response.output_text, 'Native hello');
      t.regex(response.id, /^resp_fake/);
      t.deepEqual(response.usage?.input_tokens_details, { cached_tokens: 4 });
      const [request] = fake.requests;
      t.regex(request.url, native.path);
      t.true(native.auth(request.headers));
      const body = request.json();
      t.deepEqual(body.reasoning, { effort: 'low' });
      t.is(body.input, 'Hi');
      t.is(body.model, native.id === 'azure-openai' ? 'my-gpt5-deployment' : native.model);
      const entries = await gateway.waitForEntries(1);
      const entry = entries.find((candidate) => candidate.traceId === trace)!;
      t.is(entry.operation, 'responses');
      t.is(entry.provider, native.id);
      t.deepEqual(entry.usage, { promptTokens: 21, completionTokens: 9, totalTokens: 30, cachedTokens: 4, reasoningTokens: 3 });
    } finally {
      await close();
    }
  });

  test.serial(`${native.id}: a native stream is relayed renumbered, following the grammar`, async (t) => {
    const { gateway, fake, client, close } = await setup(native);
    try {
      fake.answer({ kind: 'text', text: 'A native streamed answer, word by word.', reasoning: 'Thinking it over' });
      const stream = await client.responses.create({ model: native.model, input: 'Stream it', stream: true });
      const result = await collectResponsesStream(stream);
      t.deepEqual(result.problems, []);
      t.is(result.terminal, 'response.completed');
      t.deepEqual([...result.texts.values()], ['A native streamed answer, word by word.']);
      t.deepEqual([...result.summaries.values()], ['Thinking it over']);
      t.true(result.types.includes('response.reasoning_summary_text.delta'));
      t.is(result.response?.usage?.total_tokens, 30);
      const [entry] = await gateway.waitForEntries(1);
      t.is(entry.usage?.totalTokens, 30);
      t.true(entry.streaming);
    } finally {
      await close();
    }
  });

  test.serial(`${native.id}: function call round trip and structured output go up untranslated`, async (t) => {
    const { fake, client, close } = await setup(native);
    try {
      fake.answer({ kind: 'call', name: 'get_weather', arguments: '{"city":"Oslo"}', callId: 'call_native_1' });
      const first = await client.responses.create({ model: native.model, input: 'Weather in Oslo?', tools: [weatherTool] });
      const call = first.output[0];
      t.is(call.type, 'function_call');
      if (call.type !== 'function_call') return;
      t.is(call.call_id, 'call_native_1');
      fake.answer({ kind: 'text', text: '{"answer":"cold"}' });
      const format = { type: 'json_schema' as const, name: 'answer', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false }, strict: true };
      const second = await client.responses.create({
        model: native.model,
        tools: [weatherTool],
        text: { format },
        input: [{ role: 'user', content: 'Weather in Oslo?' }, call, { type: 'function_call_output', call_id: 'call_native_1', output: 'cold' }],
      });
      t.deepEqual(JSON.parse(second.output_text), { answer: 'cold' });
      const body = fake.bodies()[1];
      t.deepEqual(body.text.format, format);
      t.deepEqual(body.input[2], { type: 'function_call_output', call_id: 'call_native_1', output: 'cold' });
    } finally {
      await close();
    }
  });

  test.serial(`${native.id}: built-in tools the provider runs are kept, the others dropped and named in a header`, async (t) => {
    const { gateway, fake, client, close } = await setup(native);
    try {
      fake.answer({ kind: 'text', text: 'Searched.', webSearch: native.id === 'openai' });
      const trace = traceId('native-tools');
      const { data, response } = await client.responses
        .create({ model: native.model, input: 'Search the news', tools: [{ type: 'web_search' }, weatherTool] }, { headers: { 'x-gateway-trace-id': trace } })
        .withResponse();
      const sent = fake.bodies()[0].tools.map((tool: { type: string }) => tool.type);
      if (native.id === 'openai') {
        t.deepEqual(sent, ['web_search', 'function']);
        t.is(response.headers.get('x-gateway-dropped-tools'), null);
        t.is(data.output[0].type, 'web_search_call');
      } else {
        t.deepEqual(sent, ['function']);
        t.is(response.headers.get('x-gateway-dropped-tools'), 'web_search');
        const entries = await gateway.waitForEntries(1);
        t.deepEqual(entries.find((entry) => entry.traceId === trace)?.droppedFields, ['tools[0]']);
      }
      t.is(data.output_text, 'Searched.');
    } finally {
      await close();
    }
  });

  test.serial(`${native.id}: an upstream error keeps its status, mapped to the error shape`, async (t) => {
    const { fake, client, close } = await setup(native);
    try {
      fake.answer({ kind: 'error', status: 400, message: 'Unsupported parameter: top_k' });
      const error = await t.throwsAsync(client.responses.create({ model: native.model, input: 'x' }));
      t.true(error instanceof OpenAI.BadRequestError);
      t.regex((error as Error).message, /Unsupported parameter: top_k/);
    } finally {
      await close();
    }
  });

  test.serial(`${native.id}: an error event mid-stream ends it with response.failed`, async (t) => {
    const { gateway, fake, client, close } = await setup(native);
    try {
      fake.answer({ kind: 'streamError', text: 'Partial', message: 'The server had an error' });
      const stream = await client.responses.create({ model: native.model, input: 'x', stream: true });
      const result = await collectResponsesStream(stream);
      t.deepEqual(result.problems, []);
      t.is(result.terminal, 'response.failed');
      t.is(result.response?.error?.message, 'The server had an error');
      const [entry] = await gateway.waitForEntries(1);
      t.is(entry.outcome, 'stream_error');
    } finally {
      await close();
    }
  });
}
