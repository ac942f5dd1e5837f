import test from 'ava';
import { answering, ask, assertDenied, assertRefused, bootError, judge, longText, policyGateway } from '../../../test/guardrails/helpers.js';
import { countUnits, lengthBounds } from './index.js';

test('params: unit required, at least one bound, non-negative integers, min ≤ max', (t) => {
  assertRefused(t, lengthBounds({ unit: 'words' }), 'must match a schema in anyOf');
  assertRefused(t, lengthBounds({ unit: 'lines' as never, max: 3 }), '/unit');
  assertRefused(t, lengthBounds({ unit: 'words', max: -1 }), '/max');
  assertRefused(t, lengthBounds({ unit: 'words', min: 5, max: 2 }), 'min is greater than max');
  t.is(bootError(lengthBounds({ unit: 'sentences', min: 1, max: 3 })), undefined);
});

test('counts code points, words and sentences, Unicode included', (t) => {
  t.is(countUnits('héllo 👋', 'characters'), 7);
  t.is(countUnits('Hello, wide world!', 'words'), 3);
  t.is(countUnits('Hi. How are you? Fine!', 'sentences'), 3);
  t.is(countUnits('', 'words'), 0);
  t.is(countUnits('これは日本語の文です。二つ目。', 'sentences'), 2);
});

test('bounds deny outside and allow inside (empty and very long text)', async (t) => {
  t.like(await judge(lengthBounds({ unit: 'words', max: 3 }), ['one two three four']), { action: 'deny', reason: 'words 4 above the maximum 3' });
  t.like(await judge(lengthBounds({ unit: 'words', max: 3 }), ['one two three']), { action: 'allow' });
  t.like(await judge(lengthBounds({ unit: 'characters', min: 1 }), ['']), { action: 'deny' });
  t.like(await judge(lengthBounds({ unit: 'characters', max: 100_000 }), [longText(100_001)]), { action: 'deny' });
  t.like(await judge(lengthBounds({ unit: 'sentences', min: 2 }), ['Only one.']), { action: 'deny', reason: 'sentences 1 below the minimum 2' });
});

test('through the gateway: an over-long prompt is refused', async (t) => {
  const setup = await policyGateway({ input: [lengthBounds({ unit: 'characters', max: 20 })] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'x'.repeat(21)));
  t.like(await ask(setup.client, 'short'), { content: 'ok' });
  t.is(setup.fake.requests.length, 1);
});

test.serial('a max-only bound skips segmenting texts that are no longer than the max in code units', async (t) => {
  const segment = Intl.Segmenter.prototype.segment;
  let calls = 0;
  Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, text: string) {
    calls++;
    return segment.call(this, text);
  };
  try {
    const guard = lengthBounds({ unit: 'words', max: 40 });
    t.like(await judge(guard, ['Short enough, ', 'in two parts.']), { action: 'allow' });
    t.is(calls, 0, 'no segmenting: 27 code units cannot hold more than 40 words');
    t.like(await judge(guard, ['a '.repeat(30)]), { action: 'allow' }, '60 code units, 30 words');
    t.true(calls > 0, 'longer texts are counted');
    t.like(await judge(guard, ['a '.repeat(41)]), { action: 'deny', reason: 'words 41 above the maximum 40' });
  } finally {
    Intl.Segmenter.prototype.segment = segment;
  }
});
