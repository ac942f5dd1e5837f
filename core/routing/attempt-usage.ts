import type { Readable } from 'node:stream';
import type { ForwardSlice } from '../pipeline/context.js';
import type { Usage } from '../spec/unified.js';
import { usageOf } from '../vault/usage-tap.js';
import type { AttemptRecord } from './plan.js';

/** Most bytes of a failed attempt's body read for its usage; a longer body is dropped unread. */
const FAILED_BODY_LIMIT = 64 * 1024;

/** A failed attempt's body being read for its usage. */
interface UsageRead {
  readonly usage: Promise<Usage | undefined>;
  /** Ends the read now: the usage is taken from the bytes that arrived, and the body is released. */
  stop(): void;
}

/** The reads of failed attempts' bodies, by the request's attempt list. */
const pendingReads = new WeakMap<readonly AttemptRecord[], UsageRead[]>();

/**
 * Starts reading the body of a failed attempt the route moved on from, and releases it once read:
 * `found` gets the usage its JSON reports (`usage` at the top level or under `response`/`message`,
 * as the pass-through usage tap reads it). What has already arrived is read at once; the rest
 * until {@link stopUsageReads} (when the route is done), so the client never waits for it.
 */
export function readFailedUsage(attempts: readonly AttemptRecord[], forward: ForwardSlice, found: (usage: Usage) => void): void {
  const read = startRead(forward);
  read.usage.then((usage) => usage && found(usage), () => {});
  const reads = pendingReads.get(attempts);
  if (reads) reads.push(read);
  else pendingReads.set(attempts, [read]);
}

/** Ends every read of a routed request's failed attempts, each with the bytes that arrived. */
export function stopUsageReads(attempts: readonly AttemptRecord[]): void {
  for (const read of pendingReads.get(attempts) ?? []) read.stop();
}

/** Resolves once every failed attempt's usage of a routed request is on its record. */
export async function attemptsUsageRead(attempts: readonly AttemptRecord[]): Promise<void> {
  const reads = pendingReads.get(attempts);
  if (reads) await Promise.all(reads.map((read) => read.usage));
}

function startRead(forward: ForwardSlice): UsageRead {
  const body: Readable = forward.body;
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  let resolve!: (usage: Usage | undefined) => void;
  const usage = new Promise<Usage | undefined>((settle) => (resolve = settle));
  const take = (chunk: Buffer | string) => {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(buffer);
    size += buffer.byteLength;
  };
  const finish = () => {
    if (done) return;
    done = true;
    body.off('data', onData);
    body.off('end', finish);
    body.off('error', finish);
    body.on('error', () => {});
    body.destroy();
    forward.memory.release();
    resolve(size > FAILED_BODY_LIMIT ? undefined : usageIn(Buffer.concat(chunks, size)));
  };
  const onData = (chunk: Buffer | string) => {
    take(chunk);
    if (size > FAILED_BODY_LIMIT) finish();
  };
  // An unread body holds what has arrived: an error answer's JSON is usually whole already.
  if (!body.destroyed && !body.readableFlowing) {
    for (let chunk = body.read() as Buffer | string | null; chunk !== null && size <= FAILED_BODY_LIMIT; chunk = body.read() as Buffer | string | null) take(chunk);
  }
  if (body.destroyed || body.readableEnded || size > FAILED_BODY_LIMIT || usageIn(Buffer.concat(chunks, size)) !== undefined) {
    finish();
    return { usage, stop() {} };
  }
  body.on('data', onData);
  body.once('end', finish);
  body.once('error', finish);
  body.resume();
  return { usage, stop: finish };
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
