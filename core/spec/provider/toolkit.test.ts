import test from 'ava';
import { chatChunks, NdjsonDecoder, tokenUsage, type UpstreamEvent } from './index.js';

const decodeAll = (text: string, size: number): UpstreamEvent[] => {
  const decoder = new NdjsonDecoder();
  const bytes = Buffer.from(text, 'utf8');
  const events: UpstreamEvent[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) events.push(...decoder.push(bytes.subarray(offset, offset + size)));
  return [...events, ...decoder.end()];
};

test('NdjsonDecoder: one event a line, whatever the reads split (a UTF-8 sequence included), CRLF and blank lines', (t) => {
  const text = '{"a":"é€𝄞"}\r\n\n{"b":2}\n  \n{"c":[1,2]}';
  for (let size = 1; size <= text.length; size++) {
    t.deepEqual(decodeAll(text, size), [{ data: '{"a":"é€𝄞"}' }, { data: '{"b":2}' }, { data: '{"c":[1,2]}' }], `reads of ${size} bytes`);
  }
  const decoder = new NdjsonDecoder();
  t.deepEqual(decoder.push(Buffer.from('{"x":')), []);
  t.deepEqual(decoder.push(Buffer.from('1}\n{"y"')), [{ data: '{"x":1}' }]);
  t.deepEqual(decoder.end(), [{ data: '{"y"' }], 'a last line without its newline is handed on (the mapper judges it)');
  t.deepEqual(decoder.end(), []);
});

test('chatChunks: one id and created (from the clock), each choice opened once, usage null but on the usage chunk', (t) => {
  const chunks = chatChunks({ model: 'm', id: 'gen_1', clock: { now: () => 1_700_000_000_999 } });
  t.is(chunks.created, 1_700_000_000);
  const first = chunks.delta({ content: 'Hel' });
  const second = chunks.delta({ content: 'lo' });
  const other = chunks.delta({ content: 'x' }, null, 1);
  const end = chunks.finish('length');
  const usage = chunks.usage(tokenUsage(3, 2));
  t.deepEqual(first.map((chunk) => chunk.choices), [[{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }]]);
  t.is(second.length, 1);
  t.is(other.length, 2, 'choice 1 is opened on its own');
  t.deepEqual(end.map((chunk) => chunk.choices), [[{ index: 0, delta: {}, finish_reason: 'length' }]]);
  t.deepEqual(usage, { id: 'gen_1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
  t.true([...first, ...second, ...other, ...end].every((chunk) => chunk.id === 'gen_1' && chunk.usage === null && chunk.created === 1_700_000_000));
  t.regex(chatChunks({ model: 'm' }).id, /^chatcmpl-[0-9a-f]{32}$/);
});

test('tokenUsage: counts that are not finite non-negative numbers count 0; details are carried', (t) => {
  t.deepEqual(tokenUsage(undefined, '7'), { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  t.deepEqual(tokenUsage(10, 4, { prompt_tokens_details: { cached_tokens: 6 } }), { prompt_tokens_details: { cached_tokens: 6 }, prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 });
});
