import test from 'ava';
import OpenAI from 'openai';
import { type Fake, openAIChatHandler, openAIFixture, openAIStreamEvents, startFake } from './fakes/openai-fake.js';
import { gatewayHeaders, loggedOnce, PROVIDER_KEY, SECRETS, sdkClient, startGateway, type TestGateway, traceId } from './harness.js';

let fake: Fake;
let gateway: TestGateway;
/** Held upstream answers are released when the file's tests are over. */
let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});

test.before(async () => {
  fake = await startFake((request, response) => {
    const scenario = request.headers['x-scenario'];
    if (scenario === 'rate-limited') {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      response.end(openAIFixture('error-429.json'));
    } else if (scenario === 'server-error') {
      response.writeHead(500, { 'content-type': 'text/html' });
      response.end('<html><body>Internal Server Error</body></html>');
    } else if (scenario === 'slow') {
      // Answers only when the file's tests are over: any answer the client gets first is the gateway's.
      void held.then(() => response.writeHead(200, { 'content-type': 'application/json' }).end(openAIFixture('chat-completion.json')));
    } else if (scenario === 'extras') {
      const body = JSON.parse(openAIFixture('chat-completion.json'));
      body.x_provider_extra = { queue_ms: 3 };
      body.choices[0].message.content_blocks = [{ type: 'thinking', text: 'hmm' }];
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    } else if (scenario === 'done-then-linger') {
      // [DONE] arrives, but the body ends only when the file's tests are over.
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of openAIStreamEvents()) response.write(event);
      void held.then(() => response.end());
    } else if (scenario === 'json-for-stream') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(openAIFixture('chat-completion.json'));
    } else if (scenario === 'stream-cut') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n');
      setTimeout(() => response.destroy(), 50);
    } else if (scenario === 'stream-error') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n');
      response.end('data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n');
    } else {
      return openAIChatHandler(request, response);
    }
  });
  gateway = await startGateway();
});

test.after.always(async () => {
  release();
  await gateway?.close();
  await fake?.close();
});

const messages = [{ role: 'user' as const, content: 'Hello' }];

test('without x-gateway-trace-id the gateway generates a time-ordered UUIDv7 trace id, echoed and logged', async (t) => {
  const client = sdkClient(gateway.url, fake.baseUrl);
  const traces: string[] = [];
  for (let round = 0; round < 2; round += 1) {
    const { response } = await client.chat.completions.create({ model: 'gpt-4.1', messages }).withResponse();
    traces.push(response.headers.get('x-gateway-trace-id') ?? '');
    // The second request starts at least a millisecond later, so its id sorts after the first.
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  for (const trace of traces) t.regex(trace, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.true(traces[0] < traces[1], 'ids sort by time: the log trace index grows at its end');
  t.is((await loggedOnce(gateway, traces[1])).traceId, traces[1]);
});

test('plain chat through the SDK returns the provider answer, with usage logged', async (t) => {
  const trace = traceId('plain');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-metadata': '{"team":"search"}' });
  const { data: completion, response } = await client.chat.completions.create({ model: 'gpt-4.1', messages }).withResponse();
  t.is(completion.choices[0].message.content, 'Hello! How can I assist you today?');
  t.is(completion.usage?.total_tokens, 29);
  t.is(response.headers.get('x-gateway-trace-id'), trace);
  t.is(response.headers.get('x-gateway-provider'), 'openai');
  t.regex(response.headers.get('server-timing') ?? '', /^gateway;dur=\d+\.\d+, upstream;dur=\d+\.\d+$/);

  const received = fake.requests.find((request) => request.headers['x-gateway-trace-id'] === undefined && request.json().model === 'gpt-4.1');
  t.truthy(received);
  t.is(received?.url, '/v1/chat/completions');
  t.is(received?.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  t.is(received?.headers['x-gateway-api-key'], undefined, 'the gateway key never reaches the provider');

  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { status: 200, outcome: 'ok', operation: 'chat', provider: 'openai', model: 'gpt-4.1-2025-04-14', streaming: false });
  t.deepEqual(entry.usage, { promptTokens: 19, completionTokens: 10, totalTokens: 29 });
  t.deepEqual(entry.metadata, { team: 'search' });
  t.true(entry.upstreamMs !== undefined && entry.gatewayMs >= 0);
});

test('streamed chat with include_usage: every delta, one usage chunk with no choices, usage null elsewhere', async (t) => {
  const trace = traceId('stream-usage');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace });
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  t.is(text, 'Hello! How can I help?');
  const usageChunks = chunks.filter((chunk) => chunk.usage);
  t.is(usageChunks.length, 1);
  t.deepEqual(usageChunks[0].choices, []);
  t.is(usageChunks[0].usage?.total_tokens, 15);
  t.is(chunks.at(-1), usageChunks[0], 'the usage chunk is the last one');
  for (const chunk of chunks.slice(0, -1)) t.is(chunk.usage, null);
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { status: 200, outcome: 'ok', streaming: true });
  t.deepEqual(entry.usage, { promptTokens: 9, completionTokens: 6, totalTokens: 15 });
  t.true((entry.timeToFirstTokenMs ?? -1) >= 0);
});

