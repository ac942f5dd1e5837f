import test from 'ava';
import type { Restorer } from '../../spec/guardrail.js';
import { chainedRestorer, ChunkRestorer, restoreValue } from './restore.js';

/** A restorer of two issued placeholders, written like a masking guardrail's (any `<X_n>` is a candidate). */
function restorerOf(values: Record<string, string>): Restorer {
  return {
    restore: (text, json) => text.replace(/<[A-Z]+_\d+>/g, (placeholder) => (placeholder in values ? (json ? JSON.stringify(values[placeholder]).slice(1, -1) : values[placeholder]) : placeholder)),
    heldFrom(text) {
      const start = text.lastIndexOf('<');
      return start !== -1 && /^<(?:[A-Z]+(?:_\d*)?)?$/.test(text.slice(start)) ? start : text.length;
    },
  };
}

const VALUES = { '<EMAIL_1>': 'ana@example.com', '<PHONE_1>': '+44 20 7946 0958' };
const restorer = restorerOf(VALUES);

/** A seeded generator (mulberry32), so that a failing split can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** `text` cut at 0 to 11 random places (empty pieces included). */
function randomSplit(text: string, next: () => number): string[] {
  const cuts = Array.from({ length: Math.floor(next() * 12) }, () => Math.floor(next() * (text.length + 1))).sort((left, right) => left - right);
  const pieces: string[] = [];
  let position = 0;
  for (const cut of cuts) {
    pieces.push(text.slice(position, cut));
    position = cut;
  }
  pieces.push(text.slice(position));
  return pieces;
}

interface Chunk {
  id: string;
  choices: Array<{ index: number; delta: { content?: string; tool_calls?: Array<{ index: number; function: { arguments: string } }> }; finish_reason: string | null }>;
  usage: null;
}
const contentChunk = (content: string, finish: string | null = null): Chunk => ({ id: 'c', choices: [{ index: 0, delta: { content }, finish_reason: finish }], usage: null });

/** What a client reassembles: each choice's content and each tool call's arguments. */
function reassemble(chunks: readonly Chunk[]): { content: string; args: string } {
  let content = '';
  let args = '';
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) args += call.function.arguments;
    }
  }
  return { content, args };
}

const ANSWER = 'Write to <EMAIL_1> or call <PHONE_1>; <EMAIL_7> is not ours, nor <B> or <EMAIL_ or a < b.<';
const RESTORED = 'Write to ana@example.com or call +44 20 7946 0958; <EMAIL_7> is not ours, nor <B> or <EMAIL_ or a < b.<';

test('1,000 random splits of a streamed answer: every placeholder restored whole, nothing else changed, nothing lost', (t) => {
  const next = random(37);
  let failures = 0;
  for (let round = 0; round < 1000; round++) {
    const pieces = randomSplit(ANSWER, next);
    const chunkRestorer = new ChunkRestorer<Chunk>(restorer);
    // Half the streams finish with a chunk of their own, half end without one (the stream's end releases the rest).
    const finish = round % 2 === 0;
    const out = pieces.map((piece) => chunkRestorer.push(contentChunk(piece)));
    if (finish) out.push(chunkRestorer.push(contentChunk('', 'stop')));
    const rest = chunkRestorer.end();
    // A choice that finishes takes what was held for it: nothing is left for the end.
    if (finish && rest) failures++;
    if (rest) out.push(rest);
    if (reassemble(out).content !== RESTORED) failures++;
    // No fragment sent ever shows part of a placeholder this request issued.
    if (out.some((chunk) => /<EMAIL_1$|<PHONE|^MAIL_1>/.test(chunk.choices[0]?.delta.content ?? ''))) failures++;
  }
  t.is(failures, 0);
});

test('tool-call arguments split across chunks are restored, escaped as JSON string content', (t) => {
  const quoted = restorerOf({ '<NAME_1>': 'Ana "the" \\ Lopez' });
  const args = '{"to":"<NAME_1>","cc":"<NAME_2>"}';
  const next = random(7);
  for (let round = 0; round < 200; round++) {
    const chunkRestorer = new ChunkRestorer<Chunk>(quoted);
    const out = randomSplit(args, next).map((piece) =>
      chunkRestorer.push({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }], usage: null }),
    );
    out.push(chunkRestorer.push({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: null }));
    t.deepEqual(JSON.parse(reassemble(out).args), { to: 'Ana "the" \\ Lopez', cc: '<NAME_2>' });
  }
});

test('choices and tool calls are separate texts: a prefix held in one is never completed by another', (t) => {
  const chunkRestorer = new ChunkRestorer<Chunk>(restorer);
  const first = chunkRestorer.push({ id: 'c', choices: [{ index: 0, delta: { content: 'a <EMA' }, finish_reason: null }, { index: 1, delta: { content: 'b <EMA' }, finish_reason: null }], usage: null });
  t.deepEqual(first.choices.map((choice) => choice.delta.content), ['a ', 'b ']);
  const second = chunkRestorer.push({ id: 'c', choices: [{ index: 1, delta: { content: 'IL_1>!' }, finish_reason: 'stop' }], usage: null });
  t.is(second.choices[0].delta.content, 'ana@example.com!');
  // Choice 0 never finished: the end releases its held text as it was.
  t.deepEqual(chunkRestorer.end()?.choices, [{ index: 0, delta: { content: '<EMA' } }]);
});

test('a choice cut by the output guardrails (content_filter) gets nothing of what was held for it', (t) => {
  const chunkRestorer = new ChunkRestorer<Chunk>(restorer);
  t.is(chunkRestorer.push(contentChunk('Mail <EMA')).choices[0].delta.content, 'Mail ');
  t.deepEqual(chunkRestorer.push({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }], usage: null }).choices[0].delta, {});
  t.is(chunkRestorer.end(), undefined);
});

test('whole answers: every string restored, the same object back when nothing changed', (t) => {
  const answer = {
    choices: [{ message: { content: 'Mail <EMAIL_1>, not <EMAIL_9>', tool_calls: [{ function: { name: 'send', arguments: '{"to":"<EMAIL_1>"}' } }] } }],
    output: [{ type: 'function_call', arguments: '{"phone":"<PHONE_1>"}' }],
    content: [{ type: 'tool_use', input: { to: ['<EMAIL_1>'] } }],
  };
  t.deepEqual(restoreValue(answer, restorer), {
    choices: [{ message: { content: 'Mail ana@example.com, not <EMAIL_9>', tool_calls: [{ function: { name: 'send', arguments: '{"to":"ana@example.com"}' } }] } }],
    output: [{ type: 'function_call', arguments: '{"phone":"+44 20 7946 0958"}' }],
    content: [{ type: 'tool_use', input: { to: ['ana@example.com'] } }],
  });
  const untouched = { choices: [{ message: { content: 'no placeholder <here>' } }] };
  t.is(restoreValue(untouched, restorer), untouched);
});

test('chained restorers undo the transforms last first', (t) => {
  const first = restorerOf({ '<EMAIL_1>': 'ana@example.com' });
  const second = restorerOf({ '<NOTE_1>': 'see <EMAIL_1>' });
  t.is(chainedRestorer([first, second]).restore('<NOTE_1>.', false), 'see ana@example.com.');
});
