import test from 'ava';
import { answering, ask, assertDenied, assertRefused, bootError, judge, longText, policyGateway } from '../../../test/guardrails/helpers.js';
import { regex } from './index.js';

test('params: a missing pattern, a non-string pattern or an unknown flag is refused at boot, naming the field', (t) => {
  assertRefused(t, regex({} as never), 'pattern');
  assertRefused(t, regex({ pattern: 42 } as never), '/pattern');
  assertRefused(t, regex({ pattern: 'x', flags: 'gy' }), '/flags');
  assertRefused(t, regex({ pattern: 'x', mode: 'block' as never }), '/mode');
  t.is(bootError(regex({ pattern: '\\d{4}', flags: 'i', mode: 'redact' })), undefined);
});

test('params: an invalid expression fails boot', (t) => {
  const error = bootError(regex({ pattern: '(unclosed' }));
  t.regex(error?.message ?? '', /"regex".*Invalid regular expression/);
});

test('deny mode: a match denies, no match allows (Unicode, empty, very long)', async (t) => {
  const guardrail = regex({ pattern: 'project\\s+(?:falcon|фалькон)', flags: 'iu', label: 'codename' });
  t.like(await judge(guardrail, ['Tell me about Project Falcon']), { action: 'deny', reason: 'text matches the codename expression', flagged: ['Project Falcon'] });
  t.like(await judge(guardrail, ['Расскажи про project Фалькон 🦅']), { action: 'deny' });
  t.like(await judge(guardrail, ['Tell me about falcons']), { action: 'allow' });
  t.like(await judge(guardrail, ['']), { action: 'allow' });
  t.like(await judge(guardrail, [longText(200_000)]), { action: 'allow' });
  t.like(await judge(guardrail, [`${longText(200_000)} project falcon`]), { action: 'deny' });
});

test('redact mode rewrites every match and counts them, never quoting them', async (t) => {
  const guardrail = regex({ pattern: 'ORD-\\d{6}', mode: 'redact', replacement: '[ORDER]', label: 'order' });
  const verdict = await judge(guardrail, ['Orders ORD-123456 and ORD-654321 — ✓', 'none here']);
  t.deepEqual(verdict, { action: 'transform', texts: ['Orders [ORDER] and [ORDER] — ✓', 'none here'], changes: { order: 2 }, flagged: ['ORD-123456', 'ORD-654321'] });
});

test('partial text: a match touching the end waits for more text', async (t) => {
  const guardrail = regex({ pattern: 'ORD-\\d+', mode: 'redact' });
  t.like(await judge(guardrail, ['see ORD-12'], { partial: true }), { action: 'allow' });
  t.like(await judge(guardrail, ['see ORD-1234 ok'], { partial: true }), { action: 'transform' });
});

test('through the gateway: an input match is refused with 400 guardrail_denied and never sent upstream', async (t) => {
  const setup = await policyGateway({ input: [regex({ pattern: 'forbidden' })] }, answering('fine'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'this is forbidden'));
  t.is(setup.fake.requests.length, 0);
  t.like(await ask(setup.client, 'this is fine'), { content: 'fine', finishReason: 'stop' });
});
