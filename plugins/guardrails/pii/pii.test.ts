import test from 'ava';
import { answering, ask, askStream, assertDenied, assertRefused, bootError, judge, longText, policyGateway, streaming } from '../../../test/guardrails/helpers.js';
import { pii } from './index.js';
import { detectPii, ibanValid, luhnValid, PII_TYPES } from './pii-detect.js';

const ALL = new Set(PII_TYPES);
const kinds = (text: string) => detectPii(text, ALL, false).map((span) => [span.kind, text.slice(span.start, span.end)]);

test('params: actions are redact, deny or allow; unknown types are refused', (t) => {
  assertRefused(t, pii({ action: 'block' as never }), '/action');
  assertRefused(t, pii({ types: { passport: 'deny' } as never }), '/types');
  assertRefused(t, pii({ types: { card: 'hide' as never } }), '/types/card');
  t.is(bootError(pii({ types: { card: 'deny', ipv4: 'allow' } })), undefined);
});

test('checksums: Luhn and IBAN mod 97', (t) => {
  t.true(luhnValid('4111111111111111'));
  t.false(luhnValid('4111111111111112'));
  t.true(ibanValid('GB82 WEST 1234 5698 7654 32'));
  t.true(ibanValid('DE89370400440532013000'));
  t.false(ibanValid('GB82 WEST 1234 5698 7654 33'));
});

test('detects each type in running text', (t) => {
  t.deepEqual(kinds('mail ana.lopez+work@example.co.uk today'), [['email', 'ana.lopez+work@example.co.uk']]);
  t.deepEqual(kinds('call +44 20 7946 0958 or +1 (415) 555-2671 or 212-555-0199'), [
    ['phone', '+44 20 7946 0958'],
    ['phone', '+1 (415) 555-2671'],
    ['phone', '212-555-0199'],
  ]);
  t.deepEqual(kinds('card 4111 1111 1111 1111, amex 3782-822463-10005'), [
    ['card', '4111 1111 1111 1111'],
    ['card', '3782-822463-10005'],
  ]);
  t.deepEqual(kinds('IBAN GB82 WEST 1234 5698 7654 32 PLEASE'), [['iban', 'GB82 WEST 1234 5698 7654 32']]);
  t.deepEqual(kinds('SSN 123-45-6789'), [['ssn', '123-45-6789']]);
  t.deepEqual(kinds('hosts 192.168.1.20 and 2001:db8::8a2e:370:7334.'), [
    ['ipv4', '192.168.1.20'],
    ['ipv6', '2001:db8::8a2e:370:7334'],
  ]);
  t.deepEqual(kinds('key sk-proj-abcdefghijklmnopqrstuvwx and AKIAABCDEFGHIJKLMNOP'), [
    ['secret', 'sk-proj-abcdefghijklmnopqrstuvwx'],
    ['secret', 'AKIAABCDEFGHIJKLMNOP'],
  ]);
});

test('negatives: near misses are not PII', (t) => {
  t.deepEqual(kinds('card 4111 1111 1111 1112 fails Luhn'), []);
  t.deepEqual(kinds('IBAN GB82 WEST 1234 5698 7654 33 has a bad checksum'), []);
  t.deepEqual(kinds('version 1.2.3.4.5, time 12:30:45, 999-12-3456, 000-12-3456'), []);
  t.deepEqual(kinds('the year 2024 and 42 apples, user@localhost'), []);
  t.deepEqual(kinds('256.1.1.1 is not an address'), []);
  t.deepEqual(kinds(''), []);
});

test('Unicode around PII, and very long text', (t) => {
  t.deepEqual(kinds('Écris à josé@example.com? non: jose@example.com 🙂'), [['email', 'jose@example.com']]);
  const text = `${longText(300_000)} card 4111111111111111.`;
  t.deepEqual(kinds(text), [['card', '4111111111111111']]);
});

test('redact (default) replaces spans and counts them by type, never keeping values', async (t) => {
  const verdict = await judge(pii({}), ['mail a@b.io, card 4111 1111 1111 1111', 'ip 10.0.0.1']);
  t.deepEqual(verdict, {
    action: 'transform',
    texts: ['mail [REDACTED_EMAIL], card [REDACTED_CARD]', 'ip [REDACTED_IPV4]'],
    changes: { email: 1, card: 1, ipv4: 1 },
    flagged: ['a@b.io', '4111 1111 1111 1111', '10.0.0.1'],
  });
});

