import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { runChain } from '../../core/guardrails/chain.js';
import { step } from '../../core/guardrails/policy.js';
import { PolicyRegistry } from '../../core/guardrails/registry.js';
import type { GuardrailRecord, VerdictMemo } from '../../core/guardrails/slice.js';
import { ALLOW, defineGuardrail } from '../../core/spec/index.js';
import type { GuardrailInput } from '../../core/spec/guardrail.js';
import { openaiModeration } from '../../plugins/guardrails/openai-moderation/index.js';
import { startFake } from '../fakes/openai-fake.js';
import { pluginDependencies } from '../plugin-dependencies.js';
import { answering, ask, policyGateway } from './helpers.js';

// What the chain does for guardrails that call a service: a verdict remembered for identical input
// within a request (no second call), failures never remembered, and a parallel chain calling its
// services at once.

const input = (texts: string[], partial = false): GuardrailInput => ({ side: 'output', operation: 'chat', model: 'm', texts, metadata: {}, parameters: {}, partial });

/** An asynchronous guardrail counting its calls; it fails while `failing` is set. */
function counting() {
  const state = { calls: 0, failing: false };
  const registration = defineGuardrail<Record<string, never>>({ id: 'counted', version: '1.0.0', description: 'Counts its calls (test).', stages: ['input', 'output'], incremental: true }, () => async (judged) => {
    state.calls++;
    if (state.failing) throw new Error('down');
    return judged.texts.some((text) => text.includes('bad')) ? { action: 'deny', reason: 'bad' } : ALLOW;
  })({});
  const policy = new PolicyRegistry({ p: { output: [step(registration, { onError: 'fail-open' })] } }, () => pluginDependencies()).get('p')!;
  return { state, chain: policy.output };
}

test('a verdict is reused for identical input within a request (the memo), never across memos, and a failure is not remembered', async (t) => {
  const { state, chain } = counting();
  const memo: VerdictMemo = new Map();
  const records: GuardrailRecord[] = [];
  const record = (entry: GuardrailRecord) => records.push(entry);
  t.deepEqual(await runChain(chain, input(['a text']), 'sequential', record, memo), { action: 'allow' });
  t.deepEqual(await runChain(chain, input(['a text']), 'sequential', record, memo), { action: 'allow' });
  t.is(state.calls, 1);
  t.is(records[1].cached, 1);
  t.is(records[0].cached, undefined);
  // A denial is remembered as such.
  t.like(await runChain(chain, input(['a bad text']), 'sequential', record, memo), { action: 'deny' });
  t.like(await runChain(chain, input(['a bad text']), 'sequential', record, memo), { action: 'deny' });
  t.is(state.calls, 2);
  // Partial and whole are judged apart; another request (another memo) calls again.
  await runChain(chain, input(['a text'], true), 'sequential', record, memo);
  await runChain(chain, input(['a text']), 'sequential', record, new Map());
  t.is(state.calls, 4);
  // Failures: each check calls again (fail-open lets it through), and the log says it failed open.
  state.failing = true;
  await runChain(chain, input(['new']), 'sequential', record, memo);
  await runChain(chain, input(['new']), 'sequential', record, memo);
  t.is(state.calls, 6);
  t.like(records.at(-1), { failure: 'error', onError: 'fail-open', verdict: { action: 'allow' } });
  // Without a memo nothing is remembered.
  state.failing = false;
  await runChain(chain, input(['a text']), 'sequential', record);
  t.is(state.calls, 7);
});

test('a synchronous guardrail is never remembered: it is cheaper to run than to look up', async (t) => {
  let calls = 0;
  const registration = defineGuardrail<Record<string, never>>({ id: 'sync', version: '1.0.0', description: 'Counts its calls (test).', stages: ['output'], incremental: true }, () => () => {
    calls++;
    return ALLOW;
  })({});
  const chain = new PolicyRegistry({ p: { output: [registration] } }, () => pluginDependencies()).get('p')!.output;
  const memo: VerdictMemo = new Map();
  await runChain(chain, input(['same']), 'sequential', () => {}, memo);
  await runChain(chain, input(['same']), 'sequential', () => {}, memo);
  t.is(calls, 2);
  t.is(memo.size, 0);
});

const fixture = JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/openai-moderation/__fixtures__/clean.json'), 'utf8'));

test.serial('a parallel chain calls its vendors at once: each of two services answers only once the other has been asked', async (t) => {
  const arrived: Array<() => void> = [];
  const both = [new Promise<void>((resolve) => arrived.push(resolve)), new Promise<void>((resolve) => arrived.push(resolve))];
  const vendor = (index: number) =>
    startFake(async (request, response) => {
      arrived[index]();
      // Deadlocks (until the step's budget) if the chain called the services one after the other.
      await Promise.race([both[1 - index], new Promise((resolve) => setTimeout(resolve, 10_000))]);
      const body = JSON.stringify({ ...fixture, results: request.json().input.map(() => fixture.results[0]) });
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  const [first, second] = await Promise.all([vendor(0), vendor(1)]);
  t.teardown(() => Promise.all([first.close(), second.close()]));
  const guard = (origin: string) => step(openaiModeration({ baseUrl: `${origin}/v1`, apiKey: 'sk-x' }), { timeoutMs: 5000 });
  const setup = await policyGateway({ mode: 'parallel', input: [guard(first.origin), guard(second.origin)] }, answering('ok'));
  t.teardown(() => setup.close());
  t.like(await ask(setup.client, 'hello'), { content: 'ok' });
  const [entry] = await setup.gateway.waitForEntries(1);
  t.deepEqual(
    entry.guardrails.map((verdict) => [verdict.guardrail, verdict.action, verdict.failure]),
    [
      ['openai-moderation', 'allow', undefined],
      ['openai-moderation', 'allow', undefined],
    ],
  );
});
