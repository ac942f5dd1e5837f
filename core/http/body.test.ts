import { PassThrough, Readable } from 'node:stream';
import test from 'ava';
import { readChunks } from './body.js';

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
