import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway, traceId } from './harness.js';
import { privateUploads } from './api/uploads.js';

// Issue items 3 and 13: nothing of an unauthenticated request's body is read, spooled or logged;
// bodies held in memory count against the shared budget; a stalled sender is cut off.

const { noUploadsLeft } = privateUploads('inbound-limits');

const MB = 1024 * 1024;
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway({ memoryBudgetBytes: MB, server: { bodyTimeoutMs: 300, headersTimeoutMs: 400 } });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

interface RawAnswer {
  status?: number;
  head: string;
  body: string;
  /** The gateway closed the connection (within the wait). */
  closed: boolean;
  ms: number;
}

/** A raw HTTP/1.1 connection to the gateway: sends `head`, then `body`, and waits for the answer and the close. */
function rawExchange(head: string, body: Buffer | string, waitMs = 3000): { answer: Promise<RawAnswer>; send(more: Buffer | string): void } {
  const { port } = new URL(gateway.url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  const started = performance.now();
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.write(head);
  socket.write(body);
  const answer = new Promise<RawAnswer>((resolve) => {
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      const text = Buffer.concat(received).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({
        status: status === undefined ? undefined : Number(status),
        head: split < 0 ? text : text.slice(0, split),
        body: split < 0 ? '' : text.slice(split + 4),
        closed,
        ms: performance.now() - started,
      });
      socket.destroy();
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.once('close', () => finish(true));
  });
  return { answer, send: (more) => socket.write(more) };
}

const requestHead = (path: string, headers: Record<string, string>): string =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

const authenticated = (extra: Record<string, string> = {}) => ({
  'x-gateway-api-key': ACCOUNT_KEY,
  'x-gateway-provider': 'openai',
  'x-gateway-custom-host': fake.baseUrl,
  authorization: `Bearer ${PROVIDER_KEY}`,
  ...extra,
});

const uploadFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('gateway-upload-'));

/** A chat body of exactly `bytes` bytes. */
function chatBody(bytes: number): Buffer {
  const frame = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '' }] });
  return Buffer.from(frame.replace('"content":""', `"content":"${'a'.repeat(bytes - frame.length)}"`));
}

const BOUNDARY = 'inbound-boundary';
const multipartHead = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
);

async function waitUntil(condition: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return condition();
}

test.serial('an unauthenticated 24 MB JSON upload gets 401 at once, its body unread, and the connection closed', async (t) => {
  const declared = 24 * MB;
  const { answer } = rawExchange(
    requestHead('/v1/chat/completions', { 'x-gateway-api-key': 'gw-wrong-key-0123456789', 'content-type': 'application/json', 'content-length': String(declared) }),
    Buffer.alloc(MB, 0x20),
  );
  const result = await answer;
  t.is(result.status, 401);
  t.regex(result.head, /\r\nconnection: close/i);
  t.regex(result.body, /"code":"invalid_api_key"/);
  t.true(result.closed, 'the gateway closed the connection without reading the rest');
  t.true(result.ms < 2000, `answered in ${Math.round(result.ms)} ms`);
});

test.serial('an unauthenticated multipart upload (no key, or an unknown virtual key) is refused before anything is spooled', async (t) => {
  const before = uploadFolders().length;
  for (const key of [undefined, 'vk-not-a-key-0123456789abcdef']) {
    const headers: Record<string, string> = {
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'content-length': String(24 * MB),
      ...(key ? { 'x-gateway-api-key': key } : {}),
    };
    const exchange = rawExchange(requestHead('/v1/audio/transcriptions', headers), multipartHead);
    exchange.send(Buffer.alloc(MB, 0x41));
    const result = await exchange.answer;
    t.is(result.status, 401, `key ${key ?? 'missing'}`);
    t.regex(result.head, /\r\nconnection: close/i);
    t.true(result.closed);
    t.is(uploadFolders().length, before, 'no upload folder was created');
  }
});

test.serial('the log entry of a request refused before authentication carries no request body', async (t) => {
  const trace = traceId('unauthenticated-log');
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'words of an unknown caller' }] });
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': 'gw-wrong-key-0123456789', 'x-gateway-trace-id': trace, 'content-type': 'application/json' },
    body,
  });
  t.is(response.status, 401);
  await gateway.gateway.flushLogs();
  const page = await gateway.gateway.logStore.list({ limit: 5, traceId: trace });
  t.is(page.data.length, 1, 'the refusal is logged once');
  const record = await gateway.gateway.logStore.get(page.data[0].id);
  t.is(record?.status, 401);
  t.is(record?.request_body ?? null, null, 'no request body stored');
});

test.serial('an authenticated caller still gets 400 with param for an invalid body', async (t) => {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...authenticated(), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: 'not a list' }),
  });
  t.is(response.status, 400);
  t.is(((await response.json()) as { error: { param: string } }).error.param, 'messages');
});

test.serial('bodies being read count against the memory budget: past it 503 overloaded with Retry-After; released when answered', async (t) => {
  t.is(gateway.gateway.memoryBudget.usedBytes, 0);
  const big = chatBody(800 * 1024);
  const first = rawExchange(
    requestHead('/v1/chat/completions', { ...authenticated(), 'content-type': 'application/json', 'content-length': String(big.length), connection: 'close' }),
    big.subarray(0, 700 * 1024),
    5000,
  );
  t.true(await waitUntil(() => gateway.gateway.memoryBudget.usedBytes >= 700 * 1024), 'the partial body is counted');

  const second = chatBody(400 * 1024);
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...authenticated(), 'content-type': 'application/json' },
    body: second,
  });
  t.is(response.status, 503);
  t.is(response.headers.get('retry-after'), '1');
  t.is(((await response.json()) as { error: { code: string } }).error.code, 'overloaded');

  first.send(big.subarray(700 * 1024));
  const answered = await first.answer;
  t.is(answered.status, 200, 'the request within the budget completes');
  t.true(await waitUntil(() => gateway.gateway.memoryBudget.usedBytes === 0), 'every lease is released once the responses closed');
});

test.serial('a sender that stalls mid-body gets 408 body_timeout as JSON and the connection closed', async (t) => {
  const body = chatBody(2000);
  const { answer } = rawExchange(
    requestHead('/v1/chat/completions', { ...authenticated(), 'content-type': 'application/json', 'content-length': String(body.length) }),
    body.subarray(0, 1000),
  );
  const result = await answer;
  t.is(result.status, 408);
  t.regex(result.head, /content-type: application\/json/i);
  t.regex(result.body, /"code":"body_timeout"/);
  t.true(result.closed);
  t.true(result.ms < 2000, `cut after ${Math.round(result.ms)} ms`);
});

test.serial('a multipart sender that stalls gets 408 and its spooled file is removed', async (t) => {
  const { answer } = rawExchange(
    requestHead('/v1/audio/transcriptions', { ...authenticated(), 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(4 * MB) }),
    Buffer.concat([multipartHead, Buffer.alloc(256 * 1024, 0x41)]),
  );
  const result = await answer;
  t.is(result.status, 408);
  t.regex(result.body, /"code":"body_timeout"/);
  t.true(result.closed);
  await noUploadsLeft(t);
});

test.serial('a client that stops mid-headers gets 408 as JSON once server.headersTimeoutMs has passed', async (t) => {
  const { answer } = rawExchange('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n', '');
  const result = await answer;
  t.is(result.status, 408);
  t.regex(result.body, /"code":"request_timeout"/);
  t.true(result.closed);
});
