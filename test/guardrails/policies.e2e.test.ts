import test from 'ava';
import { BootError } from '../../core/errors.js';
import { step } from '../../core/guardrails/policy.js';
import { PolicyRegistry } from '../../core/guardrails/registry.js';
import { allowedModels, bannedWords, defineGuardrail, maxTokens, pii, regex, requiredWords } from '../../plugins/guardrails/index.js';
import type { Hook } from '../../core/pipeline/hook.js';
import { startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, loggedOnce, sdkClient, startGateway, traceId } from '../harness.js';
import { pluginDependencies } from '../plugin-dependencies.js';
import { answering, ask, assertDenied, policyGateway } from './helpers.js';

test('input denial: 400 guardrail_denied with a generic message, nothing sent upstream, the log names the guardrail', async (t) => {
  const setup = await policyGateway({ input: [regex({ pattern: 'ok' }), bannedWords({ words: ['plutonium'] })] }, answering('fine'), {});
  t.teardown(() => setup.close());
  const trace = traceId('input-deny');
  const error = await t.throwsAsync(
    setup.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'buy plutonium' }] }, { headers: { 'x-gateway-trace-id': trace } }),
  );
  t.like(error as object, { status: 400, type: 'invalid_request_error', code: 'guardrail_denied', message: "400 The request was refused by the gateway's content policy." });
  t.false((error as Error).message.includes('banned'), 'the reason is not revealed by default');
  t.is(setup.fake.requests.length, 0);
  const entry = await loggedOnce(setup.gateway, trace);
  t.like(entry, { status: 400, outcome: 'error', guardrailPolicy: 'tested', error: { code: 'guardrail_denied' } });
  t.deepEqual(
    entry.guardrails.map(({ guardrail, side, action, reason }) => ({ guardrail, side, action, reason })),
    [
      { guardrail: 'regex', side: 'input', action: 'allow', reason: undefined },
      { guardrail: 'banned-words', side: 'input', action: 'deny', reason: 'text contains a banned word' },
    ],
  );
  t.true(entry.guardrails.every((verdict) => typeof verdict.ms === 'number' && verdict.ms >= 0));
});

test('revealReasons shows the reason to the client', async (t) => {
  const setup = await policyGateway({ input: [bannedWords({ words: ['plutonium'] })], revealReasons: true }, answering('fine'));
  t.teardown(() => setup.close());
  const error = await t.throwsAsync(ask(setup.client, 'plutonium please'));
  t.regex((error as Error).message, /content policy: text contains a banned word/);
});

test('plain output denial: finish_reason content_filter and content null through the SDK', async (t) => {
  const setup = await policyGateway({ output: [pii({ action: 'deny' })] }, answering('Her email is ana@example.com.'));
  t.teardown(() => setup.close());
  const completion = await setup.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  t.is(completion.choices[0].finish_reason, 'content_filter');
  t.is(completion.choices[0].message.content, null);
  t.like(completion.usage, { total_tokens: 12 });
});

test('transforms apply in chain order; each sees the previous one\'s output', async (t) => {
  const setup = await policyGateway(
    {
      input: [
        regex({ pattern: 'ACME', mode: 'redact', replacement: 'a@b.io', label: 'company' }),
        pii({}),
        maxTokens({ max: 10 }),
      ],
      output: [regex({ pattern: 'secret', mode: 'redact', replacement: '***' })],
    },
    answering('the secret is out'),
  );
  t.teardown(() => setup.close());
  const trace = traceId('chain');
  const completion = await setup.client.chat.completions.create(
    { model: 'gpt-4o', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'ACME asks' }] }] },
    { headers: { 'x-gateway-trace-id': trace } },
  );
  t.is(completion.choices[0].message.content, 'the *** is out');
  const sent = setup.fake.requests[0].json();
  t.deepEqual(sent.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: '[REDACTED_EMAIL] asks' }] },
  ]);
  t.is(sent.max_tokens, 10);
  const entry = await loggedOnce(setup.gateway, trace);
  t.deepEqual(
    entry.guardrails.map(({ guardrail, side, action, changes }) => ({ guardrail, side, action, changes })),
    [
      { guardrail: 'regex', side: 'input', action: 'transform', changes: { company: 1 } },
      { guardrail: 'pii', side: 'input', action: 'transform', changes: { email: 1 } },
      { guardrail: 'max-tokens', side: 'input', action: 'transform', changes: { maxTokens: 1 } },
      { guardrail: 'regex', side: 'output', action: 'transform', changes: { pattern: 1 } },
    ],
  );
});

