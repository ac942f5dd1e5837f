import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import test from 'ava';
import { GatewayError } from '../errors.js';
import { UpstreamClient } from './upstream.js';

const options = { timeoutMs: 2_000, streamIdleTimeoutMs: 2_000, connectTimeoutMs: 1_000, connectionsPerOrigin: 1, maxPools: 4, poolIdleTimeoutMs: 60_000 };

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

test('a request whose upstream cannot be reached fails with 502 and destroys its streamed body', async (t) => {
  const client = new UpstreamClient(options);
  t.teardown(() => client.close());
  const body = new PassThrough();
  body.write('{"partial":');
  const error = await t.throwsAsync(client.send({ method: 'POST', url: `http://127.0.0.1:${await closedPort()}/v1/x`, headers: {}, body }, { signal: new AbortController().signal, guarded: false }));
  t.true(error instanceof GatewayError);
  t.is((error as GatewayError).status, 502);
  t.true(body.destroyed, 'the body stream is not left open');
});

test('the answer, its headers and body; the client leaving after the headers fails the body with its reason', async (t) => {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain', 'x-twice': ['a', 'b'] });
    response.write('first');
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.closeAllConnections());
  t.teardown(() => server.close());
  const client = new UpstreamClient(options);
  t.teardown(() => client.close());
  const controller = new AbortController();
  const answer = await client.send({ method: 'GET', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, headers: {} }, { signal: controller.signal, guarded: false });
  t.is(answer.status, 200);
  t.is(answer.headers['content-type'], 'text/plain');
  t.deepEqual(answer.headers['x-twice'], ['a', 'b']);
  const [chunk] = (await once(answer.body, 'data')) as [Buffer];
  t.is(chunk.toString(), 'first');
  const failed = once(answer.body, 'error');
  controller.abort(new Error('gone'));
  const [reason] = (await failed) as [Error];
  t.is(reason.message, 'gone');
  t.true(answer.body.destroyed);
});
