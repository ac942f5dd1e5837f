import { randomBytes } from 'node:crypto';

/**
 * A multipart/form-data body of text fields only, as one buffer (so it can be signed, logged by size
 * and read back by a test): for APIs that take forms but no file from the gateway.
 */
export function formBody(fields: Readonly<Record<string, string>>): { body: Buffer; contentType: string } {
  const boundary = `----gateway${randomBytes(12).toString('hex')}`;
  const quote = (value: string) => value.replace(/["\r\n]/g, (character) => encodeURIComponent(character));
  const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`);
  return { body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'utf8'), contentType: `multipart/form-data; boundary=${boundary}` };
}
