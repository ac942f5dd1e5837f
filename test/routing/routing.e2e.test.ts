import { createServer } from 'node:net';
import { once } from 'node:events';
import test from 'ava';
import { APIError } from 'openai';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, openAIChatHandler, openAIStreamEvents, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, gatewayClient, loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { createKey } from '../vault/vault-harness.js';

// Two loopback fakes stand for two providers; the routes below point their targets at them with
// custom_host. Every test swaps the fakes' handlers, sends one request through the official SDK
// (maxRetries 0) and checks what each fake saw, what the client got and the log entry's attempts.
let a: Fake;
let b: Fake;
let closedPort: string;
let gateway: TestGateway;

const messages = [{ role: 'user' as const, content: 'hi' }];

function failWith(status: number, headers: Record<string, string> = {}) {
  return (_request: unknown, response: import('node:http').ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ error: { message: `fake ${status}`, type: 'server_error', code: null } }));
  };
}

async function freePortThatRefuses(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as import('node:net').AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

const target = (name: string, fake: Fake | string, model: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider: 'openai',
  custom_host: typeof fake === 'string' ? fake : fake.baseUrl,
  override_params: { model },
  ...extra,
});

test.before(async () => {
  a = await startFake();
  b = await startFake();
  closedPort = await freePortThatRefuses();
  gateway = await startGateway(
    {
      providers: [openai(), anthropic()],
      routing: { breaker: { failures: 1000, minRequests: 1000 } },
      routes: {
        fb: { strategy: { mode: 'fallback' }, targets: [target('a', a, 'model-a'), target('b', b, 'model-b')] },
        retrying: { strategy: { mode: 'fallback' }, retry: { attempts: 2, max_retry_after: 5000 }, targets: [target('a', a, 'model-a'), target('b', b, 'model-b')] },
        refused: { strategy: { mode: 'fallback' }, targets: [target('down', closedPort, 'model-x'), target('b', b, 'model-b')] },
        slow: { strategy: { mode: 'fallback' }, targets: [target('a', a, 'model-a', { request_timeout: 300 }), target('b', b, 'model-b')] },
        cross: {
          strategy: { mode: 'fallback' },
          targets: [target('a', a, 'model-a'), { name: 'claude', provider: 'anthropic', custom_host: b.baseUrl, override_params: { model: 'claude-3-5-haiku-latest', max_tokens: 64 } }],
        },
        fastest: { strategy: { mode: 'loadbalance', policy: 'lowest_latency' }, targets: [target('a', a, 'model-a'), target('b', b, 'model-b')] },
        idlest: { strategy: { mode: 'loadbalance', policy: 'least_busy' }, targets: [target('a', a, 'model-a'), target('b', b, 'model-b')] },
        tiers: {
          strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $in: ['gold', 'platinum'] } }, then: 'a' }], default: 'b' },
          targets: [target('a', a, 'model-a'), target('b', b, 'model-b')],
        },
      },
      models: { fast: { strategy: { mode: 'fallback' }, targets: [target('a', a, 'model-a'), target('b', b, 'model-b')] } },
    },
    {},
  );
});

test.after.always(async () => {
  await gateway?.close();
  await a?.close();
  await b?.close();
});

test.beforeEach(() => {
  a.handle(openAIChatHandler);
  b.handle(openAIChatHandler);
  a.requests.length = 0;
  b.requests.length = 0;
});

/** Sends a chat through the gateway with the route header; returns the raw response and the parsed body. */
async function chat(route: string | undefined, extra: Record<string, string> = {}, body: Record<string, unknown> = { model: 'ignored', messages }) {
  const trace = traceId('route');
  const client = gatewayClient(gateway.url, { ...(route ? { 'x-gateway-config': route } : {}), 'x-gateway-trace-id': trace, ...extra });
  try {
    const { data, response } = await client.chat.completions.create(body as never).withResponse();
    return { status: response.status, headers: response.headers, data: data as any, error: undefined, trace };
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    return { status: error.status ?? 0, headers: error.headers as unknown as Headers, data: undefined, error, trace };
  }
}

const models = (fake: Fake) => fake.requests.map((request) => request.json().model);

