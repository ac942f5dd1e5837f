import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { errors } from '../errors.js';

export const tooLarge = (limit: number) =>
  errors.tooLarge(`The request body is larger than this gateway's limit of ${limit} bytes.`, { code: 'body_too_large' });

/**
 * Reads a request body into memory up to `limit` bytes. A declared Content-Length over the limit is
 * refused before anything is read; a body that grows past it is refused as soon as it does.
 */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/** Passes a body through, streaming, and fails with 413 once more than `limit` bytes have passed. */
export function limitedStream(limit: number): Transform {
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > limit) callback(tooLarge(limit));
      else callback(null, chunk);
    },
  });
}

/** Parses a JSON request body; 400 when it is not JSON or not an object. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw errors.invalidRequest(`The request body is not valid JSON: ${(error as Error).message}`, { code: 'invalid_json' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw errors.invalidRequest('The request body must be a JSON object.', { code: 'invalid_json' });
  }
  return value as Record<string, unknown>;
}
