import test from 'ava';
import type { UpstreamEvent } from '../spec/provider.js';
import { SSE_DONE, SseDecoder, sseData } from './sse.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Feeds `chunks` to a fresh decoder, then ends it; returns every event in order. */
function decodeChunks(chunks: readonly Uint8Array[]): UpstreamEvent[] {
  const decoder = new SseDecoder();
  const events: UpstreamEvent[] = [];
  for (const chunk of chunks) events.push(...decoder.push(chunk));
  events.push(...decoder.end());
  return events;
}

const decode = (text: string): UpstreamEvent[] => decodeChunks([encode(text)]);

/** Deterministic PRNG (mulberry32) so that failures reproduce. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const FIXTURE_LF = [
  'event: greeting',
  'data: héllo 🌍',
  '',
  ': a comment with ü',
  'data: {"text":"naïve — 日本語"}',
  'data: second line 🎉',
  '',
  'id: 7',
  'retry: 1000',
  'data:no-space',
  '',
  'data',
  'data: after an empty data line',
  '',
  'data: [DONE]',
  '',
  '',
].join('\n');

const EXPECTED: UpstreamEvent[] = [
  { event: 'greeting', data: 'héllo 🌍' },
  { data: '{"text":"naïve — 日本語"}\nsecond line 🎉' },
  { data: 'no-space' },
  { data: '\nafter an empty data line' },
  { data: '[DONE]' },
];

const FIXTURE_CRLF = FIXTURE_LF.replaceAll('\n', '\r\n');
const FIXTURE_CR = FIXTURE_LF.replaceAll('\n', '\r');
/** Line endings cycle through LF, CRLF and CR; a blank line after a CR ends in CR (CR + LF would be one ending). */
const FIXTURE_MIXED = (() => {
  let text = '';
  FIXTURE_LF.split('\n')
    .slice(0, -1)
    .forEach((line, index) => {
      const ending = line === '' && text.endsWith('\r') ? '\r' : ['\n', '\r\n', '\r'][index % 3];
      text += line + ending;
    });
  return text;
})();

test('one event per push', (t) => {
  const decoder = new SseDecoder();
  t.deepEqual(decoder.push(encode('data: one\n\n')), [{ data: 'one' }]);
  t.deepEqual(decoder.push(encode('data: two\n\n')), [{ data: 'two' }]);
  t.deepEqual(decoder.push(encode('event: done\ndata: three\n\n')), [{ event: 'done', data: 'three' }]);
  t.deepEqual(decoder.end(), []);
});

test('several events in one push come out in order', (t) => {
  t.deepEqual(decode('data: 1\n\ndata: 2\n\ndata: 3\n\n'), [{ data: '1' }, { data: '2' }, { data: '3' }]);
});

test('an event is returned by the push that completes it, not earlier', (t) => {
  const decoder = new SseDecoder();
  t.deepEqual(decoder.push(encode('data: a')), []);
  t.deepEqual(decoder.push(encode('bc\n')), []);
  t.deepEqual(decoder.push(encode('\n')), [{ data: 'abc' }]);
});

test('the fixture decodes to the expected events with LF, CRLF, CR and mixed line endings', (t) => {
  t.deepEqual(decode(FIXTURE_LF), EXPECTED);
  t.deepEqual(decode(FIXTURE_CRLF), EXPECTED);
  t.deepEqual(decode(FIXTURE_CR), EXPECTED);
  t.deepEqual(decode(FIXTURE_MIXED), EXPECTED);
});

for (const [name, fixture] of [
  ['LF', FIXTURE_LF],
  ['CRLF', FIXTURE_CRLF],
  ['CR', FIXTURE_CR],
  ['mixed', FIXTURE_MIXED],
] as const) {
  test(`${name}: a split at every byte offset gives identical events`, (t) => {
    const bytes = encode(fixture);
    t.true(bytes.length > fixture.length, 'the fixture holds multibyte UTF-8');
    for (let offset = 0; offset <= bytes.length; offset++) {
      const events = decodeChunks([bytes.subarray(0, offset), bytes.subarray(offset)]);
      if (JSON.stringify(events) !== JSON.stringify(EXPECTED)) {
        t.deepEqual(events, EXPECTED, `split at byte ${offset}`);
        return;
      }
    }
    t.pass();
  });
}

