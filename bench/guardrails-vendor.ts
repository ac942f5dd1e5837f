// `npm run build && npx node dist/bench/guardrails-vendor.js` (issue 37's performance targets; not in
// `npm run bench`, it takes one to three minutes): (1) what a chain with one vendor guardrail adds to a
// request besides the vendor's own latency, through the guardrail stage in-process against a loopback
// fake vendor (Lakera Guard's API), the vendor's latency measured as the same call made directly with
// the same HTTP client; (2) the CPU time of masking a 1 KB prompt and restoring a 1 KB answer (whole,
// and streamed in 64 chunks). Prints figures only; never fails on a slow result.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { chatCompletions } from '../core/api/chat-completions.js';
import { guardrailHook } from '../core/hooks/guardrail.js';
import { ChunkRestorer, restoredAnswer } from '../core/guardrails/output/index.js';
import { PolicyRegistry } from '../core/guardrails/registry.js';
import type { GatewayContext } from '../core/pipeline/context.js';
import type { ChatCompletionChunk, ChatResponse } from '../core/spec/unified.js';
import { lakeraGuard, pii } from '../plugins/guardrails/index.js';
import { postJson } from '../plugins/shared/vendor-guardrail.js';
import type { ControlPlaneHttp } from '../core/spec/manifest.js';
import { pluginDependencies } from '../test/plugin-dependencies.js';

const ROUNDS = 5;
const VENDOR_REQUESTS = Number(process.env.BENCH_VENDOR_REQUESTS ?? 800);
const MASK_ITERATIONS = Number(process.env.BENCH_MASK_ITERATIONS ?? 20_000);

/** About 1 KB of prose with two e-mails and a phone number in it. */
const PROMPT = (
  'Please summarise the meeting notes below for the weekly report and keep the action items. ' +
  'Questions went to ana.lopez@example.com and to bob@example.org, or call +44 20 7946 0958 after ten. ' +
  'The team reviewed the roadmap, agreed to ship the billing export next sprint and to revisit the onboarding flow. ' +
  'Risks: the vendor contract renewal and two open hiring positions; mitigation owners were named in the meeting. '
)
  .repeat(3)
  .slice(0, 1024);
/** A 1 KB answer naming the placeholders the prompt gets (and one it does not). */
const ANSWER_TEXT = (
  'Summary for the weekly report: the roadmap was reviewed and the billing export ships next sprint. ' +
  'Send questions to <EMAIL_1> or <EMAIL_2>, or call <PHONE_1> after ten; <EMAIL_9> is unknown. ' +
  'Action items: revisit the onboarding flow, renew the vendor contract, fill the two open positions. '
)
  .repeat(4)
  .slice(0, 1024);

const signal = new AbortController().signal;
const operations = new Map([['chat', chatCompletions]]);

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

/** A loopback Lakera Guard: `{"flagged": false}` after `delayMs`. */
async function fakeVendor(delayMs: number): Promise<{ server: Server; baseUrl: string }> {
  const answer = JSON.stringify({ flagged: false, breakdown: [] });
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const send = () => response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
      if (delayMs > 0) setTimeout(send, delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Median over `rounds` of the mean wall time (µs) of `count` sequential runs. */
async function wall(count: number, run: () => Promise<unknown>, rounds = ROUNDS): Promise<number> {
  for (let index = 0; index < Math.min(500, count); index++) await run();
  const means: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    for (let index = 0; index < count; index++) await run();
    means.push(((performance.now() - started) * 1000) / count);
  }
  return means.sort((left, right) => left - right)[Math.floor(rounds / 2)];
}

/** Median over ROUNDS of the mean CPU time (µs, user + system) of `count` runs. */
async function cpu(count: number, run: () => unknown, warmUp = 5000): Promise<number> {
  for (let index = 0; index < warmUp; index++) await run();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.cpuUsage();
    for (let index = 0; index < count; index++) await run();
    const used = process.cpuUsage(started);
    rounds.push((used.user + used.system) / count);
  }
  return rounds.sort((left, right) => left - right)[Math.floor(ROUNDS / 2)];
}