test.serial('fallback: a 503 from the first target is answered by the second; the log holds both attempts', async (t) => {
  a.handle(failWith(503));
  const result = await chat('fb');
  t.is(result.status, 200);
  t.is(result.headers.get('x-gateway-route-target'), 'b');
  t.is(result.headers.get('x-gateway-attempts'), '2');
  t.deepEqual(models(a), ['model-a']);
  t.deepEqual(models(b), ['model-b']);
  t.is(b.requests[0].headers.authorization, `Bearer ${PROVIDER_KEY}`);
  const entry = await loggedOnce(gateway, result.trace);
  t.like(entry, { status: 200, route: { name: 'fb', source: 'header' } });
  t.deepEqual(
    entry.attempts?.map(({ target, provider, model, status }) => ({ target, provider, model, status })),
    [
      { target: 'a', provider: 'openai', model: 'model-a', status: 503 },
      { target: 'b', provider: 'openai', model: 'model-b', status: 200 },
    ],
  );
  t.truthy(entry.attempts?.[1].usage);
  // The durable log store keeps them too (the dashboard's detail view reads this record).
  await gateway.gateway.flushLogs();
  const stored = (await (await fetch(`${gateway.url}/admin/logs/${entry.id}`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json()) as any;
  t.like(stored.routing, { route: { name: 'fb', source: 'header' } });
  t.deepEqual(stored.routing.attempts.map((attempt: any) => `${attempt.target}:${attempt.status}`), ['a:503', 'b:200']);
});

test.serial('fallback: a 500 moves on too; a 400 from the first target is the answer (no fallback)', async (t) => {
  a.handle(failWith(500));
  const moved = await chat('fb');
  t.is(moved.status, 200);
  t.is(b.requests.length, 1);
  a.handle(failWith(400));
  const kept = await chat('fb');
  t.is(kept.status, 400);
  t.is(kept.headers.get('x-gateway-attempts'), '1');
  t.is(b.requests.length, 1);
  const entry = await loggedOnce(gateway, kept.trace);
  t.deepEqual(entry.attempts?.map((attempt) => attempt.status), [400]);
});

test.serial('every target failing: the client gets the last answer, with its status and both attempts counted', async (t) => {
  a.handle(failWith(503));
  b.handle(failWith(502));
  const result = await chat('fb');
  t.is(result.status, 502);
  t.is(result.headers.get('x-gateway-attempts'), '2');
  t.is(a.requests.length + b.requests.length, 2);
  const entry = await loggedOnce(gateway, result.trace);
  t.deepEqual(entry.attempts?.map((attempt) => `${attempt.target}:${attempt.status}`), ['a:503', 'b:502']);
});

test.serial('connection refused: the closed port is an attempt with 502 upstream_unreachable, then the second target answers', async (t) => {
  const result = await chat('refused');
  t.is(result.status, 200);
  t.is(result.headers.get('x-gateway-route-target'), 'b');
  t.is(b.requests.length, 1);
  const entry = await loggedOnce(gateway, result.trace);
  t.deepEqual(entry.attempts?.map(({ target, status, errorCode }) => ({ target, status, errorCode })), [
    { target: 'down', status: 502, errorCode: 'upstream_unreachable' },
    { target: 'b', status: 200, errorCode: undefined },
  ]);
});

test.serial('slow headers: the first target past its request_timeout is abandoned and the second answers', async (t) => {
  a.handle(async (request, response) => {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    openAIChatHandler(request, response);
  });
  const started = performance.now();
  const result = await chat('slow');
  t.is(result.status, 200);
  t.true(performance.now() - started < 1500);
  t.is(result.headers.get('x-gateway-route-target'), 'b');
  const entry = await loggedOnce(gateway, result.trace);
  t.deepEqual(entry.attempts?.map(({ target, status, errorCode }) => ({ target, status, errorCode })), [
    { target: 'a', status: 504, errorCode: 'upstream_timeout' },
    { target: 'b', status: 200, errorCode: undefined },
  ]);
});

test.serial('429 with Retry-After: the same target is retried after the asked wait, then answers', async (t) => {
  let calls = 0;
  a.handle((request, response) => {
    calls++;
    if (calls === 1) return failWith(429, { 'retry-after': '1' })(request, response);
    return openAIChatHandler(request, response);
  });
  const started = performance.now();
  const result = await chat('retrying');
  const elapsed = performance.now() - started;
  t.is(result.status, 200);
  t.is(result.headers.get('x-gateway-route-target'), 'a');
  t.is(result.headers.get('x-gateway-attempts'), '2');
  t.true(elapsed >= 950, `waited ${elapsed} ms`);
  t.is(b.requests.length, 0);
  const entry = await loggedOnce(gateway, result.trace);
  t.deepEqual(entry.attempts?.map((attempt) => `${attempt.target}:${attempt.status}`), ['a:429', 'a:200']);
});

test.serial('429 with a Retry-After past max_retry_after: no wait, the next target answers at once', async (t) => {
  a.handle(failWith(429, { 'retry-after': '60' }));
  const started = performance.now();
  const result = await chat('retrying');
  t.is(result.status, 200);
  t.true(performance.now() - started < 1000);
  t.is(a.requests.length, 1);
  t.is(b.requests.length, 1);
});

test.serial('streams: a failure before the first byte falls back; the client gets one whole stream', async (t) => {
  a.handle((_request, response) => {
    response.socket?.destroy();
  });
  const client = gatewayClient(gateway.url, { 'x-gateway-config': 'fb' });
  const stream = await client.chat.completions.create({ model: 'x', messages, stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  t.true(text.length > 0);
  t.is(a.requests.length, 1);
  t.is(b.requests.length, 1);
  t.is(b.requests[0].json().model, 'model-b');
});

test.serial('streams: an error event as the first event falls back; the log has the 502 attempt', async (t) => {
  a.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end('data: {"error":{"message":"overloaded","type":"server_error","code":null}}\n\n');
  });
  const trace = traceId('route-first-event');
  const client = gatewayClient(gateway.url, { 'x-gateway-config': 'fb', 'x-gateway-trace-id': trace });
  const stream = await client.chat.completions.create({ model: 'x', messages, stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  t.true(text.length > 0);
  t.is(a.requests.length, 1);
  t.is(b.requests.length, 1);
  const entry = await loggedOnce(gateway, trace);
  t.deepEqual(entry.attempts?.map(({ target, status, errorCode }) => ({ target, status, errorCode })), [
    { target: 'a', status: 502, errorCode: 'upstream_stream_error' },
    { target: 'b', status: 200, errorCode: undefined },
  ]);
});

test.serial('streams: a reset between the headers and the first event falls back too', async (t) => {
  a.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
    setTimeout(() => response.socket?.destroy(), 30);
  });
  const client = gatewayClient(gateway.url, { 'x-gateway-config': 'fb' });
  const stream = await client.chat.completions.create({ model: 'x', messages, stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  t.true(text.length > 0);
  t.is(b.requests.length, 1);
});

test.serial('streams: a failure after the first chunk ends the stream with an error event, no second target', async (t) => {
  a.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(openAIStreamEvents()[0]);
    setTimeout(() => response.socket?.destroy(), 50);
  });
  const trace = traceId('route-stream');
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-config': 'fb', 'x-gateway-trace-id': trace },
    body: JSON.stringify({ model: 'x', messages, stream: true }),
  });
  t.is(response.status, 200);
  t.is(response.headers.get('x-gateway-route-target'), 'a');
  const text = await response.text();
  t.true(text.includes('"error"'), text);
  t.is(b.requests.length, 0);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.outcome, 'stream_error');
  t.deepEqual(entry.attempts?.map((attempt) => `${attempt.target}:${attempt.status}`), ['a:200']);
});

