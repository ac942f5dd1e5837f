import test from 'ava';
import { answering, ask, assertRefused, bootError, judge, policyGateway } from '../../../test/guardrails/helpers.js';
import { gatewayHeaders } from '../../../test/harness.js';
import { allowedOperations } from './index.js';

test('params: operations must be known names', (t) => {
  assertRefused(t, allowedOperations({ operations: ['chatting' as never] }), '/operations/0');
  assertRefused(t, allowedOperations({ operations: [] }), '/operations');
  t.is(bootError(allowedOperations({ operations: ['chat', 'embed'] })), undefined);
  t.is(bootError(allowedOperations({ operations: ['generateContent', 'geminiCountTokens', 'geminiEmbed', 'geminiModels'] })), undefined, 'the Gemini API\'s operations may be listed');
});

test('listed operations pass, others are denied', async (t) => {
  const guardrail = allowedOperations({ operations: ['chat'] });
  t.like(await judge(guardrail, ['héllo'], { operation: 'chat' }), { action: 'allow' });
  t.deepEqual(await judge(guardrail, [], { operation: 'passthrough' }), { action: 'deny', reason: 'operation passthrough not allowed', flagged: [] });
  t.like(await judge(guardrail, [''], { operation: 'embed' }), { action: 'deny' });
});

test('through the gateway: chat allowed, a pass-through request refused before it is forwarded', async (t) => {
  const setup = await policyGateway({ input: [allowedOperations({ operations: ['chat'] })] }, answering('ok'));
  t.teardown(() => setup.close());
  t.like(await ask(setup.client, 'hi'), { content: 'ok' });
  const response = await fetch(`${setup.gateway.url}/v1/embeddings`, {
    method: 'POST',
    headers: gatewayHeaders(setup.fake.baseUrl, { 'content-type': 'application/json' }),
    body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hi' }),
  });
  t.is(response.status, 400);
  t.like(await response.json(), { error: { code: 'guardrail_denied', type: 'invalid_request_error' } });
  t.is(setup.fake.requests.length, 1);
});
