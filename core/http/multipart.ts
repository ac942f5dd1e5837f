import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { errors } from '../errors.js';
import type { FormFile, MultipartForm } from '../spec/unified.js';
import { type BodyReadOptions, bodyTimedOut, clientGone, tooLarge } from './body.js';

/** Text fields larger than this are refused (they are held in memory, unlike files). */
const FIELD_LIMIT = 1024 * 1024;
/** Header block of one part. */
const PART_HEADER_LIMIT = 16 * 1024;
const MAX_PARTS = 1000;

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

const invalid = (message: string) => errors.invalidRequest(message, { code: 'invalid_multipart' });

/** A parsed form and the temporary folder its files live in; `cleanup` removes it (idempotent). */
export interface SpooledForm {
  readonly form: MultipartForm;
  readonly cleanup: () => Promise<void>;
}

/** The boundary of a `multipart/form-data` content type, or a 400 naming the header. */
export function boundaryOf(contentType: string | undefined): string {
  const match = contentType?.match(/^\s*multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) {
    throw errors.invalidRequest('This operation takes a multipart/form-data body (Content-Type: multipart/form-data; boundary=…).', {
      param: 'content-type',
      code: 'invalid_content_type',
    });
  }
  return boundary;
}

function parsePartHeaders(block: string): { name: string; filename?: string; contentType: string } {
  let disposition: string | undefined;
  let contentType = 'application/octet-stream';
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') disposition = value;
    else if (name === 'content-type') contentType = value;
  }
  if (!disposition || !/^form-data\b/i.test(disposition)) throw invalid('A multipart part has no Content-Disposition: form-data header.');
  const param = (key: string) => {
    const found = disposition.match(new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i')) ?? disposition.match(new RegExp(`;\\s*${key}=([^;\\s]+)`, 'i'));
    // Browsers percent-encode quotes and line breaks in names; some clients backslash-escape them.
    return found?.[1]?.replace(/\\(.)/g, '$1').replace(/%22/g, '"').replace(/%0D/gi, '\r').replace(/%0A/gi, '\n');
  };
  const name = param('name');
  if (name === undefined) throw invalid('A multipart part has no field name.');
  const filename = param('filename');
  return { name, ...(filename === undefined ? {} : { filename }), contentType };
}

/**
 * Streams a multipart/form-data request in: text fields into memory (each up to 1 MB), files into a
 * fresh temporary folder, never holding a whole file in memory. More than `limitBytes` in all is
 * refused with 413 as soon as it is seen (a declared Content-Length over the limit before reading).
 * Text fields are counted on `options.lease` (503 past the memory budget); a sender that stalls for
 * `options.bodyTimeoutMs` gets 408. On any failure the folder is removed before the error is thrown,
 * and the request is left unread (not destroyed) so that the error can be answered.
 */
export async function spoolMultipart(request: IncomingMessage, limitBytes: number, options: BodyReadOptions = {}): Promise<SpooledForm> {
  const boundary = boundaryOf(request.headers['content-type']);
  const declared = Number(request.headers['content-length']);
  if (declared > limitBytes) throw tooLarge(limitBytes);

  const dir = await mkdtemp(join(tmpdir(), 'gateway-upload-'));
  let removed = false;
  const cleanup = async () => {
    if (removed) return;
    removed = true;
    await rm(dir, { recursive: true, force: true });
  };
  const parser = new MultipartParser(boundary, dir, options);
  let total = 0;

  // Not destroyed on return: the error is answered, then the connection closed.
  const chunks = request.iterator({ destroyOnReturn: false }) as AsyncIterator<Buffer>;
  let waiting = false;
  try {
    for (;;) {
      waiting = true;
      const next = await nextWithin(chunks, options.bodyTimeoutMs ?? 0);
      waiting = false;
      if (next.done) break;
      const chunk = next.value;
      total += chunk.length;
      if (total > limitBytes) throw tooLarge(limitBytes);
      if (parser.state === 'done') continue;
      await parser.push(chunk);
    }
    if (parser.state !== 'done') throw invalid('The multipart body ended before its closing boundary.');
    return { form: { fields: parser.fields, repeated: parser.repeated, files: parser.files }, cleanup };
  } catch (error) {
    // A read still pending (a stalled sender) cannot be returned; it ends with the connection.
    if (!waiting) await chunks.return?.().catch(() => {});
    await parser.current?.handle?.close().catch(() => {});
    await cleanup();
    throw clientGone(error);
  }
}