test('parallel mode: all run at once; transforms still compose; the first denial in chain order wins', async (t) => {
  // `waiting` only finishes once `releasing` has run: in sequential order it would time out (deny).
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const waiting = defineGuardrail<Record<string, never>>(
    { id: 'waiting', version: '1.0.0', description: 'Allows once released.', stages: ['input'], incremental: false },
    () => async () => {
      await released;
      return { action: 'allow' };
    },
  );
  const releasing = defineGuardrail<Record<string, never>>(
    { id: 'releasing', version: '1.0.0', description: 'Releases the waiting one.', stages: ['input'], incremental: false },
    () => () => {
      release();
      return { action: 'allow' };
    },
  );
  const chain = [
    step(waiting({}), { timeoutMs: 2000 }),
    releasing({}),
    regex({ pattern: 'x+', mode: 'redact', replacement: 'y' }),
    regex({ pattern: 'y', mode: 'redact', replacement: 'z' }),
  ];
  const setup = await policyGateway({ mode: 'parallel', input: chain }, answering('ok'));
  t.teardown(() => setup.close());
  await ask(setup.client, 'xxx and y');
  t.is(setup.fake.requests[0].json().messages[0].content, 'z and z');

  const denying = await policyGateway(
    { mode: 'parallel', revealReasons: true, input: [regex({ pattern: 'a', label: 'first' }), regex({ pattern: 'b', label: 'second' })] },
    answering('ok'),
  );
  t.teardown(() => denying.close());
  const error = await t.throwsAsync(ask(denying.client, 'b a'));
  t.regex((error as Error).message, /the first expression/);
});

test('a guardrail that throws fails closed by default and open when asked', async (t) => {
  const broken = defineGuardrail<Record<string, never>>(
    { id: 'broken', version: '1.0.0', description: 'Always throws.', stages: ['input'], incremental: false },
    () => () => {
      throw new Error('boom');
    },
  );
  const closed = await policyGateway({ input: [broken({})] }, answering('ok'));
  t.teardown(() => closed.close());
  await assertDenied(t, ask(closed.client, 'hi'));
  const open = await policyGateway({ input: [step(broken({}), { onError: 'fail-open' })] }, answering('ok'));
  t.teardown(() => open.close());
  t.like(await ask(open.client, 'hi'), { content: 'ok' });
  const [entry] = await open.gateway.waitForEntries(1);
  t.like(entry.guardrails[0], { guardrail: 'broken', action: 'allow', failure: 'error' });
});

test('boot: a wrong param fails with a message naming policy, guardrail and field', async (t) => {
  const error = await t.throwsAsync(startGateway({ policies: { strict: { input: [allowedModels({ models: ['gpt-4o'] }), requiredWords({ words: 'please' } as never)] } } }));
  t.true(error instanceof BootError);
  t.is(error?.message, 'INVALID_PARAMS: policy "strict", input guardrail #2 "required-words": /words must be array');
});

