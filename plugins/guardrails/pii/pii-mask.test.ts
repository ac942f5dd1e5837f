import test from 'ava';
import type { GuardrailVerdict } from '../../../core/spec/index.js';
import { bootError, judge } from '../../../test/guardrails/helpers.js';
import { pii } from './index.js';

const transformed = (verdict: GuardrailVerdict) => {
  if (verdict.action !== 'transform') throw new Error(`expected a transform, got ${verdict.action}`);
  return verdict;
};

test('params: mask is an action, for all types or per type', (t) => {
  t.is(bootError(pii({ action: 'mask' })), undefined);
  t.is(bootError(pii({ types: { email: 'mask', card: 'deny' } })), undefined);
});

test('mask: stable placeholders per type, the same value the same placeholder across texts; the restorer puts them back', async (t) => {
  const verdict = transformed(await judge(pii({ action: 'mask' }), ['Mail ana@example.com or bo@example.org, call +44 20 7946 0958', 'again: ana@example.com']));
  t.deepEqual(verdict.texts, ['Mail <EMAIL_1> or <EMAIL_2>, call <PHONE_1>', 'again: <EMAIL_1>']);
  t.deepEqual(verdict.changes, { email: 3, phone: 1 });
  t.deepEqual(verdict.flagged, ['ana@example.com', 'bo@example.org', '+44 20 7946 0958', 'ana@example.com']);
  const restorer = verdict.restorer!;
  t.is(restorer.restore('To <EMAIL_2>, cc <EMAIL_1>; <PHONE_1>.', false), 'To bo@example.org, cc ana@example.com; +44 20 7946 0958.');
});

test('mask: a placeholder the request never issued is not restored to anything', async (t) => {
  const restorer = transformed(await judge(pii({ action: 'mask' }), ['ana@example.com'])).restorer!;
  t.is(restorer.restore('<EMAIL_7> <EMAIL_2> <PHONE_1> <CARD_1> <EMAIL_1>', false), '<EMAIL_7> <EMAIL_2> <PHONE_1> <CARD_1> ana@example.com');
  // Another request's restorer knows only its own values.
  const other = transformed(await judge(pii({ action: 'mask' }), ['zed@example.net'])).restorer!;
  t.is(other.restore('<EMAIL_1>', false), 'zed@example.net');
});

test('mask: a placeholder the user typed is never given a value (its number is skipped)', async (t) => {
  const verdict = transformed(await judge(pii({ action: 'mask' }), ['I literally wrote <EMAIL_1>; my mail is ana@example.com']));
  t.deepEqual(verdict.texts, ['I literally wrote <EMAIL_1>; my mail is <EMAIL_2>']);
  t.is(verdict.restorer!.restore('<EMAIL_1> <EMAIL_2>', false), '<EMAIL_1> ana@example.com');
});

test('mask beside other actions: redacted and masked types in one text; deny still wins', async (t) => {
  const guardrail = pii({ types: { email: 'mask', card: 'redact', ssn: 'deny' } });
  const verdict = transformed(await judge(guardrail, ['ana@example.com paid with 4111 1111 1111 1111']));
  t.deepEqual(verdict.texts, ['<EMAIL_1> paid with [REDACTED_CARD]']);
  t.is(verdict.restorer!.restore('<EMAIL_1> [REDACTED_CARD]', false), 'ana@example.com [REDACTED_CARD]');
  t.like(await judge(guardrail, ['ana@example.com 123-45-6789']), { action: 'deny' });
});

test('mask on the output side redacts: nothing would follow to restore it', async (t) => {
  const verdict = transformed(await judge(pii({ action: 'mask' }), ['mail ana@example.com'], { side: 'output' }));
  t.deepEqual(verdict.texts, ['mail [REDACTED_EMAIL]']);
  t.is(verdict.restorer, undefined);
});

test('heldFrom: what may still grow into a placeholder at the end of a text', async (t) => {
  const restorer = transformed(await judge(pii({ action: 'mask' }), ['ana@example.com'])).restorer!;
  for (const text of ['a <', 'a <E', 'a <EMAIL', 'a <EMAIL_', 'a <EMAIL_12']) t.is(restorer.heldFrom(text), 2, text);
  for (const text of ['a <EMAIL_1>', 'a < b', 'a <email', 'a <EMAIL_1x', 'plain', `<${'A'.repeat(30)}`]) t.is(restorer.heldFrom(text), text.length, text);
});

test('JSON text: a value restored inside tool-call arguments is escaped as string content', async (t) => {
  const restorer = transformed(await judge(pii({ action: 'mask' }), ['ana@example.com'])).restorer!;
  t.is(restorer.restore('{"to":"<EMAIL_1>"}', true), '{"to":"ana@example.com"}');
});

test('mask across a conversation: the carried mapping keeps its placeholders, numbers new values on, and is restored even when nothing new is masked', async (t) => {
  const first = transformed(await judge(pii({ action: 'mask' }), ['Mail ana@example.com']));
  const carried = first.restorer!.carry!();
  t.false(carried.includes('<EMAIL_2>'));
  const second = transformed(await judge(pii({ action: 'mask' }), ['Also bo@example.org and ana@example.com'], { carried }));
  t.deepEqual(second.texts, ['Also <EMAIL_2> and <EMAIL_1>']);
  t.deepEqual(second.flagged, ['bo@example.org', 'ana@example.com', 'ana@example.com', 'bo@example.org']);
  t.is(second.restorer!.restore('<EMAIL_1>, <EMAIL_2>, <EMAIL_3>', false), 'ana@example.com, bo@example.org, <EMAIL_3>');
  // A turn with nothing new still restores (and flags) what the conversation carried.
  const third = transformed(await judge(pii({ action: 'mask' }), ['Thanks'], { carried: second.restorer!.carry!() }));
  t.deepEqual(third.texts, ['Thanks']);
  t.deepEqual(third.changes, {});
  t.deepEqual(third.flagged, ['ana@example.com', 'bo@example.org']);
  t.is(third.restorer!.restore('<EMAIL_2>', false), 'bo@example.org');
  // A tampered or foreign carry carries nothing; output checks ignore it.
  t.is((await judge(pii({ action: 'mask' }), ['Thanks'], { carried: '{"<EMAIL_1>":"x"}' })).action, 'transform');
  t.is((await judge(pii({ action: 'mask' }), ['Thanks'], { side: 'output', carried })).action, 'allow');
});

test('mask: conceal is the reverse of restore, JSON-escaped inside JSON text', async (t) => {
  const restorer = transformed(await judge(pii({ action: 'mask' }), ['Mail ana@example.com, call +44 20 7946 0958'])).restorer!;
  const answer = 'To <EMAIL_1> or <PHONE_1>, not <EMAIL_7>';
  t.is(restorer.conceal!(restorer.restore(answer, false), false), answer);
  t.is(restorer.conceal!('{"to":"ana@example.com"}', true), '{"to":"<EMAIL_1>"}');
});
