import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { MultipartForm } from '../../core/spec/index.js';

/**
 * Re-encodes a parsed multipart form as a streamed `multipart/form-data` body: text fields (repeated
 * ones with every value), then files read from their spooled temporary files, byte for byte. The
 * length is known up front, so the upstream gets a Content-Length rather than a chunked body.
 */
export function multipartBody(form: MultipartForm): { body: Readable; headers: Record<string, string> } {
  const boundary = `----gateway${randomBytes(12).toString('hex')}`;
  const quote = (value: string) => value.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
  const parts: Array<Buffer | { path: string; size: number }> = [];
  const names = new Set([...Object.keys(form.fields), ...Object.keys(form.repeated)]);
  for (const name of names) {
    const values = form.repeated[name] ?? [form.fields[name]];
    for (const value of values) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`, 'utf8'));
    }
  }
  for (const file of form.files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.filename)}"\r\nContent-Type: ${file.contentType.replace(/[\r\n]/g, '')}\r\n\r\n`,
        'utf8',
      ),
      { path: file.path, size: file.size },
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const length = parts.reduce((total, part) => total + (Buffer.isBuffer(part) ? part.length : part.size), 0);
  async function* chunks(): AsyncGenerator<Buffer> {
    for (const part of parts) {
      if (Buffer.isBuffer(part)) yield part;
      else for await (const chunk of createReadStream(part.path)) yield chunk as Buffer;
    }
  }
  return { body: Readable.from(chunks(), { objectMode: false }), headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(length) } };
}
