import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { makePng } from '../../test/fakes/png.js';
import { readPngInfo } from './png.js';

const dir = mkdtempSync(join(tmpdir(), 'png-test-'));
let count = 0;
const write = (bytes: Buffer) => {
  const path = join(dir, `${count++}.bin`);
  writeFileSync(path, bytes);
  return path;
};

test('reads size and alpha from the header chunks', async (t) => {
  t.deepEqual(await readPngInfo(write(makePng({ width: 20, height: 10, colourType: 6 }))), { width: 20, height: 10, hasAlpha: true });
  t.deepEqual(await readPngInfo(write(makePng({ width: 8, height: 8, colourType: 4 }))), { width: 8, height: 8, hasAlpha: true });
  t.deepEqual(await readPngInfo(write(makePng({ width: 8, height: 8, colourType: 2 }))), { width: 8, height: 8, hasAlpha: false });
  t.deepEqual(await readPngInfo(write(makePng({ width: 8, height: 8, colourType: 0 }))), { width: 8, height: 8, hasAlpha: false });
  t.deepEqual(await readPngInfo(write(makePng({ width: 8, height: 8, colourType: 2, transparency: true }))), { width: 8, height: 8, hasAlpha: true });
  t.deepEqual(await readPngInfo(write(makePng({ width: 8, height: 8, colourType: 2, padTo: 100_000 }))), { width: 8, height: 8, hasAlpha: false });
});

test('anything that is not a PNG is undefined, whatever its name', async (t) => {
  t.is(await readPngInfo(write(Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...Buffer.alloc(100)]))), undefined);
  t.is(await readPngInfo(write(Buffer.from('GIF89a...............................'))), undefined);
  t.is(await readPngInfo(write(Buffer.alloc(0))), undefined);
  const png = makePng({ width: 8, height: 8 });
  t.is(await readPngInfo(write(png.subarray(0, 20))), undefined, 'truncated header');
  const zeroWidth = Buffer.from(png);
  zeroWidth.writeUInt32BE(0, 16);
  t.is(await readPngInfo(write(zeroWidth)), undefined);
  const noIhdr = Buffer.from(png);
  noIhdr.write('IDAT', 12, 'latin1');
  t.is(await readPngInfo(write(noIhdr)), undefined);
});
