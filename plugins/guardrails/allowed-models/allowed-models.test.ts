import test from 'ava';
import { answering, ask, assertDenied, assertRefused, bootError, judge, policyGateway } from '../../../test/guardrails/helpers.js';
import { allowedModels } from './index.js';

test('params: models must be a non-empty list; output side is refused', (t) => {
  assertRefused(t, allowedModels({ models: [] }), '/models');
  t.is(bootError(allowedModels({ models: ['gpt-4o*'] })), undefined);
  t.regex(bootError(allowedModels({ models: ['x'] }), 'output')?.message ?? '', /cannot judge the output/);
});

test('exact names and * wildcards; other characters are literal', async (t) => {
  const guardrail = allowedModels({ models: ['gpt-4o*', 'llama3.1:8b'] });
  t.like(await judge(guardrail, [], { model: 'gpt-4o' }), { action: 'allow' });
  t.like(await judge(guardrail, [], { model: 'gpt-4o-mini-2024' }), { action: 'allow' });
  t.like(await judge(guardrail, [], { model: 'llama3.1:8b' }), { action: 'allow' });
  t.like(await judge(guardrail, [], { model: 'llama3x1:8b' }), { action: 'deny', reason: 'model not allowed' });
  t.like(await judge(guardrail, [], { model: 'gpt-5' }), { action: 'deny' });
  t.like(await judge(guardrail, [], { model: '' }), { action: 'deny' });
  t.like(await judge(guardrail, [], { model: 'gpt-4o-' + 'x'.repeat(100_000) }), { action: 'allow' });
  t.like(await judge(allowedModels({ models: ['modèle-ü'] }), [], { model: 'modèle-ü' }), { action: 'allow' });
});

test('through the gateway: a model off the list is refused and not sent', async (t) => {
  const setup = await policyGateway({ input: [allowedModels({ models: ['gpt-4o-mini'] })] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'hi'));
  t.is(setup.fake.requests.length, 0);
  const completion = await setup.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  t.is(completion.choices[0].message.content, 'ok');
});