test('a split at every pair of byte offsets gives identical events (CRLF)', (t) => {
  const bytes = encode(FIXTURE_CRLF);
  for (let first = 1; first < bytes.length; first++) {
    for (let second = first + 1; second < bytes.length; second++) {
      const events = decodeChunks([bytes.subarray(0, first), bytes.subarray(first, second), bytes.subarray(second)]);
      if (JSON.stringify(events) !== JSON.stringify(EXPECTED)) {
        t.deepEqual(events, EXPECTED, `split at bytes ${first} and ${second}`);
        return;
      }
    }
  }
  t.pass();
});

test('one byte per push gives identical events', (t) => {
  for (const fixture of [FIXTURE_LF, FIXTURE_CRLF, FIXTURE_CR, FIXTURE_MIXED]) {
    const bytes = encode(fixture);
    const chunks = Array.from(bytes, (_, index) => bytes.subarray(index, index + 1));
    t.deepEqual(decodeChunks(chunks), EXPECTED);
  }
});

test('an empty push between CR and LF does not split the line ending in two', (t) => {
  // "\r" then "\n" is one line ending however the bytes arrive, even when an empty read comes between.
  const events = decodeChunks([encode('data: a\r'), new Uint8Array(0), encode('\ndata: b\r\n\r\n')]);
  t.deepEqual(events, [{ data: 'a\nb' }]);
});

test('empty pushes anywhere else change nothing', (t) => {
  const bytes = encode(FIXTURE_LF);
  const chunks: Uint8Array[] = [new Uint8Array(0)];
  for (let index = 0; index < bytes.length; index += 5) chunks.push(bytes.subarray(index, index + 5), new Uint8Array(0));
  t.deepEqual(decodeChunks(chunks), EXPECTED);
});

test('CRLF split between CR and LF is one line ending, not a blank line', (t) => {
  const decoder = new SseDecoder();
  t.deepEqual(decoder.push(encode('data: a\r')), []);
  t.deepEqual(decoder.push(encode('\ndata: b\r')), []);
  t.deepEqual(decoder.push(encode('\n\r')), [{ data: 'a\nb' }]);
  t.deepEqual(decoder.push(encode('\n')), []);
  t.deepEqual(decoder.end(), []);
});

test('lone CR: two CRs end an event', (t) => {
  t.deepEqual(decode('data: x\r\rdata: y\r\r'), [{ data: 'x' }, { data: 'y' }]);
});

test('CR LF LF is a line ending followed by a blank line', (t) => {
  t.deepEqual(decode('data: x\r\n\ndata: y\n\r\n'), [{ data: 'x' }, { data: 'y' }]);
});

test('event: names the event; the name resets after dispatch', (t) => {
  t.deepEqual(decode('event: delta\ndata: 1\n\ndata: 2\n\nevent: a\nevent: b\ndata: 3\n\n'), [
    { event: 'delta', data: '1' },
    { data: '2' },
    { event: 'b', data: '3' },
  ]);
});

test('multi-line data is joined with LF', (t) => {
  t.deepEqual(decode('data: one\ndata: two\ndata:\ndata: four\n\n'), [{ data: 'one\ntwo\n\nfour' }]);
});

test('only one leading space of a value is removed', (t) => {
  t.deepEqual(decode('data:  two spaces\n\ndata:\ttab\n\ndata:x: y\n\n'), [{ data: ' two spaces' }, { data: '\ttab' }, { data: 'x: y' }]);
});

test('comment lines are ignored, also between data lines', (t) => {
  t.deepEqual(decode(': keep-alive\n\n:\ndata: a\n: inside\ndata: b\n\n: trailing\n\n'), [{ data: 'a\nb' }]);
});

test('a field without colon has an empty value', (t) => {
  t.deepEqual(decode('data\n\n'), [{ data: '' }]);
  t.deepEqual(decode('data\ndata\n\n'), [{ data: '\n' }]);
  const named = decode('event\ndata: x\n\n');
  t.is(named.length, 1);
  t.is(named[0].data, 'x');
  t.is(named[0].event ?? '', '');
});

