import test from 'ava';
import fc from 'fast-check';
import { makePng } from '../fakes/png.js';
import { GOOD_HEADERS } from './arbitraries.js';
import { type FuzzRequest, fuzzSuite } from './fuzz-setup.js';

const suite = fuzzSuite(test);

const PATHS = ['/v1/images/edits', '/v1/images/variations', '/v1/audio/transcriptions', '/v1/audio/translations'];

const FILES: readonly Buffer[] = [
  makePng({ width: 16, height: 16, colourType: 6 }),
  makePng({ width: 16, height: 16, colourType: 2 }),
  makePng({ width: 16, height: 8, colourType: 6 }),
  makePng({ width: 8, height: 8, colourType: 4 }),
  makePng({ width: 16, height: 16, colourType: 6 }).subarray(0, 30),
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]),
  Buffer.from('ID3 fake audio'),
  Buffer.alloc(0),
];

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  /** Replaces the whole header block of the part when set. */
  rawHeaders?: string;
  body: Buffer;
}

const fieldName = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('image', 'mask', 'file', 'prompt', 'model', 'n', 'size', 'response_format', 'temperature', 'language', 'user') },
  { weight: 1, arbitrary: fc.constantFrom('', '__proto__', 'constructor', 'a"b', 'a\\"b', 'x%22y', 'x%0D%0Ay', 'ünï') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((text) => text.replace(/["\r\n]/g, '')) },
);
const fieldValue = fc.oneof(
  fc.constantFrom('dall-e-2', 'dall-e-3', 'whisper-1', '1', '0', '11', '-1', '1.5', ' 2 ', '1e1', 'NaN', '256x256', '1024x1024', '7x7', 'url', 'b64_json', 'json', 'srt', 'xml', '0.5', '2', '-0', 'Infinity', 'a cat', ''),
  fc.string({ maxLength: 40 }),
  fc.integer({ min: 1000, max: 1100 }).map((length) => 'p'.repeat(length)),
);
const part: fc.Arbitrary<Part> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ name: fieldName, body: fieldValue.map((text) => Buffer.from(text)) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      name: fieldName,
      filename: fc.constantFrom('image.png', 'a.mp3', '', 'x"y.png', '..\\..\\etc\\passwd', '../../x.png', 'ü.png', 'a%0Db.png'),
      contentType: fc.constantFrom('image/png', 'audio/mpeg', 'application/octet-stream', '', 'text/plain; charset=utf-8', 'image/png\r\nX-Injected: 1'.replace(/\r\n/g, ' ')),
      body: fc.oneof(fc.constantFrom(...FILES), fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes))),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      name: fc.constant('x'),
      rawHeaders: fc.constantFrom('', 'Content-Type: text/plain', 'Content-Disposition: attachment; name="x"', 'Content-Disposition: form-data', 'Content-Disposition: form-data; filename="a.png"', 'content-disposition:form-data;name=x', 'Content-Disposition: form-data; name="x"; name="y"', 'Content-Disposition: form-data; name=""', `X-Long: ${'h'.repeat(17_000)}`, 'no colon here'),
      body: fieldValue.map((text) => Buffer.from(text)),
    }),
  },
);

function encode(parts: readonly Part[], boundary: string): Buffer {
  const pieces: Buffer[] = [];
  for (const item of parts) {
    const headers =
      item.rawHeaders ??
      `Content-Disposition: form-data; name="${item.name}"${item.filename === undefined ? '' : `; filename="${item.filename}"`}${item.contentType === undefined ? '' : `\r\nContent-Type: ${item.contentType}`}`;
    pieces.push(Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), item.body, Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

/** Ways to break an encoded form: cut it short, drop the closing delimiter, splice garbage, or use a delimiter the header does not name. */
const corruption = fc.oneof(
  { weight: 4, arbitrary: fc.constant((body: Buffer) => body) },
  { weight: 1, arbitrary: fc.nat().map((at) => (body: Buffer) => body.subarray(0, at % Math.max(1, body.length))) },
  { weight: 1, arbitrary: fc.constant((body: Buffer) => body.subarray(0, body.lastIndexOf('--\r\n'))) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 40 })).map(([at, bytes]) => (body: Buffer) => Buffer.concat([body.subarray(0, at % Math.max(1, body.length)), Buffer.from(bytes), body.subarray(at % Math.max(1, body.length))])) },
  { weight: 1, arbitrary: fc.constant((body: Buffer) => Buffer.from(body.toString('latin1').replaceAll('\r\n', '\n'), 'latin1')) },
  { weight: 1, arbitrary: fc.constant((body: Buffer) => Buffer.concat([Buffer.from('preamble text\r\n'), body, Buffer.from('epilogue')])) },
  { weight: 1, arbitrary: fc.integer({ min: 1001, max: 1010 }).map((count) => () => encode(Array.from({ length: count }, () => ({ name: 'n', body: Buffer.from('1') })), 'fuzzboundary')) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 400 }).map((bytes) => () => Buffer.from(bytes)) },
);

/** Content-Type headers: the right boundary, none, a wrong or oversized one, quoted, or another type. */
const contentType = fc.oneof(
  { weight: 5, arbitrary: fc.constant('multipart/form-data; boundary=fuzzboundary') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      undefined,
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary="fuzzboundary"',
      'multipart/form-data; boundary=other',
      `multipart/form-data; boundary=${'b'.repeat(71)}`,
      'multipart/form-data; charset=utf-8; boundary=fuzzboundary',
      'Multipart/Form-Data; BOUNDARY=fuzzboundary',
      'multipart/mixed; boundary=fuzzboundary',
      'application/json',
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=fuzz boundary',
    ),
  },
);

/** The parts of a form each operation accepts, so that one generated field or file decides. */
const VALID_PARTS: Readonly<Record<string, Part[]>> = {
  '/v1/images/edits': [{ name: 'image', filename: 'image.png', contentType: 'image/png', body: FILES[0] }, { name: 'prompt', body: Buffer.from('a hat') }],
  '/v1/images/variations': [{ name: 'image', filename: 'image.png', contentType: 'image/png', body: FILES[1] }],
  '/v1/audio/transcriptions': [{ name: 'file', filename: 'a.mp3', contentType: 'audio/mpeg', body: FILES[6] }, { name: 'model', body: Buffer.from('whisper-1') }],
  '/v1/audio/translations': [{ name: 'file', filename: 'a.mp3', contentType: 'audio/mpeg', body: FILES[6] }, { name: 'model', body: Buffer.from('whisper-1') }],
};

const multipartRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    path: fc.constantFrom(...PATHS),
    parts: fc.oneof(fc.array(part, { maxLength: 6 }), fc.array(part, { maxLength: 2 }).map((extra): Array<Part | null> => [...extra, null])),
    corrupt: corruption,
    contentType,
    chunked: fc.boolean(),
  })
  .map(({ path, parts, corrupt, contentType: type, chunked }) => {
    const headers: Record<string, string> = { ...GOOD_HEADERS };
    if (type !== undefined) headers['content-type'] = type;
    const form = (parts as Array<Part | null>).flatMap((item) => (item === null ? VALID_PARTS[path] : [item]));
    return { method: 'POST', path, headers, body: corrupt(encode(form, 'fuzzboundary')), chunked };
  });

suite.property('multipart operations answer malformed forms with an OpenAI-shaped 4xx', () => multipartRequest, { runs: 700, batches: 3 });
suite.property('multipart operations answer malformed forms sent together with an OpenAI-shaped 4xx', () => multipartRequest, { runs: 400, concurrency: 8 });
