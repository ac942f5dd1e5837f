import test from 'ava';
import { answering, ask, assertDenied, assertRefused, bootError, judge, policyGateway } from '../../../test/guardrails/helpers.js';
import { maxTokens } from './index.js';

test('params: max is a positive integer; action is cap or deny', (t) => {
  assertRefused(t, maxTokens({ max: 0 }), '/max');
  assertRefused(t, maxTokens({ max: 1.5 }), '/max');
  assertRefused(t, maxTokens({ max: 10, action: 'trim' as never }), '/action');
  t.is(bootError(maxTokens({ max: 10, action: 'deny' })), undefined);
});

test('cap lowers a larger limit or sets a missing one; deny refuses only a larger one', async (t) => {
  t.deepEqual(await judge(maxTokens({ max: 100 }), ['hi'], { parameters: { maxTokens: 500 } }), { action: 'transform', parameters: { maxTokens: 100 }, changes: { maxTokens: 1 } });
  t.like(await judge(maxTokens({ max: 100 }), ['hi'], { parameters: {} }), { action: 'transform', parameters: { maxTokens: 100 } });
  t.like(await judge(maxTokens({ max: 100 }), ['hi'], { parameters: { maxTokens: 100 } }), { action: 'allow' });
  t.like(await judge(maxTokens({ max: 100, action: 'deny' }), [''], { parameters: { maxTokens: 101 } }), { action: 'deny', reason: 'token limit 101 above 100' });
  t.like(await judge(maxTokens({ max: 100, action: 'deny' }), ['ünïcødé'], { parameters: {} }), { action: 'allow' });
});

test('through the gateway: the forwarded request carries the cap in the field the client used', async (t) => {
  const setup = await policyGateway({ input: [maxTokens({ max: 64 })] }, answering('ok'));
  t.teardown(() => setup.close());
  await ask(setup.client, 'hi', { max_tokens: 4000 });
  await ask(setup.client, 'hi', { max_completion_tokens: 4000 });
  await ask(setup.client, 'hi');
  const sent = setup.fake.requests.map((request) => request.json());
  t.is(sent[0].max_tokens, 64);
  t.is(sent[1].max_completion_tokens, 64);
  t.is(sent[1].max_tokens, undefined);
  t.is(sent[2].max_tokens, 64);
  const entry = (await setup.gateway.waitForEntries(3))[0];
  t.deepEqual(entry.guardrails[0], { guardrail: 'max-tokens', policy: 'tested', side: 'input', action: 'transform', ms: entry.guardrails[0].ms, changes: { maxTokens: 1 } });
});

test('through the gateway: deny mode answers 400', async (t) => {
  const setup = await policyGateway({ input: [maxTokens({ max: 64, action: 'deny' })] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'hi', { max_tokens: 65 }));
  t.is(setup.fake.requests.length, 0);
});
