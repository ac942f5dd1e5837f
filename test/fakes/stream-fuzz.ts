import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chatStreamShape } from '../../core/api/chat-stream.js';
import { relayStream } from '../../core/api/stream-relay.js';
import { SseDecoder } from '../../core/http/sse.js';
import type { ChatStreamMapper } from '../../core/spec/index.js';

/** A fixture file of a provider plugin, as text. */
export const providerFixture = (provider: string, name: string): string =>
  readFileSync(join(process.cwd(), 'plugins/providers', provider, '__fixtures__', name), 'utf8');

/** The lines of a stream fixture (one event per line). */
export const fixtureLines = (provider: string, name: string): string[] => providerFixture(provider, name).split('\n').filter(Boolean);

/** Stream fixture lines as SSE wire text; `named` adds `event: <type>` lines as Anthropic does. */
export function sseWire(lines: string[], named: boolean): string {
  return lines.map((line) => `${named ? `event: ${(JSON.parse(line) as { type?: string }).type ?? 'message'}\n` : ''}data: ${line}\n\n`).join('');
}

/** Deterministic pseudo-random bytes (xorshift), so a failing case can be replayed. */
export function randomBytes(seed: number, length: number): Uint8Array {
  let state = seed || 1;
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[index] = state & 0xff;
  }
  return bytes;
}

/**
 * Runs `pieces` through the core's stream relay with `mapper` (as the gateway does) and returns what
 * the client would receive. The relay must never throw, whatever the bytes.
 */
export async function relayText(pieces: Uint8Array[], mapper: ChatStreamMapper, options: { includeUsage?: boolean; strict?: boolean } = {}): Promise<string> {
  async function* upstream() {
    for (const piece of pieces) yield piece;
  }
  const stream = relayStream({
    shape: chatStreamShape,
    upstream: upstream(),
    origin: 'http://127.0.0.1',
    decoder: new SseDecoder(),
    mapper,
    includeUsage: options.includeUsage ?? true,
    strict: options.strict ?? true,
    signal: new AbortController().signal,
    provider: 'test',
    observe: { usage() {}, model() {}, firstToken() {}, end() {} },
  });
  let text = '';
  for await (const piece of stream) text += Buffer.isBuffer(piece) ? piece.toString('utf8') : String(piece);
  return text;
}

/** The JSON payloads of the `data:` events a client received (without `[DONE]`). */
export const clientEvents = (text: string): Array<Record<string, any>> =>
  text
    .split('\n\n')
    .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
    .map((event) => JSON.parse(event.slice(6)));

/** Splits `bytes` into pieces of `size` (the last may be shorter). */
export function split(bytes: Uint8Array, size: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) pieces.push(bytes.subarray(offset, offset + size));
  return pieces;
}