test('streamed chat without include_usage: no usage chunk reaches the client, but usage is still logged', async (t) => {
  const trace = traceId('stream-plain');
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, {
      'content-type': 'application/json',
      'x-gateway-trace-id': trace,
      'x-test-id': trace,
      'x-gateway-forward-headers': 'x-test-id',
    }),
    body: JSON.stringify({ model: 'gpt-4o-mini', messages, stream: true }),
  });
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const text = await response.text();
  const events = text.split('\n\n').filter(Boolean);
  t.is(events.at(-1), 'data: [DONE]');
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
  t.is(chunks.length, 5);
  for (const chunk of chunks) {
    t.is(chunk.usage, null);
    t.true(chunk.choices.length > 0);
  }
  const upstreamBody = fake.requests.find((request) => request.headers['x-test-id'] === trace)?.json();
  t.deepEqual(upstreamBody.stream_options, { include_usage: true }, 'the gateway asks the provider for usage');
  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 9, completionTokens: 6, totalTokens: 15 });
});

test('after [DONE] the client is answered at once and the upstream connection is kept for reuse', async (t) => {
  const trace = traceId('linger');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-scenario': 'done-then-linger', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace });
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.is(text, 'Hello! How can I help?');
  // The upstream body is still open (it ends only after the file's tests): finishing proves the client did not wait for it.
  const upstream = fake.requests.find((request) => request.headers['x-scenario'] === 'done-then-linger');
  const closed = await Promise.race([upstream!.closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 800))]);
  t.false(closed, 'the upstream connection was torn down instead of being returned to the pool');
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { status: 200, outcome: 'ok' });
});

test('an upstream that answers a streamed request with one JSON completion still gives the client a stream', async (t) => {
  const trace = traceId('json-for-stream');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-scenario': 'json-for-stream', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace });
  const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages, stream: true, stream_options: { include_usage: true } });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello! How can I assist you today?');
  t.is(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason, 'stop');
  t.deepEqual(chunks.at(-1)?.choices, []);
  t.is(chunks.at(-1)?.usage?.total_tokens, 29);
  for (const chunk of chunks.slice(0, -1)) t.is(chunk.usage, null);
  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.usage, { promptTokens: 19, completionTokens: 10, totalTokens: 29 });
});

test('upstream 429 keeps its status, Retry-After and an OpenAI-shaped body', async (t) => {
  const trace = traceId('429');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-scenario': 'rate-limited', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace });
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'gpt-4o', messages }), { instanceOf: OpenAI.RateLimitError });
  t.is(error?.status, 429);
  t.is(error?.code, 'rate_limit_exceeded');
  t.is(error?.headers?.get('retry-after'), '7');
  t.regex(error?.message ?? '', /Rate limit reached/);
  t.is((error?.error as { provider?: string })?.provider, 'openai');
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { status: 429, outcome: 'error', error: { type: 'tokens', code: 'rate_limit_exceeded' } });
});

test('upstream 500 with an HTML body comes back as 500 with an OpenAI-shaped body', async (t) => {
  const trace = traceId('500');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-scenario': 'server-error', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace });
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'gpt-4o', messages }), { instanceOf: OpenAI.InternalServerError });
  t.is(error?.status, 500);
  t.like(error?.error, { type: 'api_error', provider: 'openai', param: null });
  t.regex(error?.message ?? '', /HTTP 500: <html>/);
  await loggedOnce(gateway, trace);
});

test('a refused connection gives 502', async (t) => {
  const trace = traceId('502');
  const client = sdkClient(gateway.url, 'http://127.0.0.1:1/v1', { 'x-gateway-trace-id': trace });
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'gpt-4o', messages }), { instanceOf: OpenAI.APIError });
  t.is(error?.status, 502);
  t.like(error?.error, { type: 'upstream_error', code: 'upstream_unreachable' });
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, 502);
});

test('a slow upstream past the time-out gives 504', async (t) => {
  const trace = traceId('504');
  const client = sdkClient(gateway.url, fake.baseUrl, {
    'x-scenario': 'slow',
    'x-gateway-forward-headers': 'x-scenario',
    'x-gateway-request-timeout': '300',
    'x-gateway-trace-id': trace,
  });
  // The fake answers only after the file's tests, so any answer is the gateway's own time-out.
  const error = await t.throwsAsync(client.chat.completions.create({ model: 'gpt-4o', messages }), { instanceOf: OpenAI.APIError });
  t.is(error?.status, 504);
  t.like(error?.error, { type: 'timeout_error', code: 'upstream_timeout' });
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, 504);
});

test('the configured upstream time-out applies without the header', async (t) => {
  const slowGateway = await startGateway({ upstream: { timeoutMs: 200 } });
  try {
    const client = sdkClient(slowGateway.url, fake.baseUrl, { 'x-scenario': 'slow', 'x-gateway-forward-headers': 'x-scenario' });
    const error = await t.throwsAsync(client.chat.completions.create({ model: 'gpt-4o', messages }), { instanceOf: OpenAI.APIError });
    t.is(error?.status, 504);
  } finally {
    await slowGateway.close();
  }
});

