import { once } from 'node:events';
import { connect } from 'node:net';
import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { ACCOUNT_KEY, loggedOnce, PROVIDER_KEY, startGateway, type TestGateway, traceId } from './harness.js';

// Issue 31, item 10: a client that goes away while its request body is being read is a 499 (client
// closed request) logged at info level, with `client_closed` on the entry, not a 500
// `internal_error` with an error-level line. A real socket sends half a body, then closes.

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const BOUNDARY = 'gateway-test-boundary';

/** A chat completion's JSON body, or an audio transcription's multipart form. */
const BODIES = {
  json: {
    path: '/v1/chat/completions',
    type: 'application/json',
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(4000) }] }),
  },
  multipart: {
    path: '/v1/audio/transcriptions',
    type: `multipart/form-data; boundary=${BOUNDARY}`,
    body: [
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n`,
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n${'a'.repeat(4000)}\r\n`,
      `--${BOUNDARY}--\r\n`,
    ].join(''),
  },
} as const;

/** Sends the head and the first half of a body on a raw connection, then ends it as `close` says. */
async function halfABody(trace: string, kind: keyof typeof BODIES, close: 'destroy' | 'end'): Promise<void> {
  const { path, type, body } = BODIES[kind];
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: 127.0.0.1`,
    `content-type: ${type}`,
    `content-length: ${Buffer.byteLength(body)}`,
    `x-gateway-api-key: ${ACCOUNT_KEY}`,
    'x-gateway-provider: openai',
    `x-gateway-custom-host: ${fake.baseUrl}`,
    `authorization: Bearer ${PROVIDER_KEY}`,
    `x-gateway-trace-id: ${trace}`,
  ].join('\r\n');
  const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`${head}\r\n\r\n${body.slice(0, body.length / 2)}`);
  // Whatever the gateway answers (nothing, or an error it could still write) is read and dropped.
  socket.on('data', () => {});
  socket.on('error', () => {});
  if (close === 'destroy') socket.destroy();
  else socket.end();
  await once(socket, 'close');
}

for (const [kind, close] of [['json', 'destroy'], ['json', 'end'], ['multipart', 'destroy'], ['multipart', 'end']] as const) {
  test.serial(`a client that sends half a ${kind} body and closes (${close}) is a 499 at info level, code client_closed`, async (t) => {
    const trace = traceId(`body-abort-${kind}-${close}`);
    const linesBefore = gateway.lines.length;
    await halfABody(trace, kind, close);
    const entry = await loggedOnce(gateway, trace);
    // Nothing above info level was written for it (pino: 40 warn, 50 error).
    const louder = gateway.lines.slice(linesBefore).filter((line) => line.level > 30).map((line) => `${line.level} ${line.msg}`);
    t.deepEqual({ status: entry.status, outcome: entry.outcome, code: entry.error?.code, louder }, { status: 499, outcome: 'client_closed', code: 'client_closed', louder: [] });
    // The stored record says the same.
    await gateway.gateway.flushLogs();
    const list = await (await fetch(`${gateway.url}/admin/logs?trace_id=${encodeURIComponent(trace)}`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json();
    const row = (list as { data: Array<Record<string, unknown>> }).data.find((candidate) => candidate.trace_id === trace);
    t.like(row, { status: 499, outcome: 'client_closed', error_code: 'client_closed' });
    t.is(fake.requests.length, 0, 'nothing went upstream');
  });
}