/** The part being read: a file (written to `path` through `handle`) or a text field (its bytes in `text`). */
interface OpenPart {
  readonly name: string;
  readonly filename?: string;
  readonly contentType: string;
  handle?: FileHandle;
  path?: string;
  size: number;
  readonly text: Buffer[];
}

/**
 * The parser of one multipart body, fed chunk by chunk ({@link MultipartParser.push}): it writes
 * each file part into `dir` and keeps the text fields. Its state says what it looks for next.
 */
class MultipartParser {
  // No prototype: a field named `constructor` or `__proto__` is just a field.
  readonly fields: Record<string, string> = Object.create(null) as Record<string, string>;
  readonly repeated: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  readonly files: FormFile[] = [];
  state: 'preamble' | 'headers' | 'body' | 'afterDelimiter' | 'done' = 'preamble';
  current?: OpenPart;
  private readonly delimiter: Buffer;
  // The body starts with `--boundary` (no leading CRLF): prefix one so that every delimiter looks alike.
  private pending: Buffer = Buffer.from(CRLF);
  private parts = 0;

  constructor(
    boundary: string,
    private readonly dir: string,
    private readonly options: BodyReadOptions,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** Takes the next chunk of the body and reads as far as it goes. */
  async push(chunk: Buffer): Promise<void> {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    for (;;) {
      const state = this.state;
      const more =
        state === 'preamble' || state === 'body' ? await this.untilDelimiter() : state === 'afterDelimiter' ? this.delimiterLine() : state === 'headers' ? await this.partHeaders() : false;
      if (!more) return;
    }
  }

  /** Preamble or a part's body, up to the next delimiter; false when more bytes are needed. */
  private async untilDelimiter(): Promise<boolean> {
    const { delimiter } = this;
    const at = this.pending.indexOf(delimiter);
    if (at < 0) {
      // Keep a tail that could be the start of a delimiter; the rest is safely part of this body.
      const safe = this.pending.length - delimiter.length;
      if (safe > 0) {
        if (this.state === 'body') await this.writeBody(this.pending.subarray(0, safe));
        this.pending = this.pending.subarray(safe);
      }
      return false;
    }
    if (this.state === 'body') {
      await this.writeBody(this.pending.subarray(0, at));
      await this.finishPart();
    }
    this.pending = this.pending.subarray(at + delimiter.length);
    this.state = 'afterDelimiter';
    return true;
  }

  /** The rest of a delimiter's line: `--` ends the body, else a part's headers follow. */
  private delimiterLine(): boolean {
    const pending = this.pending;
    if (pending.length < 2) return false;
    if (pending[0] === 0x2d && pending[1] === 0x2d) {
      this.state = 'done';
      return false;
    }
    const lineEnd = pending.indexOf(CRLF);
    if (lineEnd < 0) {
      if (pending.length > 256) throw invalid('Malformed multipart body: bad delimiter line.');
      return false;
    }
    this.pending = pending.subarray(lineEnd + 2);
    this.state = 'headers';
    return true;
  }

  /** A part's header block: the part is opened (a file part's file created). */
  private async partHeaders(): Promise<boolean> {
    const end = this.pending.indexOf(HEADER_END);
    if (end < 0) {
      if (this.pending.length > PART_HEADER_LIMIT) throw invalid('A multipart part has headers longer than 16 KB.');
      return false;
    }
    if (++this.parts > MAX_PARTS) throw invalid(`A multipart body may have at most ${MAX_PARTS} parts.`);
    const headers = parsePartHeaders(this.pending.subarray(0, end).toString('utf8'));
    this.pending = this.pending.subarray(end + HEADER_END.length);
    const current: OpenPart = { ...headers, size: 0, text: [] };
    this.current = current;
    if (headers.filename !== undefined) {
      current.path = join(this.dir, `${this.files.length}-${randomBytes(6).toString('hex')}`);
      current.handle = await open(current.path, 'wx', 0o600);
    }
    this.state = 'body';
    return true;
  }

  private async writeBody(bytes: Buffer): Promise<void> {
    const current = this.current;
    if (!current || bytes.length === 0) return;
    current.size += bytes.length;
    if (current.handle) {
      await current.handle.write(bytes);
    } else {
      if (current.size > FIELD_LIMIT) {
        throw errors.invalidRequest(`The form field "${current.name}" is longer than ${FIELD_LIMIT} bytes.`, { param: current.name, code: 'field_too_large' });
      }
      this.options.lease?.grow(bytes.length);
      current.text.push(Buffer.from(bytes));
    }
  }

  private async finishPart(): Promise<void> {
    if (!this.current) return;
    const part = this.current;
    this.current = undefined;
    if (part.handle && part.path !== undefined && part.filename !== undefined) {
      await part.handle.close();
      this.files.push({ field: part.name, filename: part.filename, contentType: part.contentType, path: part.path, size: part.size });
    } else {
      const value = Buffer.concat(part.text).toString('utf8');
      this.fields[part.name] = value;
      (this.repeated[part.name] ??= []).push(value);
    }
  }
}

/** The iterator's next chunk, or 408 when none arrives within `idleMs` (0: no limit). */
function nextWithin(chunks: AsyncIterator<Buffer>, idleMs: number): Promise<IteratorResult<Buffer>> {
  if (idleMs <= 0) return chunks.next();
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(bodyTimedOut(idleMs)), idleMs);
  });
  return Promise.race([chunks.next(), idle]).finally(() => clearTimeout(timer));
}