test('a 64-bit seed reaches the provider exactly as the client wrote it', async (t) => {
  const marker = traceId('seed');
  const body = `{"model":"gpt-4o","messages":[{"role":"user","content":"${marker}"}],"seed":9223372036854775807}`;
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json' }),
    body,
  });
  t.is(response.status, 200);
  const received = fake.requests.find((request) => request.body.toString().includes(marker));
  t.is(received?.body.toString(), body);
});

test('strict compliance (default) strips fields outside the OpenAI schema; false keeps them', async (t) => {
  const strictClient = sdkClient(gateway.url, fake.baseUrl, { 'x-scenario': 'extras', 'x-gateway-forward-headers': 'x-scenario' });
  const strict = (await strictClient.chat.completions.create({ model: 'gpt-4o', messages })) as unknown as Record<string, any>;
  t.is(strict.x_provider_extra, undefined);
  t.is(strict.choices[0].message.content_blocks, undefined);
  t.is(strict.service_tier, 'default', 'OpenAI schema fields stay');
  t.is(strict.usage.prompt_tokens_details.cached_tokens, 0);

  const looseClient = sdkClient(gateway.url, fake.baseUrl, {
    'x-scenario': 'extras',
    'x-gateway-forward-headers': 'x-scenario',
    'x-gateway-strict-api-compliance': 'false',
  });
  const loose = (await looseClient.chat.completions.create({ model: 'gpt-4o', messages })) as unknown as Record<string, any>;
  t.deepEqual(loose.x_provider_extra, { queue_ms: 3 });
  t.deepEqual(loose.choices[0].message.content_blocks, [{ type: 'thinking', text: 'hmm' }]);
});

test('thinking is refused under strict compliance with a message saying how to enable it', async (t) => {
  const client = sdkClient(gateway.url, fake.baseUrl);
  const error = await t.throwsAsync(
    client.chat.completions.create({ model: 'thinking-model', messages, thinking: { type: 'enabled', budget_tokens: 1024 } } as never),
    { instanceOf: OpenAI.BadRequestError },
  );
  t.is(error?.param, 'thinking');
  t.regex(error?.message ?? '', /x-gateway-strict-api-compliance: false/);
  t.false(fake.requests.some((request) => request.json().model === 'thinking-model'), 'nothing was sent upstream');
});

test('a stream the upstream cuts short ends with an error event the SDK raises', async (t) => {
  const trace = traceId('stream-cut');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-scenario': 'stream-cut', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace });
  const stream = await client.chat.completions.create({ model: 'gpt-4o', messages, stream: true });
  const received: string[] = [];
  const error = await t.throwsAsync(async () => {
    for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
  });
  t.deepEqual(received, ['Hel']);
  t.truthy(error);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.outcome, 'stream_error');
});

test('an error event inside the upstream stream reaches the SDK as an APIError', async (t) => {
  const trace = traceId('stream-error');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-scenario': 'stream-error', 'x-gateway-forward-headers': 'x-scenario', 'x-gateway-trace-id': trace });
  const stream = await client.chat.completions.create({ model: 'gpt-4o', messages, stream: true });
  const error = await t.throwsAsync(async () => {
    for await (const _chunk of stream) {
      // drain
    }
  });
  t.regex(error?.message ?? '', /error while processing/);
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { outcome: 'stream_error', error: { type: 'server_error' } });
});

test('bad gateway headers are refused with the header named as param', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ 'x-gateway-metadata': 'not json' }, 'x-gateway-metadata'],
    [{ 'x-gateway-metadata': '{"n":1}' }, 'x-gateway-metadata'],
    [{ 'x-gateway-metadata': JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`k${index}`, 'v']))) }, 'x-gateway-metadata'],
    [{ 'x-gateway-trace-id': 'has spaces' }, 'x-gateway-trace-id'],
    [{ 'x-gateway-strict-api-compliance': 'maybe' }, 'x-gateway-strict-api-compliance'],
    [{ 'x-gateway-request-timeout': '0' }, 'x-gateway-request-timeout'],
  ];
  for (const [headers, param] of cases) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json', ...headers }),
      body: JSON.stringify({ model: 'gpt-4o', messages }),
    });
    t.is(response.status, 400, param);
    t.is(((await response.json()) as { error: { param: string } }).error.param, param);
  }
  const metadata64 = JSON.stringify(Object.fromEntries(Array.from({ length: 64 }, (_, index) => [`k${index}`, 'v'])));
  const accepted = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json', 'x-gateway-metadata': metadata64 }),
    body: JSON.stringify({ model: 'gpt-4o', messages }),
  });
  t.is(accepted.status, 200);
});

test.after('no log line of this file contains a secret', (t) => {
  const log = gateway.rawLog();
  t.true(log.length > 0);
  for (const secret of SECRETS) t.false(log.includes(secret), 'a secret leaked into the log');
});
