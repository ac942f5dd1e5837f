import test from 'ava';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { bedrock } from '../../plugins/providers/bedrock/index.js';
import { vertexAI } from '../../plugins/providers/vertex-ai/index.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { type MessagesFake, startMessagesFake } from '../fakes/messages-fake.js';
import { loggedOnce, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { anthropicClient, PDF_BASE64, PNG_BASE64, postMessages, weatherTool } from './helpers.js';

/**
 * The Messages API on the providers that take it natively (Anthropic, Claude on Vertex AI, Claude
 * on Bedrock): the request goes up in the Messages shape (no chat round trip), the answer and its
 * events come back as the provider sent them, and the pipeline still judges, logs and prices it.
 */

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [anthropic(), vertexAI(), bedrock()] });
});
test.after.always(() => gateway.close());

interface Native {
  readonly name: string;
  readonly model: string;
  readonly framing: 'sse' | 'bedrock';
  headers(fake: MessagesFake): Record<string, string>;
  /** The path the fake receives for a plain and a streamed request. */
  readonly paths: { readonly plain: string; readonly stream: string; readonly count: string };
  /** What the provider's body holds besides the client's fields (and what it leaves out). */
  upstreamBody(sent: Record<string, unknown>, stream: boolean): Record<string, unknown>;
}

const NATIVE: Native[] = [
  {
    name: 'anthropic',
    model: 'claude-opus-4-7',
    framing: 'sse',
    headers: (fake) => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl }),
    paths: { plain: '/v1/messages', stream: '/v1/messages', count: '/v1/messages/count_tokens' },
    upstreamBody: (sent, stream) => (stream ? { ...sent, stream: true } : sent),
  },
  {
    name: 'vertex-ai',
    model: 'claude-sonnet-4-5@20250929',
    framing: 'sse',
    headers: (fake) => ({ 'x-gateway-provider': 'vertex-ai', 'x-gateway-custom-host': fake.baseUrl, 'x-gateway-cloud-b-project-id': 'acme-prod', 'x-gateway-cloud-b-region': 'us-east5' }),
    paths: {
      plain: '/v1/projects/acme-prod/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
      stream: '/v1/projects/acme-prod/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict',
      count: '/v1/projects/acme-prod/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict',
    },
    upstreamBody: ({ model: _model, ...sent }, stream) => ({ anthropic_version: 'vertex-2023-10-16', ...sent, ...(stream ? { stream: true } : {}) }),
  },
  {
    name: 'bedrock',
    model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    framing: 'bedrock',
    headers: (fake) => ({ 'x-gateway-provider': 'bedrock', 'x-gateway-custom-host': fake.origin, 'x-gateway-cloud-c-region': 'eu-west-1' }),
    paths: {
      plain: `/model/${encodeURIComponent('us.anthropic.claude-sonnet-4-5-20250929-v1:0')}/invoke`,
      stream: `/model/${encodeURIComponent('us.anthropic.claude-sonnet-4-5-20250929-v1:0')}/invoke-with-response-stream`,
      count: `/model/${encodeURIComponent('us.anthropic.claude-sonnet-4-5-20250929-v1:0')}/count-tokens`,
    },
    upstreamBody: ({ model: _model, ...sent }) => ({ anthropic_version: 'bedrock-2023-05-31', ...sent, anthropic_beta: ['interleaved-thinking-2025-05-14'] }),
  },
];

const thinking = { type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' };
const toolUse = { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } };

for (const native of NATIVE) {
  const setup = async () => {
    const fake = await startMessagesFake(native.framing);
    const headers = { ...native.headers(fake), 'anthropic-beta': 'interleaved-thinking-2025-05-14' };
    return { fake, headers, client: anthropicClient(gateway.url, headers) };
  };

  test(`${native.name}: messages.create goes up natively (thinking, tools, images, PDF) and the Message comes back as sent`, async (t) => {
    const { fake, headers, client } = await setup();
    t.teardown(() => fake.close());
    fake.answer({ content: [thinking, { type: 'text', text: 'Let me check.' }, toolUse], stopReason: 'tool_use' });
    const id = traceId(`messages-native-${native.name}`);
    const sent = {
      model: native.model,
      max_tokens: 2048,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      tools: [{ ...weatherTool, cache_control: { type: 'ephemeral' as const } }],
      messages: [
        {
          role: 'user' as const,
          content: [
            { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG_BASE64 } },
            { type: 'document' as const, source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: PDF_BASE64 } },
            { type: 'text' as const, text: 'Weather in Paris?', cache_control: { type: 'ephemeral' as const } },
          ],
        },
      ],
    };
    const message = await client.messages.create(sent, { headers: { ...headers, 'x-gateway-trace-id': id } });
    t.deepEqual(message.content as unknown, [thinking, { type: 'text', text: 'Let me check.' }, toolUse]);
    t.is(message.stop_reason, 'tool_use');
    t.like(message.usage, { input_tokens: 25, output_tokens: 12, cache_creation_input_tokens: 3, cache_read_input_tokens: 7 });

    const received = fake.requests[0];
    t.is(received.url, native.paths.plain);
    t.deepEqual(fake.body(0), native.upstreamBody(sent, false));
    if (native.name === 'anthropic') {
      t.is(received.headers['x-api-key'], PROVIDER_KEY);
      t.is(received.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');
      t.truthy(received.headers['anthropic-version']);
    }
    const entry = await loggedOnce(gateway, id);
    t.like(entry, { operation: 'messages', provider: native.name, status: 200, usage: { promptTokens: 35, completionTokens: 12, totalTokens: 47, cachedTokens: 7 } });
    t.is(entry.droppedFields, undefined, 'nothing is dropped on a native provider');
  });

  test(`${native.name}: messages.stream relays the provider's events; the grammar holds and the deltas add up to the Message`, async (t) => {
    const { fake, headers, client } = await setup();
    t.teardown(() => fake.close());
    const script = { content: [thinking, { type: 'text', text: 'Sunny, 24 degrees.' }], extraEvents: [{ type: 'some_future_event', detail: {} }] };
    fake.answer(script);
    const id = traceId(`messages-native-stream-${native.name}`);
    const stream = client.messages.stream(
      { model: native.model, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Weather?' }] },
      { headers: { ...headers, 'x-gateway-trace-id': id } },
    );
    const thoughts: string[] = [];
    stream.on('thinking', (delta) => thoughts.push(delta));
    const final = await stream.finalMessage();
    t.deepEqual(final.content as unknown, script.content);
    t.is(thoughts.join(''), thinking.thinking);
    t.is(fake.requests[0].url, native.paths.stream);
    const entry = await loggedOnce(gateway, id);
    t.like(entry, { operation: 'messages', streaming: true, outcome: 'ok', usage: { promptTokens: 35, completionTokens: 12, cachedTokens: 7 } });

    const response = await postMessages(gateway.url, { model: native.model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Weather?' }] }, headers);
    const checked = checkMessagesStream(await response.text());
    t.deepEqual(checked.message.content, script.content);
    t.is(checked.message.stop_reason, 'end_turn');
    t.true(checked.events.some((event) => event.event === 'some_future_event'), 'unknown events pass through');
  });

  test(`${native.name}: a tool round trip keeps the signed thinking block in the history`, async (t) => {
    const { fake, client } = await setup();
    t.teardown(() => fake.close());
    fake.answer({ content: [{ type: 'text', text: 'It is sunny.' }] });
    const history = {
      model: native.model,
      max_tokens: 2048,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      tools: [weatherTool],
      messages: [
        { role: 'user' as const, content: 'Weather in Paris?' },
        { role: 'assistant' as const, content: [thinking as { type: 'thinking'; thinking: string; signature: string }, toolUse as { type: 'tool_use'; id: string; name: string; input: unknown }] },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_01', content: 'sunny' }] },
      ],
    };
    const message = await client.messages.create(history);
    t.deepEqual(message.content as unknown, [{ type: 'text', text: 'It is sunny.' }]);
    t.deepEqual(fake.body(0).messages, history.messages);
  });

  test(`${native.name}: count_tokens is counted by the provider`, async (t) => {
    const { fake, client } = await setup();
    t.teardown(() => fake.close());
    const count = await client.messages.countTokens({ model: native.model, messages: [{ role: 'user', content: 'Hello' }] });
    t.is(count.input_tokens, 42);
    t.is(fake.requests[0].url, native.paths.count);
  });

  test(`${native.name}: the provider's error keeps its status and Anthropic's error type`, async (t) => {
    const { fake, headers } = await setup();
    t.teardown(() => fake.close());
    const [status, type, expected] = native.framing === 'bedrock' ? [429, 'ThrottlingException', 'rate_limit_error'] : [529, 'overloaded_error', 'overloaded_error'];
    fake.answer({ error: { status, type, message: 'Too busy' } });
    const response = await postMessages(gateway.url, { model: native.model, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }, headers);
    t.is(response.status, status);
    t.deepEqual(await response.json(), { type: 'error', error: { type: expected, message: 'Too busy' } });
  });
}

test('a Gemini model on Vertex AI is translated, not native', async (t) => {
  const fake = await startMessagesFake('sse');
  t.teardown(() => fake.close());
  const response = await postMessages(
    gateway.url,
    { model: 'gemini-2.5-flash', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] },
    { 'x-gateway-provider': 'vertex-ai', 'x-gateway-custom-host': fake.baseUrl, 'x-gateway-cloud-b-project-id': 'acme-prod', 'x-gateway-cloud-b-region': 'us-east5' },
  );
  await response.arrayBuffer();
  t.regex(fake.requests[0].url, /publishers\/google\/models\/gemini-2\.5-flash:generateContent$/);
  t.deepEqual(fake.body(0).contents, [{ role: 'user', parts: [{ text: 'Hi' }] }]);
});