/** Escapes a name or filename as the HTML form encoding does (quotes and line breaks percent-encoded). */
const quote = (value: string) => value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/**
 * Re-encodes a spooled form for the upstream request: text fields, then files streamed from disk
 * byte for byte. `omit` drops fields (e.g. ones a provider takes elsewhere). Content-Length is exact.
 */
export function encodeMultipart(form: MultipartForm, options: { omit?: readonly string[] } = {}): {
  body: Readable;
  headers: Record<string, string>;
} {
  const boundary = `----gateway${randomBytes(12).toString('hex')}`;
  const omit = new Set(options.omit ?? []);
  const pieces: Array<Buffer | FormFile> = [];
  for (const [name, values] of Object.entries(form.repeated)) {
    if (omit.has(name)) continue;
    for (const value of values) {
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`));
    }
  }
  for (const file of form.files) {
    if (omit.has(file.field)) continue;
    pieces.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.filename)}"\r\n` +
          `Content-Type: ${file.contentType.replace(/[\r\n]/g, '')}\r\n\r\n`,
      ),
      file,
      Buffer.from(CRLF),
    );
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  const length = pieces.reduce((sum, piece) => sum + (Buffer.isBuffer(piece) ? piece.length : piece.size), 0);
  async function* generate(): AsyncGenerator<Buffer> {
    for (const piece of pieces) {
      if (Buffer.isBuffer(piece)) yield piece;
      else for await (const chunk of createReadStream(piece.path)) yield chunk as Buffer;
    }
  }
  return {
    body: Readable.from(generate(), { objectMode: false }),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(length) },
  };
}

/**
 * One spooled file as a raw request body (for a provider that takes the audio or image bytes as the
 * whole body instead of a form): streamed from disk lazily, byte for byte, with its exact length
 * and the type the client declared.
 */
export function fileBody(file: FormFile): { body: Readable; headers: Record<string, string> } {
  async function* generate(): AsyncGenerator<Buffer> {
    for await (const chunk of createReadStream(file.path)) yield chunk as Buffer;
  }
  return {
    body: Readable.from(generate(), { objectMode: false }),
    headers: { 'content-type': file.contentType.replace(/[\r\n]/g, '') || 'application/octet-stream', 'content-length': String(file.size) },
  };
}