async function vendorChain(delayMs: number): Promise<string> {
  const { server, baseUrl } = await fakeVendor(delayMs);
  const dependencies = pluginDependencies();
  const policies = new PolicyRegistry({ vendor: { input: [lakeraGuard({ baseUrl, apiKey: 'bench-key' })] } }, () => dependencies);
  const hook = guardrailHook({ policies, defaultPolicy: 'vendor', operations });
  const unguarded = guardrailHook({ policies: new PolicyRegistry({}, () => dependencies), operations });
  const body = { messages: [{ role: 'user', content: PROMPT }], breakdown: true };
  // The vendor's latency as the gateway's client sees it: the same call, made directly. Direct calls
  // and chained requests alternate in rounds (the machine is shared), and the added time is the median
  // of the rounds' differences.
  const directCall = () => postJson(dependencies.http, 'lakera-guard', `${baseUrl}/v2/guard`, body, { authorization: 'Bearer bench-key' }, 2000);
  const chainedCall = async () => {
    const current = context();
    await hook.run(current, async () => {});
    if (current.guardrail!.verdicts[0]?.verdict.action !== 'allow') throw new Error('the vendor guardrail did not allow');
  };
  const stageAlone = await wall(VENDOR_REQUESTS, () => unguarded.run(context(), async () => {}));
  const directs: number[] = [];
  const chains: number[] = [];
  const differences: number[] = [];
  for (let round = 0; round < ROUNDS * 2; round++) {
    const direct = await wall(VENDOR_REQUESTS / 4, directCall, 1);
    const chained = await wall(VENDOR_REQUESTS / 4, chainedCall, 1);
    directs.push(direct);
    chains.push(chained);
    differences.push(chained - stageAlone - direct);
  }
  const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];
  const [direct, chained, added] = [median(directs), median(chains), median(differences)];
  // What the chain itself costs in CPU (the vendor's fake runs in this process too and is in both):
  // on a machine that is not shared, that is the time it adds to the vendor's latency.
  const cpuAdded = (await cpu(VENDOR_REQUESTS / 2, chainedCall, 500)) - (await cpu(VENDOR_REQUESTS / 2, directCall, 500));
  await new Promise((resolve) => server.close(resolve));
  return (
    `  vendor answering after ${delayMs} ms: direct call ${(direct / 1000).toFixed(3)} ms, stage with the vendor chain ${(chained / 1000).toFixed(3)} ms (stage alone ${stageAlone.toFixed(1)} µs)\n` +
    `    → the chain adds the vendor's latency + ${(added / 1000).toFixed(3)} ms wall (median of paired rounds), + ${(cpuAdded / 1000).toFixed(3)} ms CPU (target ≤ 0.5 ms)`
  );
}

/** The chain's own CPU with the vendor's answer at hand (an HTTP client that answers at once): building the call, reading the verdict, the budget's timer, the record. */
async function vendorChainWithoutNetwork(): Promise<string> {
  const answer = { status: 200, statusText: 'OK', headers: {}, config: {}, data: JSON.stringify({ flagged: false, breakdown: [] }) };
  const http = { post: async () => answer } as unknown as ControlPlaneHttp;
  const policies = new PolicyRegistry({ vendor: { input: [lakeraGuard({ baseUrl: 'http://127.0.0.1:9', apiKey: 'bench-key' })] } }, () => pluginDependencies({ http }));
  const hook = guardrailHook({ policies, defaultPolicy: 'vendor', operations });
  const unguarded = guardrailHook({ policies: new PolicyRegistry({}, () => pluginDependencies()), operations });
  const alone = await cpu(MASK_ITERATIONS, () => unguarded.run(context(), async () => {}));
  const chained = await cpu(MASK_ITERATIONS, async () => {
    const current = context();
    await hook.run(current, async () => {});
    if (current.guardrail!.verdicts[0]?.verdict.action !== 'allow') throw new Error('the vendor guardrail did not allow');
  });
  return `  the chain's own work, the vendor's answer at hand (no network): ${(chained - alone).toFixed(1)} µs CPU per request`;
}

async function masking(): Promise<string[]> {
  const policies = new PolicyRegistry({ masked: { input: [pii({ action: 'mask' })] } }, () => pluginDependencies());
  const hook = guardrailHook({ policies, defaultPolicy: 'masked', operations });
  const unguarded = guardrailHook({ policies: new PolicyRegistry({}, () => pluginDependencies()), operations });
  const answer: ChatResponse = {
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: ANSWER_TEXT }, finish_reason: 'stop', logprobs: null }],
  };
  const pieces = Array.from({ length: 64 }, (_, index) => ANSWER_TEXT.slice(index * 16, index * 16 + 16));
  const chunks: ChatCompletionChunk[] = pieces.map((content, index) => ({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices: [{ index: 0, delta: { content }, finish_reason: index === pieces.length - 1 ? 'stop' : null, logprobs: null }],
  }));
  let check = '';
  const baseline = await cpu(MASK_ITERATIONS, () => unguarded.run(context(), async () => {}));
  const whole = await cpu(MASK_ITERATIONS, async () => {
    const current = context();
    await hook.run(current, async () => {});
    check = restoredAnswer(current, answer).choices[0].message.content as string;
  });
  if (!check.includes('ana.lopez@example.com') || !check.includes('<EMAIL_9>')) throw new Error('the answer was not restored');
  const streamed = await cpu(MASK_ITERATIONS / 4, async () => {
    const current = context();
    await hook.run(current, async () => {});
    const restorer = new ChunkRestorer<ChatCompletionChunk>(current.guardrail!.restorer!);
    for (const chunk of chunks) restorer.push(chunk);
  });
  return [
    `  mask a ${PROMPT.length}-byte prompt (3 values) + restore a ${ANSWER_TEXT.length}-byte answer (whole): ${(whole - baseline).toFixed(1)} µs CPU (stage alone ${baseline.toFixed(1)} µs; target ≤ 40 µs)`,
    `  mask the prompt + restore the answer streamed in ${chunks.length} chunks: ${(streamed - baseline).toFixed(1)} µs CPU`,
  ];
}

async function main(): Promise<void> {
  const lines = [`Guardrails, issue 37 (machine: ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at start; medians of rounds):`];
  lines.push(`One vendor guardrail (lakera-guard, loopback fake), ${VENDOR_REQUESTS} sequential requests per round:`);
  for (const delayMs of [0, 5]) lines.push(await vendorChain(delayMs));
  lines.push(await vendorChainWithoutNetwork());
  lines.push(`PII masking (pii action mask), ${MASK_ITERATIONS} requests per round:`);
  lines.push(...(await masking()));
  lines.push(`  (load average ${loadavg()[0].toFixed(1)} at the end)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
