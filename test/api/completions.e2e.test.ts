import test from 'ava';
import { openAICompletionStreamEvents, openAIFixture, openAIHandler } from '../fakes/openai-fake.js';
import { gatewayHeaders, loggedOnce } from '../harness.js';
import { type ApiSetup, startApi } from './api-setup.js';

let api: ApiSetup;

test.before(async () => {
  api = await startApi((request, response) => {
    const scenario = request.headers['x-scenario'];
    if (scenario === 'extras') {
      const body = { ...JSON.parse(openAIFixture('completion.json')), provider_extra: { a: 1 } };
      body.choices[0].content_filter_results = { hate: 'safe' };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (scenario === 'json-for-stream') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(openAIFixture('completion.json'));
      return;
    }
    return openAIHandler(request, response);
  });
});

test.after.always(async () => {
  await api?.close();
});

const fixture = () => JSON.parse(openAIFixture('completion.json'));

test('a plain completion goes up as sent and comes back as the provider answered, with usage logged', async (t) => {
  const { client, trace } = api.client('cmpl-plain');
  const params = { model: 'gpt-3.5-turbo-instruct', prompt: ['Say this is a test', 'and this'], max_tokens: 7, temperature: 0, best_of: 3, n: 2, logprobs: 5, stop: ['\n', 'END'], echo: false, suffix: 'x', seed: 42, user: 'u-1' };
  const completion = await client.completions.create(params);
  t.deepEqual(completion, fixture());
  t.deepEqual(api.received(trace).json(), params);
  t.is(api.received(trace).url, '/v1/completions');
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'completion', status: 200, outcome: 'ok', model: 'gpt-3.5-turbo-instruct', streaming: false });
  t.deepEqual(entry.usage, { promptTokens: 5, completionTokens: 7, totalTokens: 12 });
});

test('a prompt of token ids and of token-id arrays is accepted and forwarded intact', async (t) => {
  for (const prompt of [[1212, 318, 257, 1332], [[1212, 318], [257, 1332]]]) {
    const { client, trace } = api.client('cmpl-tokens');
    await client.completions.create({ model: 'davinci-002', prompt });
    t.deepEqual(api.received(trace).json().prompt, prompt);
  }
});

test('a streamed completion with include_usage: every chunk text_completion with usage null, one usage chunk last with no choices', async (t) => {
  const { client, trace } = api.client('cmpl-stream-usage');
  const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', stream: true, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.is(chunks.length, 5);
  const usageChunk = chunks.at(-1)!;
  t.deepEqual(usageChunk.choices, []);
  t.deepEqual(usageChunk.usage, { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
  for (const chunk of chunks) t.is(chunk.object, 'text_completion');
  for (const chunk of chunks.slice(0, -1)) {
    t.is(chunk.usage as unknown, null);
    t.is(chunk.choices.length, 1);
  }
  t.is(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join(''), 'This is a test.');
  t.is(chunks.at(-2)!.choices[0].finish_reason, 'stop');
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'completion', streaming: true, outcome: 'ok' });
  t.deepEqual(entry.usage, { promptTokens: 4, completionTokens: 4, totalTokens: 8 });
  t.is(typeof entry.timeToFirstTokenMs, 'number');
});

test('a streamed completion without include_usage: no usage chunk reaches the client, usage is still logged', async (t) => {
  const trace = `cmpl-raw-${process.pid}`;
  const response = await fetch(`${api.gateway.url}/v1/completions`, {
    method: 'POST',
    headers: { ...gatewayHeaders(api.fake.baseUrl), 'content-type': 'application/json', 'x-gateway-trace-id': trace, 'x-test-trace': trace, 'x-gateway-forward-headers': 'x-test-trace' },
    body: JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi', stream: true }),
  });
  t.regex(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = (await response.text()).split('\n\n').filter(Boolean);
  t.is(events.at(-1), 'data: [DONE]');
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
  t.is(chunks.length, openAICompletionStreamEvents().length - 2);
  for (const chunk of chunks) {
    t.is(chunk.usage, null);
    t.is(chunk.choices.length, 1);
  }
  t.deepEqual(api.received(trace).json().stream_options, { include_usage: true }, 'the gateway asks the provider for usage');
  const entry = await loggedOnce(api.gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 4, completionTokens: 4, totalTokens: 8 });
});

test('an upstream that answers a streamed completion with JSON still gives the client a stream', async (t) => {
  const { client } = api.client('cmpl-json-stream', { 'x-scenario': 'json-for-stream' });
  const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi', stream: true, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.is(chunks.length, 2);
  t.is(chunks[0].choices[0].text, fixture().choices[0].text);
  t.is(chunks[0].usage as unknown, null);
  t.deepEqual(chunks[1].choices, []);
  t.deepEqual(chunks[1].usage, fixture().usage);
});

test('strict compliance (default) strips fields outside the text completion schema; false keeps them', async (t) => {
  const strict = await api.client('cmpl-strict', { 'x-scenario': 'extras' }).client.completions.create({ model: 'm', prompt: 'hi' });
  t.deepEqual(strict, fixture());
  const loose = await api.client('cmpl-loose', { 'x-scenario': 'extras', 'x-gateway-strict-api-compliance': 'false' }).client.completions.create({ model: 'm', prompt: 'hi' });
  t.deepEqual((loose as any).provider_extra, { a: 1 });
  t.deepEqual((loose.choices[0] as any).content_filter_results, { hate: 'safe' });
});
