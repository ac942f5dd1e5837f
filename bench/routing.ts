// `npm run build && npx node dist/bench/routing.js`: the route executor's own CPU per request, in
// this process (median of 5 rounds): finding a config route, opening its plan (target openers
// stubbed: the plain path opens its one target too) and running a 2-target fallback whose first
// target answers, or whose first answers 503 at once. Upstream I/O is stubbed; prints figures, and
// PASS/MISS against the 15 µs for the first (a MISS does not fail the run).
import { PassThrough } from 'node:stream';
import type { AuthSlice, ForwardSlice } from '../core/pipeline/context.js';
import { executeRoute } from '../core/routing/executor.js';
import { mayRoute } from '../core/routing/targets.js';
import type { GatewayContext } from '../core/pipeline/context.js';
import { findRoute, resolvePlan } from '../core/routing/resolve.js';
import { parseRoute } from '../core/routing/route.js';
import { MemoryRoutingState } from '../core/routing/state.js';

const ROUNDS = 5;
const ITERATIONS = 50_000;

async function measure(run: () => Promise<unknown>): Promise<number> {
  for (let index = 0; index < 2000; index++) await run();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let index = 0; index < ITERATIONS; index++) await run();
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / ITERATIONS);
  }
  return rounds.sort((left, right) => left - right)[Math.floor(ROUNDS / 2)];
}

const route = parseRoute({
  strategy: { mode: 'fallback' },
  targets: [
    { name: 'primary', provider: 'openai', override_params: { model: 'gpt-4o-mini' } },
    { name: 'backup', provider: 'openai', override_params: { model: 'gpt-4o' } },
  ],
});
const catalog = { routes: new Map([['fb', route]]), models: new Map() };
const auth = { caller: { type: 'account' }, provider: { id: 'openai' }, forwardHeaders: {}, target: {} } as unknown as AuthSlice;
const lease = { grow() {}, release() {} };
const answer = (status: number): ForwardSlice =>
  ({ origin: 'http://127.0.0.1', status, headers: {}, body: new PassThrough(), sentAt: 0, headersAt: 0, memory: lease, maxAnswerBytes: 1 }) as unknown as ForwardSlice;
// Breakers that never open: the 503 case measures its fallback every time.
const state = new MemoryRoutingState({ failures: Number.MAX_SAFE_INTEGER, failureRatio: 1, minRequests: Number.MAX_SAFE_INTEGER, windowMs: 60_000, cooldownMs: 30_000 });
const dependencies = { state, random: Math.random, sleep: async () => {} };
const signal = new AbortController().signal;

async function routed(firstStatus: number): Promise<void> {
  const found = await findRoute(catalog, { header: 'fb', account: true });
  const plan = await resolvePlan(found!.route, found!.label, async () => auth);
  let calls = 0;
  await executeRoute(
    plan,
    {
      facts: { metadata: {} },
      signal,
      startedAt: performance.now(),
      replayable: true,
      attempts: [],
      send: async () => answer(calls++ === 0 ? firstStatus : 200),
    },
    dependencies,
  );
}

// The plain path's only added work: whether a route may apply (no header, no key route, no alias).
const plainContext = { incoming: { headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai' } }, request: { model: 'gpt-4o-mini', streaming: false } } as unknown as GatewayContext;
const plainCatalog = { routes: new Map(), models: new Map([['fast', route]]) };
let routable = 0;
const noop = await measure(async () => routable);
const plain = await measure(async () => (routable += mayRoute(plainContext, undefined, plainCatalog) ? 1 : 0));
console.log(`plain path (no route): ${((plain - noop) * 1000).toFixed(1)} ns CPU per request for the route check (over an empty async call: noise is ±10 ns)`);

const baseline = await measure(async () => answer(200));
const firstAnswers = await measure(() => routed(200));
const firstFails = await measure(() => routed(503));
const CPU_GOAL_MICROSECONDS = 15;
const firstAnswersOverPlain = firstAnswers - baseline;
console.log(
  `2-target fallback route, first target answers: CPU µs/request over the plain path (one stubbed send): ${firstAnswersOverPlain.toFixed(2)} µs (goal ≤ ${CPU_GOAL_MICROSECONDS} µs) ${firstAnswersOverPlain <= CPU_GOAL_MICROSECONDS ? 'PASS' : 'MISS'}`,
);
console.log(`route executor, 2-target fallback, first answers 503 at once: ${(firstFails - baseline).toFixed(2)} µs CPU per request (two stubbed sends)`);
