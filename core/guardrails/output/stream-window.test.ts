import test from 'ava';
import { chatAnswerText } from '../../api/answer-text.js';
import { pii } from '../../../plugins/guardrails/pii/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import type { GuardrailRecord } from '../slice.js';
import type { ChatCompletionChunk } from '../../spec/unified.js';
import { PolicyRegistry } from '../registry.js';
import { releasePoint, StreamJudge } from './stream-window.js';

test('sentence windows release up to the last sentence end, or all but holdChars past maxChars', (t) => {
  t.is(releasePoint('One. Two? Three', { kind: 'sentence' }), 9);
  t.is(releasePoint('a line\nnext', { kind: 'sentence' }), 7);
  t.is(releasePoint('version 1.2 is out', { kind: 'sentence' }), 0);
  t.is(releasePoint('x'.repeat(20), { kind: 'sentence', maxChars: 10, holdChars: 4 }), 16);
  t.is(releasePoint('日本語です。 続き', { kind: 'sentence' }), 6);
});

test('character windows hold back the last N characters and never split a surrogate pair', (t) => {
  t.is(releasePoint('abcdefgh', { kind: 'chars', size: 3 }), 5);
  t.is(releasePoint('ab', { kind: 'chars', size: 3 }), 0);
  const text = 'ab😀cd'; // the emoji is two UTF-16 units at 2 and 3
  t.is(releasePoint(text, { kind: 'chars', size: 3 }), 2);
});

const chunk = (content: string | undefined, finish: string | null = null): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish }],
});

test('the judge holds text back, redacts a span split across chunks and aggregates one record per guardrail', async (t) => {
  const policies = new PolicyRegistry({ p: { output: [pii({})] } }, () => pluginDependencies());
  const records: GuardrailRecord[] = [];
  const judge = new StreamJudge(policies.get('p')!, { operation: 'chat', metadata: {}, parameters: {} }, records, chatAnswerText.chunk);
  const released: string[] = [];
  for (const piece of ['Mail ana@ex', 'ample.com. Then', ' more', ' text.']) {
    const step = await judge.push(chunk(piece));
    t.falsy(step.stop);
    released.push(...step.chunks.map((out) => out.choices[0].delta.content ?? ''));
  }
  // " Then more text." has no sentence end yet (a '.' counts once whitespace follows): held back.
  t.deepEqual(released, ['Mail [REDACTED_EMAIL].']);
  const last = await judge.push(chunk(undefined, 'stop'));
  t.deepEqual(last.chunks[0].choices[0], { index: 0, delta: { content: ' Then more text.' }, finish_reason: 'stop' });
  t.is(records.length, 1);
  t.like(records[0], { guardrail: 'pii', side: 'output', verdict: { action: 'transform', changes: { email: 1 } } });
  t.true((records[0].checks ?? 0) >= 4);
});

test('a denial mid-stream stops with a content_filter chunk and drops the held text', async (t) => {
  const policies = new PolicyRegistry({ p: { output: [pii({ action: 'deny' })] } }, () => pluginDependencies());
  const judge = new StreamJudge(policies.get('p')!, { operation: 'chat', metadata: {}, parameters: {} }, [], chatAnswerText.chunk);
  t.deepEqual((await judge.push(chunk('Fine. My card is 4111 1111'))).chunks[0].choices[0].delta, { content: 'Fine.' });
  const step = await judge.push(chunk(' 1111 1111 ok'));
  t.true(step.stop);
  t.deepEqual(step.chunks[0].choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'content_filter' }]);
  t.deepEqual(await judge.push(chunk('more')), { chunks: [] });
});
