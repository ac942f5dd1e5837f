import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway } from '../harness.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';

// GET /ready (the chart's readiness probe) on a running gateway: ready on the embedded store and on
// Redis; from the moment the gateway starts draining (SIGTERM calls close), not ready, while a
// stream in flight still finishes, and the drain ends with it. GET /health (liveness) stays up.

const ready = async (url: string) => {
  const response = await fetch(`${url}/ready`);
  return { status: response.status, body: await response.json() };
};

test('ready on the embedded store; not ready once draining, while a stream in flight finishes', async (t) => {
  // A stream of 10 chunks, 50 ms apart.
  const fake = await startFake(async (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let index = 0; index < 10; index++) {
      response.write(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${index} "},"finish_reason":null}]}\n\n`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    response.end('data: [DONE]\n\n');
  });
  const gateway = await startGateway();
  // A second listener on the same app, so that /ready can still be asked once the gateway's own server stops accepting.
  const side = createServer(gateway.gateway.app.callback());
  await new Promise<void>((resolve) => side.listen(0, '127.0.0.1', resolve));
  const sideUrl = `http://127.0.0.1:${(side.address() as AddressInfo).port}`;
  try {
    t.deepEqual(await ready(gateway.url), { status: 200, body: { status: 'ready', store: 'embedded' } });
    const stream = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}` },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'count' }], stream: true }),
    });
    t.is(stream.status, 200);
    // A grace far longer than the test may run: the drain must end with the stream, not with the grace
    // (its keep-alive socket is closed once the stream is done).
    const closing = gateway.gateway.close(600_000);
    t.deepEqual(await ready(sideUrl), { status: 503, body: { status: 'draining', store: null } });
    t.is((await fetch(`${sideUrl}/health`)).status, 200, 'liveness stays up while draining');
    const text = await stream.text();
    t.true(text.endsWith('data: [DONE]\n\n'), 'the stream in flight finished');
    await closing;
  } finally {
    await new Promise<void>((resolve) => side.close(() => resolve()));
    await fake.close();
  }
});

test('ready on Redis', async (t) => {
  if (!(await redisAvailable())) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const prefix = `test-ready-${process.pid}-${randomBytes(4).toString('hex')}`;
  const gateway = await startGateway({}, { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') });
  try {
    t.deepEqual(await ready(gateway.url), { status: 200, body: { status: 'ready', store: 'redis' } });
  } finally {
    await gateway.close();
    await clearRedisPrefix(prefix);
  }
});
