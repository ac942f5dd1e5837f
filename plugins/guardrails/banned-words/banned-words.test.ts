import test from 'ava';
import { answering, ask, assertRefused, bootError, judge, longText, policyGateway } from '../../../test/guardrails/helpers.js';
import { bannedWords } from './index.js';

test('params: words must be a non-empty list of non-empty strings; options must be booleans', (t) => {
  assertRefused(t, bannedWords({ words: [] }), '/words');
  assertRefused(t, bannedWords({ words: [''] }), '/words/0');
  assertRefused(t, bannedWords({ words: ['x'], wholeWord: 'yes' as never }), '/wholeWord');
  t.is(bootError(bannedWords({ words: ['x'], caseSensitive: true })), undefined);
});

test('whole-word matching (default) does not match inside words; substring matching does', async (t) => {
  t.like(await judge(bannedWords({ words: ['ass'] }), ['I am your assistant']), { action: 'allow' });
  t.like(await judge(bannedWords({ words: ['ass'] }), ['what an ass!']), { action: 'deny', reason: 'text contains a banned word' });
  t.like(await judge(bannedWords({ words: ['ass'], wholeWord: false }), ['I am your assistant']), { action: 'deny' });
});

test('case options, phrases and Unicode word boundaries', async (t) => {
  t.like(await judge(bannedWords({ words: ['Secret Plan'] }), ['the SECRET PLAN is here']), { action: 'deny' });
  t.like(await judge(bannedWords({ words: ['Secret Plan'], caseSensitive: true }), ['the SECRET PLAN is here']), { action: 'allow' });
  t.like(await judge(bannedWords({ words: ['café'] }), ['Un CAFÉ, merci ☕']), { action: 'deny' });
  // "é" is a letter: "cafés" is another word under whole-word matching.
  t.like(await judge(bannedWords({ words: ['café'] }), ['deux cafés']), { action: 'allow' });
  t.like(await judge(bannedWords({ words: ['東京'] }), ['行き先は 東京 です']), { action: 'deny' });
});

test('empty and very long text', async (t) => {
  const guardrail = bannedWords({ words: ['forbidden'] });
  t.like(await judge(guardrail, ['']), { action: 'allow' });
  t.like(await judge(guardrail, [longText(300_000)]), { action: 'allow' });
  t.like(await judge(guardrail, [longText(300_000) + ' forbidden.']), { action: 'deny' });
});

test('partial text: a word at the very end waits (it may continue)', async (t) => {
  const guardrail = bannedWords({ words: ['ass'] });
  t.like(await judge(guardrail, ['you are an ass'], { partial: true }), { action: 'allow' });
  t.like(await judge(guardrail, ['you are an ass.'], { partial: true }), { action: 'deny' });
});

test('through the gateway: a banned word in the answer becomes finish_reason content_filter with null content', async (t) => {
  const setup = await policyGateway({ output: [bannedWords({ words: ['darn'] })] }, answering('Well, darn it.'));
  t.teardown(() => setup.close());
  t.deepEqual(await ask(setup.client, 'hi'), { content: null, finishReason: 'content_filter' });
});
