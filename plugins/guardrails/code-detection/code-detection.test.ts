import test from 'ava';
import { answering, ask, assertDenied, assertRefused, bootError, judge, longText, policyGateway } from '../../../test/guardrails/helpers.js';
import { codeDetection, codeSignals } from './index.js';

test('params: minLines is a positive integer', (t) => {
  assertRefused(t, codeDetection({ minLines: 0 }), '/minLines');
  t.is(bootError(codeDetection({ minLines: 3 })), undefined);
});

test('code in several languages is detected', async (t) => {
  const guardrail = codeDetection({});
  const samples = [
    '```\nanything\n```',
    'def add(a, b):\n    return a + b\nprint(add(1, 2))',
    'const total = items.reduce((a, b) => a + b, 0);\nconsole.log(total);',
    '#include <stdio.h>\nint main(void) {\n  printf("hi");\n}',
    'SELECT name FROM users WHERE id = 1;\nDELETE FROM users;',
    'fn main() {\n    println!("hi");\n}',
    '$ sudo rm -rf /tmp/x\n$ git push origin main',
  ];
  for (const sample of samples) t.like(await judge(guardrail, [sample]), { action: 'deny', reason: 'text contains code' }, sample);
});

test('prose is not code (Unicode, empty, very long, a single code-like line)', async (t) => {
  const guardrail = codeDetection({});
  for (const sample of ['Here is how you bake bread: mix, knead, wait.', 'Привет! Как дела? 😊', '', longText(200_000), 'Call print() to show it.']) {
    t.like(await judge(guardrail, [sample]), { action: 'allow' }, sample.slice(0, 40));
  }
  t.is(codeSignals('x = 1;'), 1);
  t.like(await judge(codeDetection({ minLines: 1 }), ['x = 1;']), { action: 'deny' });
});

test('through the gateway: a prompt with code is refused', async (t) => {
  const setup = await policyGateway({ input: [codeDetection({})] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'fix this:\n```js\nlet x = 1\n```'));
  t.like(await ask(setup.client, 'tell me a story'), { content: 'ok' });
  t.is(setup.fake.requests.length, 1);
});
