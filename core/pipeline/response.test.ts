import { Readable, Transform } from 'node:stream';
import test from 'ava';
import type { GatewayContext } from './context.js';
import { tapStream, writeResponse } from './response.js';

const makeContext = (): GatewayContext => ({
  traceId: 'trace-1',
  startedAt: 0,
  operation: 'chat',
  incoming: { method: 'POST', path: '/v1/chat/completions', search: '', headers: {} },
  signal: new AbortController().signal,
  metadata: {},
  strict: true,
  request: { streaming: false },
});

const recorder = (seen: string[], label: string) => (stream: Readable) =>
  stream.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen.push(`${label}:${chunk.toString()}`);
        callback(null, chunk);
      },
    }),
  );

test('writeResponse applies the registered taps to a streamed answer, in registration order, bytes unchanged', async (t) => {
  const context = makeContext();
  const seen: string[] = [];
  tapStream(context, recorder(seen, 'first'));
  tapStream(context, recorder(seen, 'second'));
  writeResponse(context, { status: 200, headers: {}, body: { stream: Readable.from([Buffer.from('abc')]) } });
  const body = context.response?.body;
  if (!body || !('stream' in body)) return t.fail('no stream');
  const received: Buffer[] = [];
  for await (const chunk of body.stream) received.push(chunk as Buffer);
  t.is(Buffer.concat(received).toString(), 'abc');
  t.deepEqual(seen, ['first:abc', 'second:abc']);
});

test('writeResponse leaves JSON and byte answers, and answers of requests without taps, as they are', (t) => {
  const context = makeContext();
  tapStream(context, () => t.fail('a tap saw a JSON answer') as never);
  const json = { status: 400, headers: {}, body: { json: { error: {} } } };
  writeResponse(context, json);
  t.is(context.response, json);
  const other = makeContext();
  const stream = { status: 200, headers: {}, body: { stream: Readable.from([]) } };
  writeResponse(other, stream);
  t.is(other.response, stream);
});