test.serial("fallback across providers: the second target's provider maps the request and its answer", async (t) => {
  a.handle(failWith(503));
  b.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-3-5-haiku-latest', content: [{ type: 'text', text: 'from claude' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 2 } }),
    );
  });
  const result = await chat('cross');
  t.is(result.status, 200);
  t.is(result.data.choices[0].message.content, 'from claude');
  t.is(result.headers.get('x-gateway-provider'), 'anthropic');
  t.is(result.headers.get('x-gateway-route-target'), 'claude');
  t.is(b.requests[0].url, '/v1/messages');
  t.is(b.requests[0].headers['x-api-key'], PROVIDER_KEY);
  t.like(b.requests[0].json(), { model: 'claude-3-5-haiku-latest', max_tokens: 64 });
  const entry = await loggedOnce(gateway, result.trace);
  t.is(entry.provider, 'anthropic');
  t.deepEqual(entry.attempts?.map((attempt) => `${attempt.provider}:${attempt.status}`), ['openai:503', 'anthropic:200']);
});

const delayed = (ms: number) => async (request: import('../fakes/openai-fake.js').RecordedRequest, response: import('node:http').ServerResponse) => {
  await new Promise((resolve) => setTimeout(resolve, ms));
  openAIChatHandler(request, response);
};

test.serial('loadbalance lowest_latency: once both are measured, the faster target gets the requests', async (t) => {
  a.handle(delayed(150));
  b.handle(delayed(5));
  for (let index = 0; index < 2; index++) t.is((await chat('fastest')).status, 200);
  t.is(a.requests.length, 1, 'each target measured once');
  t.is(b.requests.length, 1);
  for (let index = 0; index < 5; index++) t.is((await chat('fastest')).headers.get('x-gateway-route-target'), 'b');
  t.is(a.requests.length, 1);
});

