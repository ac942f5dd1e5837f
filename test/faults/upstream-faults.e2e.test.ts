import type { Socket } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import OpenAI from 'openai';
import { gatewayHeaders, loggedOnce, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';
import { chunked, COMPLETION, LAST_CHUNK, responseHead, type RawScript, type RawUpstream, sleep, startRawUpstream, STREAM_END, streamEvent, writable } from './raw-upstream.js';

// Each upstream fault, injected by a loopback fake with byte-level control, must reach the client
// as a specific OpenAI-shaped error and be logged with that status and code: never a 500
// `internal_error`, never an "unexpected error" line.

const messages = [{ role: 'user' as const, content: 'Hello' }];
const STREAM_IDLE_MS = 400;

let gateway: TestGateway;
const upstreams: RawUpstream[] = [];
test.before(async () => {
  gateway = await startGateway({ upstream: { streamIdleTimeoutMs: STREAM_IDLE_MS } });
});
test.after.always(async () => {
  await gateway?.close();
  await Promise.all(upstreams.map((upstream) => upstream.close()));
});

async function upstreamWith(script: RawScript): Promise<RawUpstream> {
  const upstream = await startRawUpstream();
  upstreams.push(upstream);
  upstream.handle(script);
  return upstream;
}

function chat(upstream: RawUpstream, trace: string, options: { stream?: boolean; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(upstream.baseUrl, { 'content-type': 'application/json', 'x-gateway-trace-id': trace, ...options.headers }),
    body: JSON.stringify({ model: 'gpt-4o', messages, ...(options.stream ? { stream: true } : {}) }),
    signal: options.signal,
  });
}

/** The request's one log entry has `status` and error `code`, and nothing was logged at error level. */
async function assertLogged(t: ExecutionContext, trace: string, status: number, code: string | null): Promise<void> {
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, status);
  t.is(entry.error?.code ?? null, code);
  t.not(entry.error?.code, 'internal_error');
  t.deepEqual(
    gateway.lines.filter((line) => line.level >= 50 && line.traceId === trace),
    [],
    'nothing logged at error level',
  );
}

async function assertError(t: ExecutionContext, response: Response, status: number, type: string, code: string): Promise<void> {
  t.is(response.status, status);
  const body = (await response.json()) as { error: { type: string; code: string } };
  t.like(body.error, { type, code });
}

/** The `error` of the stream's last event, after checking the stream has no `[DONE]`. */
function streamError(t: ExecutionContext, text: string): { type: string; code: string } | undefined {
  t.false(text.includes('[DONE]'));
  const events = text.split('\n\n').filter(Boolean);
  return (JSON.parse(events.at(-1)!.replace(/^data: /, '')) as { error?: { type: string; code: string } }).error;
}

const JSON_HEAD = (length: number | string) => responseHead(200, { 'content-type': 'application/json', 'content-length': length });
const SSE_HEAD = responseHead(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' });

test('a connection reset before the headers is 502 upstream_unreachable', async (t) => {
  const upstream = await upstreamWith((socket) => {
    socket.resetAndDestroy();
  });
  const trace = traceId('reset-before-headers');
  const error = await t.throwsAsync(sdkClient(gateway.url, upstream.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o', messages }), {
    instanceOf: OpenAI.APIError,
  });
  t.is(error?.status, 502);
  t.like(error?.error, { type: 'upstream_error', code: 'upstream_unreachable' });
  await assertLogged(t, trace, 502, 'upstream_unreachable');
});

test('a connection reset in the middle of a JSON body is 502 upstream_reset', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(JSON_HEAD(COMPLETION.length) + COMPLETION.slice(0, 20));
    await sleep(50);
    socket.resetAndDestroy();
  });
  const trace = traceId('reset-mid-body');
  const error = await t.throwsAsync(sdkClient(gateway.url, upstream.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o', messages }), {
    instanceOf: OpenAI.APIError,
  });
  t.is(error?.status, 502);
  t.like(error?.error, { type: 'upstream_error', code: 'upstream_reset' });
  await assertLogged(t, trace, 502, 'upstream_reset');
});

test('a body shorter than its Content-Length is 502 upstream_truncated', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(JSON_HEAD(COMPLETION.length + 100) + COMPLETION);
    await sleep(50);
    socket.end();
  });
  const trace = traceId('short-body');
  await assertError(t, await chat(upstream, trace), 502, 'upstream_error', 'upstream_truncated');
  await assertLogged(t, trace, 502, 'upstream_truncated');
});

