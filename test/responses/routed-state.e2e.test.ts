import test from 'ava';
import OpenAI from 'openai';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';

/**
 * Issue 32: a routed attempt maps the request on its own view of the context (the attempt's auth
 * and request). The Responses conversation is kept per request, not per attempt: a routed request
 * with `previous_response_id` still sends the whole conversation to the target, and its answer's
 * id is the one the request was given.
 */

let gateway: TestGateway;
let claude: RenderedFake;

test.before(async () => {
  claude = await startRenderedFake(anthropicFakeRenderer);
  gateway = await startGateway({
    providers: [openai(), anthropic()],
    routes: { claude: { strategy: { mode: 'single' }, targets: [{ name: 'claude', provider: 'anthropic', custom_host: claude.baseUrl, override_params: { model: 'claude-sonnet-4-5' } }] } },
  });
});
test.after.always(async () => {
  await gateway?.close();
  await claude?.close();
});

const usage = { promptTokens: 5, completionTokens: 3 };

test('a routed request with previous_response_id continues the conversation on the route target', async (t) => {
  const client = new OpenAI({ apiKey: PROVIDER_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-config': 'claude' } });
  claude.answer({ kind: 'text', text: 'I am Claude.', finishReason: 'stop', usage });
  const first = await client.responses.create({ model: 'any', input: 'Who are you?' });
  claude.answer({ kind: 'text', text: 'You asked who I am.', finishReason: 'stop', usage });
  const second = await client.responses.create({ model: 'any', input: 'What did I ask?', previous_response_id: first.id });
  t.is(second.previous_response_id, first.id);
  t.deepEqual(claude.body(claude.requests.length - 1).messages, [
    { role: 'user', content: [{ type: 'text', text: 'Who are you?' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'I am Claude.' }] },
    { role: 'user', content: 'What did I ask?' },
  ]);
  // The stored answer is found under the id the client got.
  const stored = await client.responses.retrieve(second.id);
  t.is(stored.id, second.id);
});
