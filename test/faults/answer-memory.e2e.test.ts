import test from 'ava';
import { gatewayHeaders, loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { chunked, COMPLETION, LAST_CHUNK, responseHead, type RawUpstream, sleep, startRawUpstream, writable } from './raw-upstream.js';

// Answers read whole count against the shared memory budget and a per-answer cap: past the cap
// 502 `upstream_response_too_large`, past the budget 503 `overloaded`; either way the upstream
// body is no longer read and its connection is closed, and every lease is released at the end.

const MiB = 1024 * 1024;
const messages = [{ role: 'user' as const, content: 'Hello' }];
const CHUNKED_JSON = responseHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });

const gateways: TestGateway[] = [];
const upstreams: RawUpstream[] = [];
test.after.always(async () => {
  await Promise.all([...gateways, ...upstreams].map((closable) => closable.close()));
});

async function setup(config: Parameters<typeof startGateway>[0]): Promise<{ gateway: TestGateway; upstream: RawUpstream }> {
  const gateway = await startGateway(config);
  const upstream = await startRawUpstream();
  gateways.push(gateway);
  upstreams.push(upstream);
  return { gateway, upstream };
}

const chat = (gateway: TestGateway, upstream: RawUpstream, trace: string): Promise<Response> =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(upstream.baseUrl, { 'content-type': 'application/json', 'x-gateway-trace-id': trace }),
    body: JSON.stringify({ model: 'gpt-4o', messages }),
  });

/** A valid completion padded to about `size` bytes. */
const padded = (size: number): string => `{"padding":"${'x'.repeat(size)}",${COMPLETION.slice(1)}`;

test('an answer past upstream.maxAnswerBytes is 502 and the upstream stops being read', async (t) => {
  const { gateway, upstream } = await setup({ upstream: { maxAnswerBytes: MiB } });
  let written = 0;
  const done = new Promise<void>((resolve) => {
    upstream.handle(async (socket) => {
      socket.write(CHUNKED_JSON + chunked('{"padding":"'));
      const block = chunked(Buffer.alloc(64 * 1024, 'x'));
      while (writable(socket) && written < 64 * MiB) {
        written += 64 * 1024;
        if (!socket.write(block)) await Promise.race([new Promise((go) => socket.once('drain', go)), new Promise((go) => socket.once('close', go))]);
      }
      resolve();
    });
  });
  const trace = traceId('answer-cap');
  const response = await chat(gateway, upstream, trace);
  t.is(response.status, 502);
  t.like(((await response.json()) as { error: object }).error, { type: 'upstream_error', code: 'upstream_response_too_large' });
  await done;
  t.true(written < 16 * MiB, `the upstream wrote ${written} bytes before its connection was closed`);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, 502);
  t.is(entry.error?.code, 'upstream_response_too_large');
  t.is(gateway.gateway.memoryBudget.usedBytes, 0);
});

test('answers read whole share the memory budget: the one that would pass it is 503 overloaded, the other completes', async (t) => {
  // A 1.5 MiB JSON answer counts 7.5 MiB (five copies): one fits in 10 MiB, two do not.
  const { gateway, upstream } = await setup({ memoryBudgetBytes: 10 * MiB });
  const body = padded(1.5 * MiB);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started = 0;
  let bothStarted!: () => void;
  const twoStarted = new Promise<void>((resolve) => (bothStarted = resolve));
  upstream.handle(async (socket) => {
    socket.write(CHUNKED_JSON + chunked(body.slice(0, -10)));
    if (++started === 2) bothStarted();
    await released;
    if (writable(socket)) socket.write(chunked(body.slice(-10)) + LAST_CHUNK);
  });
  const first = traceId('budget-a');
  const second = traceId('budget-b');
  const answers = [chat(gateway, upstream, first), chat(gateway, upstream, second)];
  await twoStarted;
  // Both bodies are read as far as the fake sent them before the rest is released.
  await sleep(300);
  release();
  const responses = await Promise.all(answers);
  const statuses = responses.map((response) => response.status).sort();
  t.deepEqual(statuses, [200, 503]);
  const refused = responses.find((response) => response.status === 503)!;
  t.is(refused.headers.get('retry-after'), '1');
  t.like(((await refused.json()) as { error: object }).error, { code: 'overloaded' });
  const served = responses.find((response) => response.status === 200)!;
  t.is(((await served.json()) as { id: string }).id, 'chatcmpl-fault');
  const entries = await Promise.all([loggedOnce(gateway, first), loggedOnce(gateway, second)]);
  t.deepEqual(entries.map((entry) => entry.status).sort(), [200, 503]);
  t.is(gateway.gateway.memoryBudget.usedBytes, 0, 'every lease is released once the responses are done');
});