test('a connection reset in the middle of a stream ends it with an upstream_reset error event', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(SSE_HEAD + chunked(streamEvent('Hel')));
    await sleep(50);
    socket.resetAndDestroy();
  });
  const trace = traceId('reset-mid-stream');
  const stream = await sdkClient(gateway.url, upstream.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o', messages, stream: true });
  const texts: string[] = [];
  const error = await t.throwsAsync(async () => {
    for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? '');
  });
  t.deepEqual(texts, ['Hel']);
  t.regex(error?.message ?? '', /reset the connection/);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, 200);
  t.is(entry.outcome, 'stream_error');
  t.is(entry.error?.code, 'upstream_reset');
  t.deepEqual(gateway.lines.filter((line) => line.level >= 50 && line.traceId === trace), []);
});

test('a chunked stream closed before its end is an upstream_truncated error event', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(SSE_HEAD + chunked(streamEvent('Hel')));
    await sleep(50);
    socket.end();
  });
  const trace = traceId('truncated-stream');
  const response = await chat(upstream, trace, { stream: true });
  t.is(response.status, 200);
  t.like(streamError(t, await response.text()), { type: 'upstream_error', code: 'upstream_truncated' });
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.error?.code, 'upstream_truncated');
});

test('headers that never come are 504 upstream_timeout at the request deadline', async (t) => {
  const upstream = await upstreamWith(() => {});
  const trace = traceId('header-stall');
  const started = performance.now();
  await assertError(t, await chat(upstream, trace, { headers: { 'x-gateway-request-timeout': '300' } }), 504, 'timeout_error', 'upstream_timeout');
  t.true(performance.now() - started < 2000);
  await assertLogged(t, trace, 504, 'upstream_timeout');
});

test('a JSON body that stalls past the idle time-out is 504 upstream_timeout', async (t) => {
  const upstream = await upstreamWith((socket) => {
    socket.write(JSON_HEAD(COMPLETION.length) + COMPLETION.slice(0, 20));
  });
  const trace = traceId('body-stall');
  const started = performance.now();
  await assertError(t, await chat(upstream, trace), 504, 'timeout_error', 'upstream_timeout');
  t.true(performance.now() - started >= STREAM_IDLE_MS - 50);
  await assertLogged(t, trace, 504, 'upstream_timeout');
});

/** Headers after `delayMs`, then one byte of the declared body every 100 ms for at most 3 s. */
const trickle =
  (delayMs: number): RawScript =>
  async (socket: Socket) => {
    await sleep(delayMs);
    socket.write(JSON_HEAD(1000));
    for (let sent = 0; sent < 30 && writable(socket); sent++) {
      socket.write(' ');
      await sleep(100);
    }
    socket.destroy();
  };

test('x-gateway-request-timeout is a total deadline: a trickling answer is cut at ~500 ms, not kept alive by each byte', async (t) => {
  const upstream = await upstreamWith(trickle(300));
  const trace = traceId('trickle');
  const started = performance.now();
  await assertError(t, await chat(upstream, trace, { headers: { 'x-gateway-request-timeout': '500' } }), 504, 'timeout_error', 'upstream_timeout');
  const elapsed = performance.now() - started;
  t.true(elapsed >= 450 && elapsed < 950, `answered after ${Math.round(elapsed)} ms`);
  await assertLogged(t, trace, 504, 'upstream_timeout');
});

test('the deadline covers streams: 300 ms on a stream with 150 ms gaps ends it with an upstream_timeout error event', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(SSE_HEAD);
    for (let index = 0; index < 10 && writable(socket); index++) {
      socket.write(chunked(streamEvent(`part${index} `)));
      await sleep(150);
    }
    if (writable(socket)) socket.end(chunked(STREAM_END) + LAST_CHUNK);
  });
  const trace = traceId('stream-deadline');
  const started = performance.now();
  const response = await chat(upstream, trace, { stream: true, headers: { 'x-gateway-request-timeout': '300' } });
  const text = await response.text();
  // The whole stream takes 1.5 s; the deadline cuts it after its first events (300 ms leaves room for
  // the headers to be sent first on a loaded host, which a 60 ms deadline did not: then it is a plain 504).
  t.true(performance.now() - started < 1400);
  t.like(streamError(t, text), { type: 'timeout_error', code: 'upstream_timeout' });
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.outcome, 'stream_error');
  t.is(entry.error?.code, 'upstream_timeout');
});