test('unknown fields, id and retry do not produce events', (t) => {
  t.deepEqual(decode('id: 1\nretry: 5\nfoo: bar\n\n'), []);
  t.deepEqual(decode('id: 1\ndata: z\nfoo\n\n'), [{ data: 'z' }]);
});

test('field names are case-sensitive', (t) => {
  t.deepEqual(decode('Data: x\nEVENT: y\n\n'), []);
});

test('blank lines without data dispatch nothing', (t) => {
  t.deepEqual(decode('\n\n\r\n\r\r\n'), []);
  t.deepEqual(decode('event: lonely\n\ndata: x\n\n'), [{ data: 'x' }]);
});

test('an event without trailing blank line is discarded at end()', (t) => {
  const decoder = new SseDecoder();
  t.deepEqual(decoder.push(encode('data: complete\n\ndata: incomplete\n')), [{ data: 'complete' }]);
  t.deepEqual(decoder.end(), []);
  t.deepEqual(decode('data: no newline at all'), []);
  t.deepEqual(decode('data: one newline\n'), []);
  t.deepEqual(decode('data: cr\r'), []);
});

test('a multibyte character split across pushes is decoded whole', (t) => {
  const bytes = encode('data: 🌍\n\n');
  const decoder = new SseDecoder();
  t.deepEqual(decoder.push(bytes.subarray(0, 7)), []);
  t.deepEqual(decoder.push(bytes.subarray(7, 8)), []);
  t.deepEqual(decoder.push(bytes.subarray(8)), [{ data: '🌍' }]);
});

test('invalid UTF-8 becomes U+FFFD instead of throwing', (t) => {
  const bytes = new Uint8Array([...encode('data: '), 0xff, 0xc3, ...encode('\n\n')]);
  t.deepEqual(decodeChunks([bytes]), [{ data: '\ufffd\ufffd' }]);
});

test('a leading UTF-8 byte order mark is ignored', (t) => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encode('data: x\n\n')]);
  t.deepEqual(decodeChunks([bytes]), [{ data: 'x' }]);
  t.deepEqual(decodeChunks([bytes.subarray(0, 2), bytes.subarray(2)]), [{ data: 'x' }]);
});

test('200 random byte buffers never throw and decode the same whatever the split', (t) => {
  const random = prng(0x5eed);
  const alphabet = [...encode('data: event:id\r\n\r\n:xé🌍')];
  for (let round = 0; round < 200; round++) {
    const length = Math.floor(random() * 400);
    const bytes = new Uint8Array(length);
    for (let index = 0; index < length; index++) {
      bytes[index] = random() < 0.7 ? alphabet[Math.floor(random() * alphabet.length)] : Math.floor(random() * 256);
    }
    let whole: UpstreamEvent[] = [];
    t.notThrows(() => {
      whole = decodeChunks([bytes]);
    }, `round ${round}`);
    const chunks: Uint8Array[] = [];
    for (let index = 0; index < length; ) {
      const size = 1 + Math.floor(random() * 16);
      chunks.push(bytes.subarray(index, index + size));
      index += size;
    }
    let split: UpstreamEvent[] = [];
    t.notThrows(() => {
      split = decodeChunks(chunks);
    });
    t.deepEqual(split, whole, `round ${round}`);
  }
});

test('truncated input never throws and yields a prefix of the full events', (t) => {
  for (const fixture of [FIXTURE_LF, FIXTURE_CRLF, FIXTURE_CR]) {
    const bytes = encode(fixture);
    for (let length = 0; length <= bytes.length; length++) {
      let events: UpstreamEvent[] = [];
      t.notThrows(() => {
        events = decodeChunks([bytes.subarray(0, length)]);
      });
      t.deepEqual(events, EXPECTED.slice(0, events.length), `truncated at ${length}`);
    }
  }
});

test('sseData and SSE_DONE round-trip through the decoder', (t) => {
  t.is(sseData('{"a":1}'), 'data: {"a":1}\n\n');
  t.deepEqual(decode(sseData('{"a":1}') + SSE_DONE), [{ data: '{"a":1}' }, { data: '[DONE]' }]);
});
