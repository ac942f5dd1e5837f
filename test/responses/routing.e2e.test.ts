import test from 'ava';
import OpenAI from 'openai';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { collectResponsesStream } from '../fakes/responses-grammar.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';

/**
 * A route's attempts may reach providers that speak the Responses API and providers that do not:
 * each attempt decides, for its own target, whether the request goes up natively or translated.
 */

let native: ResponsesFake;
let claude: RenderedFake;
let gateway: TestGateway;

test.before(async () => {
  native = await startResponsesFake();
  claude = await startRenderedFake(anthropicFakeRenderer);
  const openaiTarget = { name: 'gpt', provider: 'openai', custom_host: '' };
  const claudeTarget = { name: 'claude', provider: 'anthropic', override_params: { model: 'claude-sonnet-4-5' } };
  gateway = await startGateway({
    providers: [openai(), anthropic()],
    routes: {
      'native-first': { strategy: { mode: 'fallback' }, targets: [{ ...openaiTarget, custom_host: native.baseUrl }, { ...claudeTarget, custom_host: claude.baseUrl }] },
      'translated-first': { strategy: { mode: 'fallback' }, targets: [{ ...claudeTarget, custom_host: claude.baseUrl }, { ...openaiTarget, custom_host: native.baseUrl }] },
    },
  });
});
test.after.always(async () => {
  await Promise.all([gateway?.close(), native?.close(), claude?.close()]);
});

const client = (route: string) =>
  new OpenAI({ apiKey: PROVIDER_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-config': route } });

test.serial('OpenAI fails (500), the fallback to Anthropic translates the same request; plain and streamed', async (t) => {
  native.answer({ kind: 'error', status: 500, message: 'boom' });
  claude.answer({ kind: 'text', text: 'Claude took over.', finishReason: 'stop', usage: { promptTokens: 4, completionTokens: 3 } });
  const trace = traceId('responses-route');
  const { data, response } = await client('native-first').responses.create({ model: 'gpt-5-mini', input: 'Hello', tools: [{ type: 'web_search' }] }, { headers: { 'x-gateway-trace-id': trace } }).withResponse();
  t.is(data.output_text, 'Claude took over.');
  t.regex(data.id, /^resp_/);
  t.is(response.headers.get('x-gateway-route-target'), 'claude');
  t.is(response.headers.get('x-gateway-dropped-tools'), 'web_search', 'the answering attempt dropped it');
  t.is(native.bodies().at(-1)!.tools[0].type, 'web_search', 'the native attempt kept it');
  t.is(claude.body(claude.requests.length - 1).model, 'claude-sonnet-4-5');
  const entry = (await gateway.waitForEntries(1)).find((candidate) => candidate.traceId === trace)!;
  t.is(entry.operation, 'responses');
  t.is(entry.provider, 'anthropic');
  t.deepEqual(entry.attempts?.map((attempt) => attempt.target), ['gpt', 'claude']);
  t.deepEqual(entry.droppedFields, ['tools[0]']);

  const stream = await client('native-first').responses.create({ model: 'gpt-5-mini', input: 'Hello', stream: true });
  const result = await collectResponsesStream(stream);
  t.deepEqual(result.problems, []);
  t.deepEqual([...result.texts.values()], ['Claude took over.']);
});

test.serial('Anthropic fails (529), the fallback to OpenAI sends the request natively; streamed', async (t) => {
  claude.answer({ kind: 'error', status: 529, message: 'Overloaded' });
  native.answer({ kind: 'text', text: 'OpenAI took over.' });
  const stream = await client('translated-first').responses.create({ model: 'gpt-5-mini', input: 'Hello', stream: true });
  const result = await collectResponsesStream(stream);
  t.deepEqual(result.problems, []);
  t.deepEqual([...result.texts.values()], ['OpenAI took over.']);
  t.regex(result.response!.id, /^resp_fake/);
  t.is(native.bodies().at(-1)!.input, 'Hello', 'the client body went up as sent');
});