test.serial('loadbalance least_busy: while the first target holds a slow answer, the next request goes to the other', async (t) => {
  a.handle(delayed(400));
  b.handle(delayed(400));
  const first = chat('idlest');
  await new Promise((resolve) => setTimeout(resolve, 100));
  const second = chat('idlest');
  const targets = [(await first).headers.get('x-gateway-route-target'), (await second).headers.get('x-gateway-route-target')];
  t.deepEqual(targets.sort(), ['a', 'b']);
});

test.serial('conditional: metadata picks the target; other requests take the default', async (t) => {
  const gold = await chat('tiers', { 'x-gateway-metadata': JSON.stringify({ tier: 'gold' }) });
  t.is(gold.headers.get('x-gateway-route-target'), 'a');
  const free = await chat('tiers', { 'x-gateway-metadata': JSON.stringify({ tier: 'free' }) });
  t.is(free.headers.get('x-gateway-route-target'), 'b');
  t.deepEqual(models(a), ['model-a']);
  t.deepEqual(models(b), ['model-b']);
});

test.serial('a model alias takes its route; the provider prefix picks the provider and strips the prefix', async (t) => {
  a.handle(failWith(503));
  const alias = await chat(undefined, {}, { model: 'fast', messages });
  t.is(alias.status, 200);
  t.is(alias.headers.get('x-gateway-route-target'), 'b');
  const entry = await loggedOnce(gateway, alias.trace);
  t.like(entry.route, { name: 'fast', source: 'alias' });

  const client = gatewayClient(gateway.url, { 'x-gateway-custom-host': b.baseUrl });
  const prefixed = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).withResponse();
  t.is(prefixed.response.status, 200);
  t.is(prefixed.response.headers.get('x-gateway-provider'), 'openai');
  t.is(b.requests.at(-1)?.json().model, 'gpt-4o-mini');
  t.is(prefixed.response.headers.get('x-gateway-attempts'), null);
});

test.serial('an invalid inline route is 400 naming the field, before anything goes upstream', async (t) => {
  const inline = JSON.stringify({ strategy: { mode: 'loadbalance' }, targets: [target('a', a, 'm'), { ...target('b', b, 'm'), weight: -1 }] });
  const result = await chat(inline);
  t.is(result.status, 400);
  t.like(result.error?.error, { param: 'config.targets[1].weight', code: 'invalid_route' });
  t.is(a.requests.length + b.requests.length, 0);
});

test.serial('an unknown route name, or a target naming an unknown provider, is 400 with param', async (t) => {
  const unknown = await chat('nope');
  t.is(unknown.status, 400);
  t.like(unknown.error?.error, { param: 'x-gateway-config', code: 'unknown_route' });
  const inline = JSON.stringify({ targets: [{ provider: 'nosuch', custom_host: a.baseUrl }] });
  const provider = await chat(inline);
  t.is(provider.status, 400);
  t.like(provider.error?.error, { param: 'config.targets[0].provider', code: 'unknown_provider' });
  t.is(a.requests.length, 0);
});

test.serial('a valid inline route works for the account key; a virtual-key caller gets 403 inline_route_forbidden', async (t) => {
  const inline = JSON.stringify({ targets: [target('only', b, 'model-inline')] });
  const ok = await chat(inline);
  t.is(ok.status, 200);
  t.is(b.requests[0].json().model, 'model-inline');
  const { key } = await createKey(t, gateway, { name: 'routing-vk', provider: 'openai', provider_key: 'sk-routing-vk-credential-0123456789', custom_host: b.baseUrl });
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-config': inline },
    body: JSON.stringify({ model: 'x', messages }),
  });
  t.is(response.status, 403);
  t.like(((await response.json()) as any).error, { code: 'inline_route_forbidden', param: 'x-gateway-config' });
  t.is(b.requests.length, 1);
});

test.serial('/metrics counts attempts, fallbacks and retries per target', async (t) => {
  a.handle(failWith(503));
  await chat('fb');
  const text = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  t.regex(text, /gateway_route_attempts_total\{target="a",provider="openai",status="503"\} \d+/);
  t.regex(text, /gateway_route_fallbacks_total\{target="b"\} \d+/);
  t.regex(text, /gateway_route_retries_total\{target="a"\} \d+/);
});