test('per-type actions: deny one type, allow another, custom replacement', async (t) => {
  const guardrail = pii({ types: { card: 'deny', ipv4: 'allow' }, replacement: '<{type}>' });
  t.deepEqual(await judge(guardrail, ['card 4111111111111111']), { action: 'deny', reason: 'PII detected: card', flagged: ['4111111111111111'] });
  t.deepEqual(await judge(guardrail, ['ip 10.0.0.1, mail a@b.io']), { action: 'transform', texts: ['ip 10.0.0.1, mail <EMAIL>'], changes: { email: 1 }, flagged: ['a@b.io'] });
  t.deepEqual(await judge(pii({ action: 'allow' }), ['a@b.io']), { action: 'allow' });
});

test('partial text: a span touching the end is left for later', async (t) => {
  t.like(await judge(pii({}), ['write to a@b.co'], { partial: true }), { action: 'allow' });
  t.like(await judge(pii({}), ['write to a@b.com soon'], { partial: true }), { action: 'transform' });
});

test('through the gateway: input PII is redacted before it leaves; pii-block style input is refused', async (t) => {
  const setup = await policyGateway({ input: [pii({ types: { ssn: 'deny' } })] }, answering('ok'));
  t.teardown(() => setup.close());
  await ask(setup.client, 'I am ana@example.com, card 4111-1111-1111-1111');
  t.is(setup.fake.requests.length, 1);
  const sent = setup.fake.requests[0].json();
  t.is(sent.messages[0].content, 'I am [REDACTED_EMAIL], card [REDACTED_CARD]');
  t.false(setup.fake.requests[0].body.toString().includes('4111'));
  await assertDenied(t, ask(setup.client, 'my SSN is 123-45-6789'));
  t.is(setup.fake.requests.length, 1);
});

test('a card followed by more digits is still found (the longest Luhn-valid prefix at a group boundary)', (t) => {
  t.deepEqual(kinds('Card 4111 1111 1111 1111 12/25'), [['card', '4111 1111 1111 1111']]);
  t.deepEqual(kinds('pay with 4111111111111111 123'), [['card', '4111111111111111']]);
  t.deepEqual(kinds('card 4111-1111-1111-1111-99 ok'), [['card', '4111-1111-1111-1111']]);
  t.deepEqual(kinds('amex 3782 822463 10005 77'), [['card', '3782 822463 10005']]);
  // Digits glued to the card are not a group boundary: a 19-digit run that fails Luhn stays unflagged.
  t.deepEqual(kinds('ref 4111111111111111123'), []);
  t.deepEqual(kinds('card 4111 1111 1111 1112 34 fails Luhn'), []);
});

test('cards followed by more digits are redacted in a plain answer and in a stream', async (t) => {
  const answer = 'Card 4111 1111 1111 1111 12/25, or pay with 4111111111111111 123.';
  const setup = await policyGateway({ output: [pii({})] }, answering(answer));
  t.teardown(() => setup.close());
  const redacted = 'Card [REDACTED_CARD] 12/25, or pay with [REDACTED_CARD] 123.';
  t.like(await ask(setup.client, 'hi'), { content: redacted });
  setup.fake.handle(streaming(['Card 4111 11', '11 1111 1111 1', '2/25, or pay with 41111111', '11111111 1', '23.']));
  t.like(await askStream(setup.client, 'hi'), { content: redacted, finishReason: 'stop' });
});

test('phones: one digit per step; runs of + and digits (~100 KB) find only 8 to 15 digit numbers', (t) => {
  t.deepEqual(kinds('+33 1 42 68 53 00, +49 (30) 901820, +61.2.9876.5432, +1-212-555-0199'), [
    ['phone', '+33 1 42 68 53 00'],
    ['phone', '+49 (30) 901820'],
    ['phone', '+61.2.9876.5432'],
    ['phone', '+1-212-555-0199'],
  ]);
  t.deepEqual(kinds('+1234567 is short, +1234567890123456 is long'), []);
  t.deepEqual(kinds('+1111111111111111 '.repeat(6_000)), []);
  const phones = kinds('+44 20 7946 0958 '.repeat(6_000));
  t.is(phones.length, 6_000);
  t.deepEqual(phones[5_999], ['phone', '+44 20 7946 0958']);
});
