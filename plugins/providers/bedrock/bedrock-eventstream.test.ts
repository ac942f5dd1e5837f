import test from 'ava';
import { crc32 } from 'node:zlib';
import { bedrockStreamFrames } from './bedrock-fake.js';
import { DECODE_ERROR_EVENT, EventStreamDecoder, encodeMessage, parseHeaders } from './bedrock-eventstream.js';
import type { UpstreamEvent } from '../../../core/spec/index.js';

const wire = Buffer.concat(bedrockStreamFrames('converse-stream-tool-use.jsonl'));
const frameCount = bedrockStreamFrames('converse-stream-tool-use.jsonl').length;

function decodeAll(bytes: Buffer, splits: number[]): UpstreamEvent[] {
  const decoder = new EventStreamDecoder();
  const events: UpstreamEvent[] = [];
  let start = 0;
  for (const split of [...splits, bytes.length]) {
    events.push(...decoder.push(bytes.subarray(start, split)));
    start = split;
  }
  events.push(...decoder.end());
  return events;
}

test('whole stream in one read: every frame, with event type and JSON payload', (t) => {
  const events = decodeAll(wire, []);
  t.is(events.length, frameCount);
  t.is(events[0].event, 'messageStart');
  t.deepEqual(JSON.parse(events[0].data), { p: 'abcdefgh', role: 'assistant' });
  t.is(events.at(-1)?.event, 'metadata');
});

test('split at every byte offset (two reads) gives the same events', (t) => {
  const reference = decodeAll(wire, []);
  for (let offset = 1; offset < wire.length; offset++) {
    const events = decodeAll(wire, [offset]);
    if (JSON.stringify(events) !== JSON.stringify(reference)) {
      t.fail(`split at ${offset} changed the events`);
      return;
    }
  }
  t.pass();
});

test('one byte per read gives the same events', (t) => {
  const splits = Array.from({ length: wire.length - 1 }, (_, index) => index + 1);
  t.deepEqual(decodeAll(wire, splits), decodeAll(wire, []));
});

test('exceptions and error messages become named events', (t) => {
  const events = decodeAll(Buffer.concat(bedrockStreamFrames('converse-stream-exception.jsonl')), []);
  t.is(events.at(-1)?.event, 'exception:modelStreamErrorException');
  const error = decodeAll(encodeMessage({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'boom' }, ''), []);
  t.deepEqual(error, [{ event: 'error', data: '{"code":"InternalFailure","message":"boom"}' }]);
});

test('a corrupted prelude CRC yields one decode error and nothing after it', (t) => {
  const corrupted = Buffer.from(wire);
  corrupted[8] ^= 0xff;
  const events = decodeAll(corrupted, [3, 40]);
  t.is(events.length, 1);
  t.is(events[0].event, DECODE_ERROR_EVENT);
  t.regex(events[0].data, /prelude checksum/);
});

test('a corrupted payload byte fails the message CRC; frames before it are kept', (t) => {
  const first = bedrockStreamFrames('converse-stream-tool-use.jsonl')[0].length;
  const corrupted = Buffer.from(wire);
  corrupted[first + 30] ^= 0x01;
  const events = decodeAll(corrupted, []);
  t.is(events.length, 2);
  t.is(events[0].event, 'messageStart');
  t.is(events[1].event, DECODE_ERROR_EVENT);
  t.regex(events[1].data, /message checksum/);
});

test('a truncated stream reports the partial frame at the end', (t) => {
  const events = decodeAll(wire.subarray(0, wire.length - 5), [17]);
  t.is(events.length, frameCount);
  t.is(events.at(-1)?.event, DECODE_ERROR_EVENT);
  t.regex(events.at(-1)!.data, /ended inside a frame/);
});

test('an impossible length with a valid prelude CRC is refused, not waited for', (t) => {
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(0x7fffffff, 0);
  prelude.writeUInt32BE(0, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const events = new EventStreamDecoder().push(prelude);
  t.is(events[0].event, DECODE_ERROR_EVENT);
});

test('malformed headers inside a frame with valid CRCs are a decode error', (t) => {
  const headers = Buffer.from([5, ...Buffer.from('hello'), 42, 0, 0]);
  const total = 12 + headers.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(headers.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  headers.copy(frame, 12);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  t.throws(() => parseHeaders(headers), { instanceOf: RangeError });
  t.is(new EventStreamDecoder().push(frame)[0].event, DECODE_ERROR_EVENT);
});

test('random bytes never throw, in any read size', (t) => {
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  for (let round = 0; round < 300; round++) {
    const bytes = Buffer.alloc(random() % 400);
    for (let index = 0; index < bytes.length; index++) bytes[index] = random() & 0xff;
    const decoder = new EventStreamDecoder();
    t.notThrows(() => {
      for (let offset = 0; offset < bytes.length; offset += 1 + (random() % 50)) decoder.push(bytes.subarray(offset, offset + 1 + (random() % 50)));
      decoder.end();
    });
  }
});

test('all header value types are parsed', (t) => {
  const parts = [
    Buffer.from([1, 0x61, 0]), // a: true
    Buffer.from([1, 0x62, 1]), // b: false
    Buffer.from([1, 0x63, 2, 0xff]), // c: byte -1
    Buffer.from([1, 0x64, 3, 0x01, 0x00]), // d: short 256
    Buffer.from([1, 0x65, 4, 0, 0, 0x01, 0x00]), // e: int 256
    Buffer.from([1, 0x66, 5, 0, 0, 0, 0, 0, 0, 0, 7]), // f: long 7
    Buffer.from([1, 0x67, 6, 0, 2, 9, 8]), // g: bytes
    Buffer.from([1, 0x68, 8, 0, 0, 0, 0, 0, 0, 0, 1]), // h: timestamp
    Buffer.from([1, 0x69, 9, ...new Array(16).fill(3)]), // i: uuid
  ];
  const headers = parseHeaders(Buffer.concat(parts));
  t.like(headers, { a: true, b: false, c: -1, d: 256, e: 256, f: 7n, h: 1n });
  t.deepEqual([...(headers.g as Uint8Array)], [9, 8]);
  t.is((headers.i as Uint8Array).length, 16);
});
