import { crc32 } from 'node:zlib';
import type { StreamDecoder, UpstreamEvent } from '../../../core/spec/index.js';

/**
 * The `application/vnd.amazon.eventstream` framing of AWS's streaming APIs (Bedrock, SageMaker). A message is
 * `total length (u32) | headers length (u32) | prelude CRC32 (u32) | headers | payload | message CRC32 (u32)`,
 * big-endian; a header is `name length (u8) | name | type (u8) | value`.
 */

/** Event name the decoder gives a framing problem; the stream mapper turns it into a stream error. */
export const DECODE_ERROR_EVENT = 'eventstream-decode-error';

const PRELUDE = 12;
const CHECKSUM = 4;
/** Frames larger than this are refused as corrupt (AWS caps messages at 16 MiB). */
const MAX_MESSAGE = 16 * 1024 * 1024;

export type HeaderValue = string | number | boolean | bigint | Uint8Array;

export interface EventStreamMessage {
  readonly headers: Record<string, HeaderValue>;
  readonly payload: Uint8Array;
}

/** Parses the headers section; throws a RangeError on any malformed byte. */
export function parseHeaders(bytes: Uint8Array): Record<string, HeaderValue> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headers: Record<string, HeaderValue> = {};
  let offset = 0;
  const need = (count: number) => {
    if (offset + count > bytes.byteLength) throw new RangeError('eventstream header runs past its section');
  };
  while (offset < bytes.byteLength) {
    need(1);
    const nameLength = view.getUint8(offset++);
    need(nameLength + 1);
    const name = Buffer.from(bytes.subarray(offset, offset + nameLength)).toString('utf8');
    offset += nameLength;
    const type = view.getUint8(offset++);
    let value: HeaderValue;
    switch (type) {
      case 0:
      case 1:
        value = type === 0;
        break;
      case 2:
        need(1);
        value = view.getInt8(offset);
        offset += 1;
        break;
      case 3:
        need(2);
        value = view.getInt16(offset);
        offset += 2;
        break;
      case 4:
        need(4);
        value = view.getInt32(offset);
        offset += 4;
        break;
      case 5:
      case 8:
        need(8);
        value = view.getBigInt64(offset);
        offset += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = view.getUint16(offset);
        offset += 2;
        need(length);
        const raw = bytes.subarray(offset, offset + length);
        value = type === 7 ? Buffer.from(raw).toString('utf8') : Uint8Array.from(raw);
        offset += length;
        break;
      }
      case 9:
        need(16);
        value = Uint8Array.from(bytes.subarray(offset, offset + 16));
        offset += 16;
        break;
      default:
        throw new RangeError(`eventstream header "${name}" has unknown type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * One message to the event a stream mapper reads: an event's `:event-type` as the name and its
 * payload as data; an exception as `exception:<type>`; an error message as `error` with its code
 * and message as JSON.
 */
function toUpstreamEvent(message: EventStreamMessage, base64Events: ReadonlySet<string>): UpstreamEvent {
  const { headers } = message;
  const eventType = String(headers[':event-type'] ?? '');
  // A binary payload (a piece of a byte stream, cut anywhere) stays bytes: decoding it here could split a character.
  if (base64Events.has(eventType) && String(headers[':message-type'] ?? 'event') === 'event') return { event: eventType, data: Buffer.from(message.payload).toString('base64') };
  const payload = Buffer.from(message.payload).toString('utf8');
  const messageType = String(headers[':message-type'] ?? 'event');
  if (messageType === 'exception') return { event: `exception:${String(headers[':exception-type'] ?? 'unknown')}`, data: payload };
  if (messageType === 'error') {
    return { event: 'error', data: JSON.stringify({ code: String(headers[':error-code'] ?? ''), message: String(headers[':error-message'] ?? '') }) };
  }
  return { event: eventType, data: payload };
}

/**
 * Incremental decoder: frames may be split across reads anywhere. Both checksums are verified; a
 * corrupt or truncated frame yields one {@link DECODE_ERROR_EVENT} and everything after it is
 * ignored (a length field that cannot be trusted leaves no way to find the next frame). Never throws.
 */
export class EventStreamDecoder implements StreamDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private failed = false;
  private readonly base64Events: ReadonlySet<string>;

  /** `base64Events`: event types whose payload is raw bytes (SageMaker's `PayloadPart`), given as base64 data. */
  constructor(options: { base64Events?: readonly string[] } = {}) {
    this.base64Events = new Set(options.base64Events ?? []);
  }

  push(bytes: Uint8Array): UpstreamEvent[] {
    if (this.failed) return [];
    this.buffer = this.buffer.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.buffer, bytes]);
    const events: UpstreamEvent[] = [];
    while (this.buffer.length >= PRELUDE) {
      const total = this.buffer.readUInt32BE(0);
      const headersLength = this.buffer.readUInt32BE(4);
      if (crc32(this.buffer.subarray(0, 8)) !== this.buffer.readUInt32BE(8)) return this.fail(events, 'prelude checksum mismatch');
      if (total < PRELUDE + CHECKSUM || total > MAX_MESSAGE || headersLength > total - PRELUDE - CHECKSUM) {
        return this.fail(events, `impossible frame length ${total}`);
      }
      if (this.buffer.length < total) break;
      const frame = this.buffer.subarray(0, total);
      if (crc32(frame.subarray(0, total - CHECKSUM)) !== frame.readUInt32BE(total - CHECKSUM)) return this.fail(events, 'message checksum mismatch');
      try {
        const headers = parseHeaders(frame.subarray(PRELUDE, PRELUDE + headersLength));
        events.push(toUpstreamEvent({ headers, payload: frame.subarray(PRELUDE + headersLength, total - CHECKSUM) }, this.base64Events));
      } catch (error) {
        return this.fail(events, (error as Error).message);
      }
      this.buffer = this.buffer.subarray(total);
    }
    return events;
  }

  end(): UpstreamEvent[] {
    if (this.failed || this.buffer.length === 0) return [];
    const left = this.buffer.length;
    return this.fail([], `stream ended inside a frame (${left} bytes left)`);
  }

  private fail(events: UpstreamEvent[], reason: string): UpstreamEvent[] {
    this.failed = true;
    this.buffer = Buffer.alloc(0);
    events.push({ event: DECODE_ERROR_EVENT, data: reason });
    return events;
  }
}

function encodeHeaders(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBytes = Buffer.from(name, 'utf8');
    const valueBytes = Buffer.from(value, 'utf8');
    const head = Buffer.alloc(1 + nameBytes.length + 3);
    head.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(head, 1);
    head.writeUInt8(7, 1 + nameBytes.length);
    head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    parts.push(head, valueBytes);
  }
  return Buffer.concat(parts);
}

/** Encodes one message with string headers (for fakes and tests: what AWS sends). */
export function encodeMessage(headers: Record<string, string>, payload: string | Uint8Array): Buffer {
  const headerBytes = encodeHeaders(headers);
  const payloadBytes = Buffer.from(payload);
  const total = PRELUDE + headerBytes.length + payloadBytes.length + CHECKSUM;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(headerBytes.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  headerBytes.copy(frame, PRELUDE);
  payloadBytes.copy(frame, PRELUDE + headerBytes.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - CHECKSUM)), total - CHECKSUM);
  return frame;
}

/** A ConverseStream event frame as Bedrock sends it. */
export const encodeEvent = (eventType: string, payload: unknown): Buffer =>
  encodeMessage({ ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify(payload));

/** A modelled exception frame (e.g. `throttlingException`). */
export const encodeException = (exceptionType: string, message: string): Buffer =>
  encodeMessage({ ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }));
