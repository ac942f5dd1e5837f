import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import test from 'ava';
import { readBody, readChunks, WholeBody } from './body.js';

test('readChunks hands over every chunk in order and resolves at the end', async (t) => {
  const seen: string[] = [];
  await readChunks(Readable.from([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]), (chunk) => seen.push(chunk.toString()));
  t.deepEqual(seen, ['a', 'b', 'c']);
});

test('readChunks rejects when the stream closes before its end, or fails', async (t) => {
  const cut = new PassThrough();
  const reading = readChunks(cut, () => {});
  cut.write('partial');
  setImmediate(() => cut.destroy());
  t.like(await t.throwsAsync(reading), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

  const failing = new PassThrough();
  const failed = readChunks(failing, () => {});
  setImmediate(() => failing.destroy(new Error('socket hang up')));
  t.like(await t.throwsAsync(failed), { message: 'socket hang up' });
});

test('readChunks destroys the stream and rejects with what take() threw', async (t) => {
  const source = new PassThrough();
  const reading = readChunks(source, () => {
    throw new Error('too large');
  });
  source.write('x');
  t.like(await t.throwsAsync(reading), { message: 'too large' });
  t.true(source.destroyed);
});

test('readChunks on a stream already read to its end resolves at once', async (t) => {
  const done = Readable.from([Buffer.from('x')]);
  await readChunks(done, () => {});
  await t.notThrowsAsync(readChunks(done, () => {}));
});

test('readChunks leaves no listener and no reference on the stream once it is done', async (t) => {
  const source = new PassThrough();
  const reading = readChunks(source, () => {});
  t.is(source.listenerCount('data'), 1);
  source.end('x');
  await reading;
  for (const event of ['data', 'end', 'error']) t.is(source.listenerCount(event), 0, event);
  t.deepEqual(Object.getOwnPropertySymbols(source).filter((symbol) => (source as unknown as Record<symbol, unknown>)[symbol] !== undefined && symbol.description === 'read in progress'), []);
});

test('a body already buffered whole is taken at once, and the stream still ends with its message', async (t) => {
  const source = new PassThrough();
  source.write('{"a":');
  source.write('1}');
  await new Promise((resolve) => setImmediate(resolve));
  const body = new WholeBody(source, 100, () => new Error('too large'), 'test', undefined, 1);
  const reading = body.run(7);
  t.is(source.listenerCount('data'), 0, 'no listener: read from the buffer');
  await reading;
  t.is(body.bytes().toString(), '{"a":1}');
  const ended = once(source, 'end');
  source.end();
  await ended;
  t.true(source.readableEnded);
});

test('a request body over the limit is refused from the buffer too, the request paused, not destroyed', async (t) => {
  const source = new PassThrough();
  source.write('0123456789');
  await new Promise((resolve) => setImmediate(resolve));
  const request = Object.assign(source, { headers: { 'content-length': '10' } }) as unknown as IncomingMessage;
  const error = await t.throwsAsync(readBody(request, 5, {}));
  t.like(error, { status: 413 });
  t.false(source.destroyed);
  // Without a declared length the same body is read by events, with the same answer.
  const chunked = new PassThrough();
  const reading = readBody(Object.assign(chunked, { headers: {} }) as unknown as IncomingMessage, 5, {});
  chunked.write('0123456789');
  t.like(await t.throwsAsync(reading), { status: 413 });
  t.false(chunked.destroyed);
});
