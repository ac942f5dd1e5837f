import type { IncomingMessage } from 'node:http';
import { type Readable, Transform } from 'node:stream';
import { errors } from '../errors.js';
import type { MemoryLease } from './memory-budget.js';

export const tooLarge = (limit: number) =>
  errors.tooLarge(`The request body is larger than this gateway's limit of ${limit} bytes.`, { code: 'body_too_large' });

/** 408: the client sent nothing for `idleMs` in the middle of its body. */
export const bodyTimedOut = (idleMs: number) =>
  errors.requestTimeout(`The request body stopped arriving: nothing was received for ${idleMs} ms.`, { code: 'body_timeout' });

/** How a request body is read: held bytes counted against a lease, and an idle limit between chunks. */
export interface BodyReadOptions {
  /** Grown by every chunk held in memory; throws 503 `overloaded` past the shared budget. */
  readonly lease?: MemoryLease;
  /** Most milliseconds between two chunks of the body (408 `body_timeout` past it); none when absent or 0. */
  readonly bodyTimeoutMs?: number;
}

const ignore = (): void => {};

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * Reads a stream to its end with 'data' events, handing each chunk to `take`; when `take` throws,
 * the stream is destroyed and the promise rejects with that error (as `for await` would do). Events
 * rather than `for await`: a small body took ~0.19 ms through the async iterator on an idle
 * gateway and ~0.09 ms this way, on every request and every upstream answer. For a client's request
 * body (`options.answered`) the stream is paused instead of destroyed, because destroying a request
 * destroys its socket before the error could be answered; `options.idleMs` rejects with 408 when no
 * chunk arrives for that long.
 */
export function readChunks(
  stream: Readable,
  take: (chunk: Buffer) => void,
  options: { idleMs?: number; answered?: boolean } = {},
): Promise<void> {
  const idleMs = options.idleMs ?? 0;
  if (stream.readableEnded) return Promise.resolve();
  if (stream.destroyed) return Promise.reject(stream.errored ?? prematureClose());
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const detach = (): void => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const finish = (error?: unknown): void => {
      detach();
      if (error === undefined) return resolve();
      if (options.answered) stream.pause();
      else {
        // Destroying an upstream (undici) body before its end emits an abort 'error': with our
        // listener gone, it would be an uncaught exception that ends the process.
        stream.on('error', ignore);
        stream.destroy();
      }
      reject(error);
    };
    const onIdle = (): void => {
      detach();
      stream.pause();
      reject(bodyTimedOut(idleMs));
    };
    const armTimer = (): void => {
      if (idleMs > 0) timer = setTimeout(onIdle, idleMs);
    };
    const onData = (chunk: Buffer): void => {
      clearTimeout(timer);
      armTimer();
      try {
        take(chunk);
      } catch (error) {
        finish(error);
      }
    };
    const onEnd = (): void => finish();
    const onError = (error: Error): void => finish(error);
    const onClose = (): void => finish(prematureClose());
    armTimer();
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('close', onClose);
  });
}

/**
 * Reads a request body into memory up to `limit` bytes. A declared Content-Length over the limit is
 * refused before anything is read; a body that grows past it is refused as soon as it does. Every
 * chunk kept is counted on `options.lease` (503 past the memory budget) and a sender that stalls
 * for `options.bodyTimeoutMs` gets 408.
 */
export async function readBody(request: IncomingMessage, limit: number, options: BodyReadOptions = {}): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  const lease = options.lease;
  await readChunks(
    request,
    (chunk) => {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      lease?.grow(chunk.length);
      chunks.push(chunk);
    },
    { idleMs: options.bodyTimeoutMs, answered: true },
  );
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
