import type { ForwardSlice } from '../pipeline/context.js';
import type { Usage } from '../spec/unified.js';
import { usageOf } from '../vault/usage-tap.js';

/** Most bytes of a failed attempt's body read for its usage; a longer body is dropped unread. */
const FAILED_BODY_LIMIT = 64 * 1024;
/** Longest wait for a failed attempt's body to end (ms); it is read while the next attempt runs. */
const FAILED_BODY_WAIT_MS = 1000;

/**
 * Reads the body of a failed attempt the route moved on from, then releases it: the usage its JSON
 * reports (`usage` at the top level or under `response`/`message`, as the pass-through usage tap
 * reads it), or undefined. Never rejects; a body that is too long, slow or not JSON reports none.
 */
export function readFailedUsage(forward: ForwardSlice): Promise<Usage | undefined> {
  const body = forward.body;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (complete: boolean) => {
      clearTimeout(timer);
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.on('error', () => {});
      body.destroy();
      forward.memory.release();
      resolve(complete ? usageIn(Buffer.concat(chunks, size)) : undefined);
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(buffer);
      size += buffer.byteLength;
      if (size > FAILED_BODY_LIMIT) finish(false);
    };
    const onEnd = () => finish(true);
    const onError = () => finish(false);
    const timer = setTimeout(() => finish(false), FAILED_BODY_WAIT_MS);
    if (body.readableEnded || body.destroyed) return finish(false);
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    body.resume();
  });
}

function usageIn(bytes: Buffer): Usage | undefined {
  const text = bytes.toString('utf8').trim();
  if (!text.startsWith('{')) return undefined;
  try {
    return usageOf(JSON.parse(text))?.usage;
  } catch {
    return undefined;
  }
}
