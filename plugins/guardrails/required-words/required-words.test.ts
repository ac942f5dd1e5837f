import test from 'ava';
import { answering, ask, assertRefused, bootError, judge, longText, policyGateway } from '../../../test/guardrails/helpers.js';
import { requiredWords } from './index.js';

test('params: words required; match is any or all', (t) => {
  assertRefused(t, requiredWords({} as never), 'words');
  assertRefused(t, requiredWords({ words: ['a'], match: 'some' as never }), '/match');
  t.is(bootError(requiredWords({ words: ['a'], match: 'all' })), undefined);
});

test('any: one listed word suffices; all: each must appear', async (t) => {
  t.like(await judge(requiredWords({ words: ['disclaimer', 'note'] }), ['A short note.']), { action: 'allow' });
  t.like(await judge(requiredWords({ words: ['disclaimer', 'note'] }), ['Nothing here.']), { action: 'deny', reason: 'text contains none of the required words' });
  t.like(await judge(requiredWords({ words: ['disclaimer', 'note'], match: 'all' }), ['A short note.']), { action: 'deny', reason: 'text lacks a required word' });
  t.like(await judge(requiredWords({ words: ['disclaimer', 'note'], match: 'all' }), ['Disclaimer: see the note']), { action: 'allow' });
});

test('Unicode, case, whole words, empty and very long text', async (t) => {
  t.like(await judge(requiredWords({ words: ['Übersicht'] }), ['Eine ÜBERSICHT 📋']), { action: 'allow' });
  t.like(await judge(requiredWords({ words: ['Übersicht'], caseSensitive: true }), ['Eine ÜBERSICHT']), { action: 'deny' });
  t.like(await judge(requiredWords({ words: ['note'] }), ['notebook']), { action: 'deny' });
  t.like(await judge(requiredWords({ words: ['note'] }), ['']), { action: 'deny' });
  t.like(await judge(requiredWords({ words: ['note'] }), [longText(200_000) + ' note']), { action: 'allow' });
});

test('through the gateway: an answer lacking the required word is filtered; one with it passes', async (t) => {
  const setup = await policyGateway({ output: [requiredWords({ words: ['Sources'] })] }, answering('No citations here.'));
  t.teardown(() => setup.close());
  t.deepEqual(await ask(setup.client, 'hi'), { content: null, finishReason: 'content_filter' });
  setup.fake.handle(answering('Sources: the manual.'));
  t.deepEqual(await ask(setup.client, 'hi'), { content: 'Sources: the manual.', finishReason: 'stop' });
});