test('boot: an unknown defaultPolicy, a guardrail on a side it cannot judge, or a factory not called are refused', async (t) => {
  await t.throwsAsync(startGateway({ policies: {}, defaultPolicy: 'missing' }), { message: /defaultPolicy names the policy "missing", which is not configured/ });
  await t.throwsAsync(startGateway({ policies: { p: { output: [allowedModels({ models: ['x'] })] } } }), { message: /"allowed-models" cannot judge the output/ });
  await t.throwsAsync(startGateway({ policies: { p: { input: [pii as never] } } }), { message: /policy "p", input guardrail #1 is not a guardrail/ });
  await t.throwsAsync(startGateway({ policies: { p: { stream: { window: { kind: 'chars', size: 0 } } } } }), { message: /stream.window/ });
});

test('policies registry: has() for the vault, /admin/policies lists chains, /admin/plugins lists guardrail manifests', async (t) => {
  const gateway = await startGateway({
    policies: { 'pii-block': { input: [pii({ action: 'deny' })], output: [step(pii({ action: 'deny' }), { timeoutMs: 200 })] } },
    defaultPolicy: 'pii-block',
  });
  t.teardown(() => gateway.close());
  t.true(gateway.gateway.policies.has('pii-block'));
  t.false(gateway.gateway.policies.has('nope'));
  t.is((await fetch(`${gateway.url}/admin/policies`)).status, 401);
  const policies = await (await fetch(`${gateway.url}/admin/policies`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json();
  t.deepEqual(policies, {
    defaultPolicy: 'pii-block',
    policies: [
      {
        name: 'pii-block',
        mode: 'sequential',
        revealReasons: false,
        passthrough: 'refuse',
        stream: { window: { kind: 'sentence' }, wholeAnswer: 'buffer' },
        input: [{ guardrail: 'pii', params: { action: 'deny' }, onError: 'fail-closed', timeoutMs: 1000, incremental: true }],
        output: [{ guardrail: 'pii', params: { action: 'deny' }, onError: 'fail-closed', timeoutMs: 200, incremental: true }],
        // The default policy: no key names it, and it covers keys naming none.
        default: true,
        keys: [],
        default_keys: [],
      },
    ],
  });
  const plugins = (await (await fetch(`${gateway.url}/admin/plugins`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json()) as { guardrails: Array<Record<string, any>> };
  const listed = plugins.guardrails.find((plugin) => plugin.id === 'pii')!;
  t.like(listed, { id: 'pii', kind: 'guardrail', stages: ['input', 'output'], incremental: true });
  t.truthy(listed.description);
  t.like(listed.params, { type: 'object' });
});

test("the caller's policy (auth.policy, which the vault sets from a virtual key's guardrail_policy) wins over the default", async (t) => {
  const fake = await startFake(answering('ok'));
  t.teardown(() => fake.close());
  // Stands in for the vault's key resolution: an auth-stage hook naming the key's policy.
  const keyPolicy: Hook = {
    name: 'test-key-policy',
    stage: 'auth',
    async run(context, next) {
      const named = context.incoming.headers['x-test-policy'];
      if (named && context.auth) context.auth = { ...context.auth, policy: named };
      await next();
    },
  };
  const gateway = await startGateway({
    policies: { lenient: {}, strict: { input: [bannedWords({ words: ['hello'] })] } },
    defaultPolicy: 'lenient',
    hooks: [keyPolicy],
  });
  t.teardown(() => gateway.close());
  t.like(await ask(sdkClient(gateway.url, fake.baseUrl), 'hello'), { content: 'ok' });
  await assertDenied(t, ask(sdkClient(gateway.url, fake.baseUrl, { 'x-test-policy': 'strict' }), 'hello'));
  // A key whose policy is no longer configured is refused, never served unguarded.
  const error = await t.throwsAsync(ask(sdkClient(gateway.url, fake.baseUrl, { 'x-test-policy': 'removed' }), 'hello'));
  t.like(error as object, { status: 500, code: 'guardrail_policy_missing' });
  t.is(fake.requests.length, 1);
});

test('the shipped configuration lists all twenty-two built-in guardrails and its two example policies', async (t) => {
  const { default: shipped } = await import('../../gateway.config.js');
  const gateway = await startGateway(shipped);
  t.teardown(() => gateway.close());
  const headers = { 'x-gateway-api-key': ACCOUNT_KEY };
  const plugins = (await (await fetch(`${gateway.url}/admin/plugins`, { headers })).json()) as { guardrails: Array<Record<string, any>> };
  t.deepEqual(plugins.guardrails.map((plugin) => plugin.id).sort(), [
    'allowed-models', 'allowed-operations', 'azure-content-safety', 'banned-words', 'bedrock-guardrails', 'code-detection', 'json-output', 'json-schema',
    'lakera-guard', 'length-bounds', 'llm-judge', 'max-tokens', 'model-armor', 'openai-moderation', 'pii', 'presidio', 'prompt-injection', 'regex',
    'required-metadata', 'required-words', 'url-allowlist', 'webhook',
  ]);
  for (const plugin of plugins.guardrails) {
    t.true(typeof plugin.description === 'string' && plugin.description.length > 10, plugin.id);
    t.true(Array.isArray(plugin.stages) && plugin.stages.length > 0, plugin.id);
    t.is(typeof plugin.incremental, 'boolean', plugin.id);
    t.is(plugin.params?.type, 'object', plugin.id);
  }
  const { policies } = (await (await fetch(`${gateway.url}/admin/policies`, { headers })).json()) as { policies: Array<Record<string, any>> };
  t.deepEqual(policies.map((policy) => [policy.name, policy.input[0].params, policy.output[0].params]), [
    ['pii-redact', { action: 'redact' }, { action: 'redact' }],
    ['pii-block', { action: 'deny' }, { action: 'deny' }],
  ]);
});

test('tsc rejects a wrong param type in a policy (checked at build by @ts-expect-error)', (t) => {
  const policy = {
    // @ts-expect-error `max` must be a number
    input: [maxTokens({ max: '10' })],
    // @ts-expect-error `types.card` must be an action
    output: [pii({ types: { card: 'hide' } })],
  };
  // The values still reach boot, where the params schema refuses them.
  t.throws(() => new PolicyRegistry({ p: policy }, () => pluginDependencies()), { message: /"max-tokens": \/max must be integer/ });
});
