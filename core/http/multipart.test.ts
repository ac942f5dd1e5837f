import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import test from 'ava';
import { GatewayError } from '../errors.js';
import { encodeMultipart, spoolMultipart } from './multipart.js';

const BOUNDARY = 'XyZ-boundary';
const file = Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 7) & 0xff));
// File bytes that contain a near-delimiter, to prove only the real delimiter ends a part.
const tricky = Buffer.concat([file, Buffer.from(`\r\n--${BOUNDARY.slice(0, -1)}`), file]);
const body = Buffer.concat([
  Buffer.from(`preamble to ignore\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhello\r\nworld\r\n`),
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="tags[]"\r\n\r\na\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="tags[]"\r\n\r\nb\r\n`),
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="a \\"q\\".png"\r\nContent-Type: image/png\r\n\r\n`),
  tricky,
  Buffer.from(`\r\n--${BOUNDARY}--\r\nepilogue`),
]);

function incoming(chunks: Buffer[], headers: Record<string, string> = {}): IncomingMessage {
  const stream = Readable.from(chunks) as unknown as IncomingMessage;
  stream.headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers };
  return stream;
}

test('parses fields, repeated fields and files whatever the read boundaries (every split offset)', async (t) => {
  for (let split = 1; split < body.length; split += 37) {
    const { form, cleanup } = await spoolMultipart(incoming([body.subarray(0, split), body.subarray(split)]), 1024 * 1024);
    t.is(form.fields.prompt, 'hello\r\nworld');
    t.deepEqual(form.repeated['tags[]'], ['a', 'b']);
    t.is(form.files.length, 1);
    const [image] = form.files;
    t.is(image.field, 'image');
    t.is(image.filename, 'a "q".png');
    t.is(image.contentType, 'image/png');
    t.true(readFileSync(image.path).equals(tricky), `split at ${split}`);
    await cleanup();
    t.false(existsSync(image.path));
  }
});

test('one byte per read still parses', async (t) => {
  const bytes = Array.from(body, (byte) => Buffer.from([byte]));
  const { form, cleanup } = await spoolMultipart(incoming(bytes), 1024 * 1024);
  t.true(readFileSync(form.files[0].path).equals(tricky));
  await cleanup();
});

test('over the limit is 413 and leaves no file behind', async (t) => {
  const error = await t.throwsAsync(spoolMultipart(incoming([body]), 1000));
  t.true(error instanceof GatewayError);
  t.is((error as GatewayError).status, 413);
});

test('a missing boundary or a truncated body is a 400', async (t) => {
  const noBoundary = await t.throwsAsync(spoolMultipart(incoming([body], { 'content-type': 'multipart/form-data' }), 1 << 20));
  t.is((noBoundary as GatewayError).status, 400);
  const truncated = await t.throwsAsync(spoolMultipart(incoming([body.subarray(0, body.length - 30)]), 1 << 20));
  t.is((truncated as GatewayError).status, 400);
  t.regex(truncated.message, /closing boundary/);
});

test('random bytes never crash the parser: they end in a 400', async (t) => {
  for (let round = 0; round < 50; round++) {
    const noise = Buffer.from(Array.from({ length: 500 + round * 13 }, () => Math.floor(Math.random() * 256)));
    const error = await t.throwsAsync(spoolMultipart(incoming([Buffer.from(`--${BOUNDARY}\r\n`), noise]), 1 << 20));
    t.is((error as GatewayError).status, 400);
  }
});

test('encodeMultipart re-encodes fields and files byte for byte with an exact Content-Length', async (t) => {
  const spooled = await spoolMultipart(incoming([body]), 1 << 20);
  const { cleanup } = spooled;
  const form = { ...spooled.form, files: spooled.form.files.map((entry) => ({ ...entry, filename: 'photo 1.png' })) };
  const encoded = encodeMultipart(form);
  const chunks: Buffer[] = [];
  for await (const chunk of encoded.body) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  t.is(Number(encoded.headers['content-length']), bytes.length);
  // Parsed back by an independent implementation (undici's FormData).
  const parsed = await new Response(new Uint8Array(bytes), { headers: { 'content-type': encoded.headers['content-type'] } }).formData();
  t.is(parsed.get('prompt'), 'hello\r\nworld');
  t.deepEqual(parsed.getAll('tags[]'), ['a', 'b']);
  const image = parsed.get('image') as File;
  t.is(image.name, 'photo 1.png');
  t.is(image.type, 'image/png');
  t.true(Buffer.from(await image.arrayBuffer()).equals(tricky));
  const withoutPrompt = encodeMultipart(form, { omit: ['prompt'] });
  let text = '';
  for await (const chunk of withoutPrompt.body) text += (chunk as Buffer).toString('latin1');
  t.false(text.includes('name="prompt"'));
  await cleanup();
});

test('fields named like Object.prototype members are plain fields', async (t) => {
  const named = (name: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\nv-${name}\r\n`;
  const form = Buffer.from(`${named('constructor')}${named('__proto__')}${named('toString')}--${BOUNDARY}--\r\n`);
  const { form: parsed, cleanup } = await spoolMultipart(incoming([form]), 1 << 20);
  t.is(parsed.fields['constructor' as string], 'v-constructor');
  t.is(parsed.fields['toString' as string], 'v-toString');
  t.deepEqual(parsed.repeated.__proto__, ['v-__proto__']);
  await cleanup();
});
