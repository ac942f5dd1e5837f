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

test('hostile inputs (~100 KB) are judged correctly: long space runs, a long def line, many blank lines', async (t) => {
  const guardrail = codeDetection({});
  t.is(codeSignals(' '.repeat(100_000)), 0);
  t.is(codeSignals(`def ${'a'.repeat(100_000)}`), 0);
  t.is(codeSignals(' \n'.repeat(50_000)), 0);
  t.is(codeSignals(`${' \n'.repeat(50_000)}  \`\`\`js\nx\n\`\`\``), Number.POSITIVE_INFINITY);
  t.is(codeSignals(`if (x) ${' '.repeat(100_000)}y`), 0);
  t.is(codeSignals(`SELECT ${' '.repeat(100_000)}`), 0);
  // Lines just under the 2000-character bound are judged by the patterns themselves.
  t.is(codeSignals(`if (x) ${' '.repeat(1900)}y\n`.repeat(50)), 0);
  t.is(codeSignals(`if (x) {${' '.repeat(1900)}\n`.repeat(50)), 50);
  t.is(codeSignals(`def ${'a'.repeat(1900)}\n`.repeat(50)), 0);
  t.is(codeSignals(`def ${'a'.repeat(1900)}:${' '.repeat(50)}\n`.repeat(50)), 50);
  t.like(await judge(guardrail, [`${'\n'.repeat(100_000)}def run(a):\n    return a;`]), { action: 'deny' });
  t.like(await judge(guardrail, [`${' '.repeat(100_000)}\n${'\t'.repeat(1000)}prose`]), { action: 'allow' });
});

test('indented and brace-trailing lines still count; a fence needs only spaces or tabs before it', (t) => {
  t.is(codeSignals('    if (ready) {   \n        return value;\n    }   else {  \n\tSELECT id FROM t'), 4);
  t.is(codeSignals('   class Box:  '), 1);
  t.is(codeSignals(' \t ~~~\nplain'), Number.POSITIVE_INFINITY);
  t.is(codeSignals('a line ending in ``` is not a fence'), 0);
  // Lines over 2000 characters (after indentation) are not judged: a bound on the work per line.
  t.is(codeSignals(`const x = ${'1 + '.repeat(10_000)}1;\nlet y = 2;`), 1);
  t.is(codeSignals(`${' '.repeat(5000)}let y = 2;`), 1);
});
