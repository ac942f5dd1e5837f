import test from 'ava';
import { answering, ask, assertDenied, assertRefused, bootError, judge, policyGateway } from '../../../test/guardrails/helpers.js';
import { requiredMetadata } from './index.js';

test('params: keys must be a non-empty list of names', (t) => {
  assertRefused(t, requiredMetadata({ keys: [] }), '/keys');
  assertRefused(t, requiredMetadata({ keys: [3] } as never), '/keys/0');
  t.is(bootError(requiredMetadata({ keys: ['team'] })), undefined);
});

test('every key must be present with a non-empty value', async (t) => {
  const guardrail = requiredMetadata({ keys: ['team', 'équipe'] });
  t.like(await judge(guardrail, [], { metadata: { team: 'search', équipe: 'recherche 🔍' } }), { action: 'allow' });
  t.deepEqual(await judge(guardrail, [], { metadata: { team: 'search' } }), { action: 'deny', reason: 'metadata lacks équipe', flagged: [] });
  t.like(await judge(guardrail, [], { metadata: { team: '', équipe: 'x' } }), { action: 'deny' });
  t.like(await judge(guardrail, [], { metadata: {} }), { action: 'deny' });
});

test('through the gateway: x-gateway-metadata must carry the key', async (t) => {
  const setup = await policyGateway({ input: [requiredMetadata({ keys: ['team'] })] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'hi'));
  const completion = await setup.client.chat.completions.create(
    { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
    { headers: { 'x-gateway-metadata': JSON.stringify({ team: 'search' }) } },
  );
  t.is(completion.choices[0].message.content, 'ok');
  t.is(setup.fake.requests.length, 1);
});
