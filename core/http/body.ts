import type { IncomingMessage } from 'node:http';
import { type Readable, Transform } from 'node:stream';
import { errors } from '../errors.js';

export const tooLarge = (limit: number) =>
  errors.tooLarge(`The request body is larger than this gateway's limit of ${limit} bytes.`, { code: 'body_too_large' });

const ignore = (): void => {};

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * Reads a stream to its end with 'data' events, handing each chunk to `take`; when `take` throws,
 * the stream is destroyed and the promise rejects with that error (as `for await` would do). Events
 * rather than `for await`: a small body took ~0.19 ms through the async iterator on an idle
 * gateway and ~0.09 ms this way, on every request and every upstream answer.
 */
export function readChunks(stream: Readable, take: (chunk: Buffer) => void): Promise<void> {
  if (stream.readableEnded) return Promise.resolve();
  if (stream.destroyed) return Promise.reject(stream.errored ?? prematureClose());
  return new Promise((resolve, reject) => {
    const finish = (error?: unknown): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (error === undefined) return resolve();
      // Destroying an upstream (undici) body before its end emits an abort 'error': with our
      // listener gone, it would be an uncaught exception that ends the process.
      stream.on('error', ignore);
      stream.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      try {
        take(chunk);
      } catch (error) {
        finish(error);
      }
    };
    const onEnd = (): void => finish();
    const onError = (error: Error): void => finish(error);
    const onClose = (): void => finish(prematureClose());
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('close', onClose);
  });
}

/**
 * Reads a request body into memory up to `limit` bytes. A declared Content-Length over the limit is
 * refused before anything is read; a body that grows past it is refused as soon as it does.
 */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  await readChunks(request, (chunk) => {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  });
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
