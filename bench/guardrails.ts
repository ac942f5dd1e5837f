// `npm run build && npx node dist/bench/guardrails.js` (also run by `npm run bench`): the time a
// chain of five built-in guardrails adds to one request, measured in-process through the guardrail
// stage itself on a 1 KB prompt. Prints figures only; never fails on a slow result.
import { cpus, loadavg } from 'node:os';
import { chatAnswerText } from '../core/api/answer-text.js';
import { chatCompletions } from '../core/api/chat-completions.js';
import { guardrailHook } from '../core/hooks/guardrail.js';
import { PolicyRegistry } from '../core/guardrails/registry.js';
import type { GatewayContext } from '../core/pipeline/context.js';
import type { ChatResponse } from '../core/spec/unified.js';
import { bannedWords, maxTokens, pii, promptInjection, urlAllowlist } from '../plugins/guardrails/index.js';
import { pluginDependencies } from '../test/plugin-dependencies.js';

const ITERATIONS = Number(process.env.BENCH_GUARDRAIL_ITERATIONS ?? 20_000);
const ROUNDS = 5;

/** About 1 KB of ordinary prose with one email and one URL in it (so redaction does real work). */
const PROMPT = (
  'Please summarise the meeting notes below for the weekly report and keep the action items. ' +
  'The team reviewed the roadmap, agreed to ship the billing export next sprint and to revisit the onboarding flow. ' +
  'Questions went to ana.lopez@example.com and the draft is at https://docs.example.com/notes/42 for comments. ' +
  'Risks: the vendor contract renewal and two open hiring positions; mitigation owners were named in the meeting. '
).repeat(3).slice(0, 1024);

const policies = new PolicyRegistry(
  {
    five: {
      input: [pii({}), bannedWords({ words: ['plutonium', 'nerve agent', 'ransomware'] }), promptInjection({}), urlAllowlist({ hosts: ['*.example.com'] }), maxTokens({ max: 1024 })],
      output: [pii({}), bannedWords({ words: ['plutonium', 'nerve agent', 'ransomware'] }), urlAllowlist({ hosts: ['*.example.com'] })],
    },
  },
  () => pluginDependencies(),
);
const operations = new Map([['chat', chatCompletions]]);
const hook = guardrailHook({ policies, defaultPolicy: 'five', operations });
const signal = new AbortController().signal;

function context(): GatewayContext {
  return {
    traceId: 'bench',
    startedAt: 0,
    operation: 'chat',
    incoming: { method: 'POST', path: '/v1/chat/completions', search: '', headers: {} },
    signal,
    metadata: {},
    strict: true,
    request: { body: { model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] }, model: 'gpt-4o', streaming: false },
  };
}

const ANSWER: ChatResponse = {
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: PROMPT }, finish_reason: 'stop', logprobs: null }],
};

/** µs per request of `run`, median of ROUNDS rounds of ITERATIONS. */
async function measure(run: () => Promise<void>): Promise<number> {
  for (let index = 0; index < 2000; index++) await run();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (let index = 0; index < ITERATIONS; index++) await run();
    rounds.push(((performance.now() - started) * 1000) / ITERATIONS);
  }
  return rounds.sort((left, right) => left - right)[Math.floor(ROUNDS / 2)];
}

async function main(): Promise<void> {
  const unguarded = guardrailHook({ policies: new PolicyRegistry({}, () => pluginDependencies()), operations });
  const baseline = await measure(async () => {
    await unguarded.run(context(), async () => {});
  });
  const input = await measure(async () => {
    await hook.run(context(), async () => {});
  });
  const both = await measure(async () => {
    const current = context();
    await hook.run(current, async () => {
      await current.guardrail!.output!.response(ANSWER, chatAnswerText);
    });
  });
  const lines = [
    `Guardrails: 5 built-ins (pii, banned-words, prompt-injection, url-allowlist, max-tokens) on a ${PROMPT.length}-byte prompt, ${ITERATIONS} requests x ${ROUNDS} rounds (median):`,
    `  guardrail stage without a policy:        ${baseline.toFixed(1)} µs/request`,
    `  input chain (5 guardrails):               ${input.toFixed(1)} µs/request  (adds ${(input - baseline).toFixed(1)} µs)`,
    `  input chain + output chain on a 1 KB answer (3 guardrails): ${both.toFixed(1)} µs/request`,
    `  target: the 5-guardrail input chain adds < 50 µs/request (machine: ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} during the run)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
