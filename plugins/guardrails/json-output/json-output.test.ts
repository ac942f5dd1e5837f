import test from 'ava';
import { answering, ask, assertRefused, bootError, judge, longText, policyGateway } from '../../../test/guardrails/helpers.js';
import { jsonOutput } from './index.js';

test('params: allowFence is a boolean; the guardrail judges output only', (t) => {
  assertRefused(t, jsonOutput({ allowFence: 'yes' as never }), '/allowFence');
  t.is(bootError(jsonOutput({})), undefined);
  t.regex(bootError(jsonOutput({}), 'input')?.message ?? '', /"json-output" cannot judge the input/);
});

test('parseable JSON passes; anything else is denied (Unicode, empty, very long)', async (t) => {
  const guardrail = jsonOutput({});
  t.like(await judge(guardrail, ['{"name":"Zoë 🐙","tags":[1,2]}'], { side: 'output' }), { action: 'allow' });
  t.like(await judge(guardrail, ['{"name": "Zoë"'], { side: 'output' }), { action: 'deny', reason: 'answer is not valid JSON' });
  t.like(await judge(guardrail, [''], { side: 'output' }), { action: 'deny' });
  t.like(await judge(guardrail, [JSON.stringify({ text: longText(500_000) })], { side: 'output' }), { action: 'allow' });
  t.like(await judge(guardrail, ['Sure! {"a":1}'], { side: 'output' }), { action: 'deny' });
});

test('a fenced answer passes only when fences are allowed', async (t) => {
  const fenced = '```json\n{"a": 1}\n```';
  t.like(await judge(jsonOutput({}), [fenced], { side: 'output' }), { action: 'deny' });
  t.like(await judge(jsonOutput({ allowFence: true }), [fenced], { side: 'output' }), { action: 'allow' });
});

test('through the gateway: a prose answer is filtered, a JSON one passes', async (t) => {
  const setup = await policyGateway({ output: [jsonOutput({})] }, answering('Here you go: a, b'));
  t.teardown(() => setup.close());
  t.deepEqual(await ask(setup.client, 'json please'), { content: null, finishReason: 'content_filter' });
  setup.fake.handle(answering('{"items":["a","b"]}'));
  t.deepEqual(await ask(setup.client, 'json please'), { content: '{"items":["a","b"]}', finishReason: 'stop' });
});
