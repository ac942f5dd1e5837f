import type { Readable } from 'node:stream';
import type { ForwardSlice } from '../pipeline/context.js';
import type { Usage } from '../spec/unified.js';
import { usageOf } from '../http/usage-tap.js';
import type { AttemptRecord } from './plan.js';

/** Most bytes of a failed attempt's body read for its usage; a longer body is dropped unread. */
const FAILED_BODY_LIMIT = 64 * 1024;

/** What a failed attempt's body tells: the usage it reports and its error's code and message. */
export interface FailedBody {
  readonly usage?: Usage;
  readonly code?: string;
  readonly message?: string;
}

/** A failed attempt's body being read for its usage and error. */
interface UsageRead {
  readonly usage: Promise<FailedBody | undefined>;
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
export function readFailedUsage(attempts: readonly AttemptRecord[], forward: ForwardSlice, found: (body: FailedBody) => void): void {
  const read = startRead(forward);
  read.usage.then((body) => body && found(body), () => {});
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
  let resolve!: (body: FailedBody | undefined) => void;
  const usage = new Promise<FailedBody | undefined>((settle) => (resolve = settle));
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
    resolve(size > FAILED_BODY_LIMIT ? undefined : bodyIn(Buffer.concat(chunks, size)));
  };
  const onData = (chunk: Buffer | string) => {
    take(chunk);
    if (size > FAILED_BODY_LIMIT) finish();
  };
  // An unread body holds what has arrived: an error answer's JSON is usually whole already.
  if (!body.destroyed && !body.readableFlowing) {
    for (let chunk = body.read() as Buffer | string | null; chunk !== null && size <= FAILED_BODY_LIMIT; chunk = body.read() as Buffer | string | null) take(chunk);
  }
  // A body that parses as JSON is whole.
  if (body.destroyed || body.readableEnded || size > FAILED_BODY_LIMIT || bodyIn(Buffer.concat(chunks, size)) !== undefined) {
    finish();
    return { usage, stop() {} };
  }
  body.on('data', onData);
  body.once('end', finish);
  body.once('error', finish);
  body.resume();
  return { usage, stop: finish };
}

/** The usage and error a JSON body reports (`{ "error": { "code", "type", "message" } }`, or a bare `message`); undefined when it is not whole JSON. */
function bodyIn(bytes: Buffer): FailedBody | undefined {
  const text = bytes.toString('utf8').trim();
  if (!text.startsWith('{')) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const usage = usageOf(json)?.usage;
  const record = json as { error?: unknown; message?: unknown };
  const error = typeof record.error === 'object' && record.error !== null ? (record.error as { code?: unknown; type?: unknown; message?: unknown }) : undefined;
  const code = typeof error?.code === 'string' ? error.code : typeof error?.type === 'string' ? error.type : undefined;
  const message = typeof error?.message === 'string' ? error.message : typeof record.error === 'string' ? record.error : typeof record.message === 'string' ? record.message : undefined;
  return { ...(usage ? { usage } : {}), ...(code !== undefined ? { code } : {}), ...(message !== undefined ? { message } : {}) };
}