test('a stream silent for longer than upstream.streamIdleTimeoutMs ends with an upstream_timeout error event', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(SSE_HEAD + chunked(streamEvent('Hel')));
    await sleep(STREAM_IDLE_MS * 4);
    if (writable(socket)) socket.end(chunked(STREAM_END) + LAST_CHUNK);
  });
  const trace = traceId('stream-idle');
  const stream = await sdkClient(gateway.url, upstream.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o', messages, stream: true });
  const error = await t.throwsAsync(async () => {
    for await (const _chunk of stream) {
      // read to the error
    }
  });
  t.regex(error?.message ?? '', /stopped sending/);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.error?.code, 'upstream_timeout');
});

test('a stream with gaps shorter than the idle time-out and within the deadline completes', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(SSE_HEAD);
    for (let index = 0; index < 4; index++) {
      socket.write(chunked(streamEvent(`part${index} `)));
      await sleep(STREAM_IDLE_MS / 2);
    }
    socket.end(chunked(STREAM_END) + LAST_CHUNK);
  });
  const trace = traceId('stream-gaps');
  const text = await (await chat(upstream, trace, { stream: true, headers: { 'x-gateway-request-timeout': '5000' } })).text();
  t.true(text.endsWith('data: [DONE]\n\n'));
  await assertLogged(t, trace, 200, null);
});

test('an answer declaring more than the default 64 MiB cap is refused with 502 before it is read', async (t) => {
  let closed = false;
  const upstream = await upstreamWith((socket) => {
    socket.once('close', () => (closed = true));
    socket.write(JSON_HEAD(70 * 1024 * 1024) + '{"id":');
  });
  const trace = traceId('declared-huge');
  const started = performance.now();
  await assertError(t, await chat(upstream, trace, { headers: { 'x-gateway-request-timeout': '5000' } }), 502, 'upstream_error', 'upstream_response_too_large');
  t.true(performance.now() - started < 2000);
  await assertLogged(t, trace, 502, 'upstream_response_too_large');
  await sleep(100);
  t.true(closed, 'the upstream connection was closed');
});

test('a body that is not JSON is 502 upstream_invalid_json', async (t) => {
  const upstream = await upstreamWith((socket) => {
    socket.write(JSON_HEAD(9) + 'not json{');
  });
  const trace = traceId('invalid-json');
  await assertError(t, await chat(upstream, trace), 502, 'upstream_error', 'upstream_invalid_json');
  await assertLogged(t, trace, 502, 'upstream_invalid_json');
});

test('a 200 with the wrong content type (HTML) is 502 upstream_invalid_json', async (t) => {
  const html = '<html><body>Gateway page</body></html>';
  const upstream = await upstreamWith((socket) => {
    socket.write(responseHead(200, { 'content-type': 'text/html', 'content-length': html.length }) + html);
  });
  const trace = traceId('wrong-type');
  await assertError(t, await chat(upstream, trace), 502, 'upstream_error', 'upstream_invalid_json');
  await assertLogged(t, trace, 502, 'upstream_invalid_json');
});

test('an upstream error body that resets mid-way is 502 upstream_reset, not a 500', async (t) => {
  const upstream = await upstreamWith(async (socket) => {
    socket.write(responseHead(500, { 'content-type': 'application/json', 'content-length': 200 }) + '{"error":{"message":"bo');
    await sleep(50);
    socket.resetAndDestroy();
  });
  const trace = traceId('error-body-reset');
  await assertError(t, await chat(upstream, trace), 502, 'upstream_error', 'upstream_reset');
  await assertLogged(t, trace, 502, 'upstream_reset');
});

test.serial('a healthy answer still comes back whole and its memory lease is released', async (t) => {
  const upstream = await upstreamWith((socket) => {
    socket.write(JSON_HEAD(COMPLETION.length) + COMPLETION);
  });
  const trace = traceId('healthy');
  const response = await chat(upstream, trace);
  t.is(response.status, 200);
  t.deepEqual(await response.json(), JSON.parse(COMPLETION));
  await assertLogged(t, trace, 200, null);
  t.is(gateway.gateway.memoryBudget.usedBytes, 0);
});
