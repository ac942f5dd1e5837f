import test, { type ExecutionContext } from 'ava';
import { gatewayHeaders, loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { chunked, COMPLETION, responseHead, type RawScript, type RawUpstream, sleep, startRawUpstream, streamEvent } from './raw-upstream.js';

// A client that leaves at any phase is logged once with status 499 (outcome client_closed) at info
// level: never as a 500 `internal_error`, never as an "unexpected error" line. The upstream request
// is cancelled.

const messages = [{ role: 'user' as const, content: 'Hello' }];

let gateway: TestGateway;
const upstreams: RawUpstream[] = [];
test.before(async () => {
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway?.close();
  await Promise.all(upstreams.map((upstream) => upstream.close()));
});

/** A raw upstream running `script`; `closed` resolves when the gateway closed the upstream connection. */
async function upstreamWith(script: RawScript): Promise<{ upstream: RawUpstream; reached: Promise<void>; closed: Promise<void> }> {
  const upstream = await startRawUpstream();
  upstreams.push(upstream);
  let reach!: () => void;
  let close!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const closed = new Promise<void>((resolve) => (close = resolve));
  upstream.handle(async (socket, request) => {
    socket.once('close', close);
    await script(socket, request);
    reach();
  });
  return { upstream, reached, closed };
}

async function assertClientClosed(t: ExecutionContext, trace: string, closed: Promise<void>): Promise<void> {
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, 499);
  t.is(entry.outcome, 'client_closed');
  t.not(entry.error?.code, 'internal_error');
  const line = gateway.lines.find((candidate) => candidate.msg === 'request' && candidate.request.traceId === trace);
  t.is(line?.level, 30, 'logged at info level');
  t.deepEqual(
    gateway.lines.filter((candidate) => candidate.level >= 50 && candidate.traceId === trace),
    [],
    'nothing logged at error level',
  );
  await closed;
  t.pass('the upstream connection was closed');
}

function chat(upstream: RawUpstream, trace: string, signal: AbortSignal, stream = false): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(upstream.baseUrl, { 'content-type': 'application/json', 'x-gateway-trace-id': trace }),
    body: JSON.stringify({ model: 'gpt-4o', messages, stream }),
    signal,
  });
}

test('a client that leaves before the upstream headers is logged as 499 at info level', async (t) => {
  const { upstream, reached, closed } = await upstreamWith(() => {});
  const trace = traceId('abort-before-headers');
  const controller = new AbortController();
  const answer = chat(upstream, trace, controller.signal);
  // The request is upstream (on a loaded host a fixed wait could end before it left the client).
  await reached;
  controller.abort();
  await t.throwsAsync(answer);
  await assertClientClosed(t, trace, closed);
});

test('a client that leaves while the gateway reads a JSON body is logged as 499, not internal_error', async (t) => {
  const { upstream, reached, closed } = await upstreamWith((socket) => {
    socket.write(responseHead(200, { 'content-type': 'application/json', 'content-length': COMPLETION.length }) + COMPLETION.slice(0, 30));
  });
  const trace = traceId('abort-mid-body');
  const controller = new AbortController();
  const answer = chat(upstream, trace, controller.signal);
  await reached;
  await sleep(100);
  controller.abort();
  await t.throwsAsync(answer);
  await assertClientClosed(t, trace, closed);
});

test('a client that leaves in the middle of a stream is logged as 499 and the upstream is cancelled', async (t) => {
  const { upstream, reached, closed } = await upstreamWith((socket) => {
    socket.write(responseHead(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' }) + chunked(streamEvent('Hel')));
  });
  const trace = traceId('abort-mid-stream');
  const controller = new AbortController();
  const response = await chat(upstream, trace, controller.signal, true);
  await reached;
  const reader = response.body!.getReader();
  const first = await reader.read();
  t.regex(new TextDecoder().decode(first.value), /Hel/);
  controller.abort();
  await assertClientClosed(t, trace, closed);
});
