import test from 'ava';
import OpenAI from 'openai';
import type { ConformanceSubject } from '../../core/conformance/index.js';
import { subject as anthropicSubject } from '../../plugins/providers/anthropic/anthropic-conformance.js';
import { bedrockConformance } from '../../plugins/providers/bedrock/bedrock-conformance.js';
import { subject as geminiSubject } from '../../plugins/providers/gemini/gemini-conformance.js';
import { conformance as groqSubject } from '../../plugins/providers/groq/groq-conformance.js';
import { subject as vertexSubject } from '../../plugins/providers/vertex-ai/vertex-ai-conformance.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { collectResponsesStream } from '../fakes/responses-grammar.js';
import { ACCOUNT_KEY, startGateway, type TestGateway, traceId } from '../harness.js';

/**
 * The Responses API on providers without it: the official SDK's `responses.create` (plain and
 * streamed, tools, structured output) through the gateway to each provider's loopback fake, which
 * answers in the provider's own wire format. Every stream passes the Responses grammar validator.
 */

const subjects: Array<[string, ConformanceSubject]> = [
  ['anthropic', anthropicSubject],
  ['gemini', geminiSubject],
  ['vertex-ai', vertexSubject],
  ['bedrock', bedrockConformance],
  ['groq', groqSubject],
];

interface Setup {
  readonly gateway: TestGateway;
  readonly fake: RenderedFake;
  readonly client: OpenAI;
  close(): Promise<void>;
}

async function setup(id: string, subject: ConformanceSubject): Promise<Setup> {
  const fake = await startRenderedFake(subject.fake);
  const gateway = await startGateway({ providers: [subject.registration] });
  const client = new OpenAI({
    apiKey: subject.credential ?? 'test-provider-key',
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': id, 'x-gateway-custom-host': fake.baseUrl, ...subject.headers },
  });
  return { gateway, fake, client, close: async () => Promise.all([gateway.close(), fake.close()]).then(() => undefined) };
}

const usage = { promptTokens: 11, completionTokens: 5 };

for (const [id, subject] of subjects) {
  test.serial(`${id}: responses.create plain, with instructions, usage and the log entry`, async (t) => {
    const { gateway, fake, client, close } = await setup(id, subject);
    try {
      fake.answer({ kind: 'text', text: 'Hello from the fake', finishReason: 'stop', usage });
      const trace = traceId('responses-plain');
      const response = await client.responses.create(
        { model: subject.model, instructions: 'Be brief.', input: 'Say hello', max_output_tokens: 200, temperature: 0.5 },
        { headers: { 'x-gateway-trace-id': trace } },
      );
      t.is(response.object, 'response');
      t.is(response.status, 'completed');
      t.regex(response.id, /^resp_/);
      t.is(response.output_text, 'Hello from the fake');
      t.is(response.output.length, 1);
      t.is(response.output[0].type, 'message');
      t.is(response.usage?.input_tokens, 11);
      t.is(response.usage?.output_tokens, 5);
      t.is(response.usage?.total_tokens, 16);
      t.is(response.usage?.input_tokens_details.cached_tokens, 0);
      t.is(response.usage?.output_tokens_details.reasoning_tokens, 0);
      t.deepEqual(subject.fake.roles(fake.requests[0] as never), ['system', 'user']);
      const entries = await gateway.waitForEntries(1);
      const entry = entries.find((candidate) => candidate.traceId === trace)!;
      t.is(entry.operation, 'responses');
      t.is(entry.provider, id);
      t.is(entry.status, 200);
      t.deepEqual(entry.usage, { promptTokens: 11, completionTokens: 5, totalTokens: 16 });
    } finally {
      await close();
    }
  });

  test.serial(`${id}: responses.create streamed follows the event grammar`, async (t) => {
    const { gateway, fake, client, close } = await setup(id, subject);
    try {
      fake.answer({ kind: 'text', text: 'Streaming words from the fake provider', finishReason: 'stop', usage });
      const stream = await client.responses.create({ model: subject.model, input: [{ role: 'user', content: 'Stream please' }], stream: true });
      const result = await collectResponsesStream(stream);
      t.deepEqual(result.problems, []);
      t.is(result.terminal, 'response.completed');
      t.deepEqual([...result.texts.values()], ['Streaming words from the fake provider']);
      t.is(result.response?.usage?.output_tokens, 5);
      t.is(result.response?.output[0].content[0].text, 'Streaming words from the fake provider');
      const [entry] = await gateway.waitForEntries(1);
      t.is(entry.operation, 'responses');
      t.true(entry.streaming);
      t.is(entry.usage?.totalTokens, 16);
    } finally {
      await close();
    }
  });

  test.serial(`${id}: a function call round trip, plain and streamed`, async (t) => {
    const { fake, client, close } = await setup(id, subject);
    try {
      const tools: OpenAI.Responses.Tool[] = [
        { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false },
      ];
      fake.answer({ kind: 'toolCall', id: 'call_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}', usage });
      const first = await client.responses.create({ model: subject.model, input: 'Weather in Paris?', tools });
      const call = first.output.find((item) => item.type === 'function_call');
      t.truthy(call);
      if (call?.type !== 'function_call') return;
      t.is(call.name, 'get_weather');
      t.deepEqual(JSON.parse(call.arguments), { city: 'Paris' });
      t.is(call.call_id, 'call_weather_1');

      fake.answer({ kind: 'text', text: 'It is sunny in Paris.', finishReason: 'stop', usage });
      const second = await client.responses.create({
        model: subject.model,
        tools,
        input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' }],
      });
      t.is(second.output_text, 'It is sunny in Paris.');
      t.deepEqual(subject.fake.roles(fake.requests[1] as never), ['user', 'assistant', 'tool']);

      fake.answer({ kind: 'toolCall', id: 'call_weather_2', name: 'get_weather', arguments: '{"city":"Rome"}', usage });
      const stream = await client.responses.create({ model: subject.model, input: 'Weather in Rome?', tools, stream: true });
      const result = await collectResponsesStream(stream);
      t.deepEqual(result.problems, []);
      const streamed = result.response?.output.find((item: { type: string }) => item.type === 'function_call');
      t.is(streamed?.name, 'get_weather');
      t.deepEqual(JSON.parse(streamed?.arguments), { city: 'Rome' });
      t.deepEqual([...result.arguments.values()].map((text) => JSON.parse(text)), [{ city: 'Rome' }]);
    } finally {
      await close();
    }
  });
}
