import { PassThrough, type Readable } from 'node:stream';
import { errors, GatewayError } from '../errors.js';
import { bodyFailure } from '../http/upstream.js';
import { isRecord } from '../spec/is-record.js';
import type { ForwardSlice } from '../pipeline/context.js';
import type { Usage } from '../spec/unified.js';
import { usageOf } from '../http/usage-tap.js';

/** Most bytes read while waiting for a stream's first event; past it the stream is passed on unchecked. */
const PEEK_LIMIT = 64 * 1024;

/** Reads a body until its first complete SSE event (a blank line), its end, or {@link PEEK_LIMIT} bytes; the body is left paused. */
function readFirstEvent(body: Readable): Promise<{ bytes: Buffer; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
    };
    const finish = (ended: boolean) => {
      cleanup();
      body.pause();
      resolve({ bytes: Buffer.concat(chunks, size), ended });
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(buffer);
      size += buffer.byteLength;
      if (size > PEEK_LIMIT || /\r?\n\r?\n/.test(Buffer.concat(chunks, size).toString('utf8'))) finish(false);
    };
    const onEnd = () => finish(true);
    const onError = (error: unknown) => {
      cleanup();
      reject(error);
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
  });
}

/** A stream whose first event was an error: 502 `upstream_stream_error`, with the usage that event reported (charged to the attempt). */
export class FirstEventError extends GatewayError {
  constructor(readonly usage: Usage | undefined) {
    const error = errors.badGateway('The upstream answered the stream with an error before its first chunk.', { code: 'upstream_stream_error' });
    super(error.status, error.body, error.headers);
  }
}

/** The usage an SSE event's JSON data reports, if any. */
function eventUsage(text: string): Usage | undefined {
  const event = text.split(/\r?\n\r?\n/, 1)[0];
  const data = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  try {
    return data.startsWith('{') ? usageOf(JSON.parse(data))?.usage : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an SSE event is an error: `event: error`, or data whose JSON has a top-level `error` or `type: "error"`. */
export function isErrorEvent(text: string): boolean {
  const event = text.split(/\r?\n\r?\n/, 1)[0];
  const lines = event.split(/\r?\n/);
  if (lines.some((line) => /^event:\s*error\s*$/.test(line))) return true;
  const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n');
  if (!data.startsWith('{')) return false;
  try {
    const value: unknown = JSON.parse(data);
    return isRecord(value) && (value.error !== undefined || value.type === 'error');
  } catch {
    return false;
  }
}

/**
 * For a routed stream: waits for the upstream's first SSE event before the answer is taken, so an
 * error sent as that first event counts as a failed attempt (thrown: 502 `upstream_stream_error`)
 * and the route falls back. Otherwise the bytes read are put back and the body is returned whole.
 */
export async function checkFirstEvent(forward: ForwardSlice, signal: AbortSignal): Promise<ForwardSlice> {
  let read: { bytes: Buffer; ended: boolean };
  try {
    read = await readFirstEvent(forward.body);
  } catch (error) {
    forward.memory.release();
    throw bodyFailure(error, forward.origin, signal);
  }
  const { bytes, ended } = read;
  const text = bytes.toString('utf8');
  if (isErrorEvent(text)) {
    forward.body.on('error', () => {});
    forward.body.destroy();
    forward.memory.release();
    throw new FirstEventError(eventUsage(text));
  }
  if (!ended) {
    forward.body.unshift(bytes);
    return forward;
  }
  return { ...forward, body: new PassThrough().end(bytes) };
}

