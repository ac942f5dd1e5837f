import { PassThrough } from 'node:stream';
import test from 'ava';
import { GatewayError } from '../errors.js';
import type { AuthSlice, ForwardSlice } from '../pipeline/context.js';
import { executeRoute, type ExecutorDependencies } from './executor.js';
import type { AttemptRecord } from './plan.js';
import { findRoute, resolvePlan } from './resolve.js';
import { parseRoute } from './route.js';
import { MemoryRoutingState, seededRandom } from './state.js';

const auth = { caller: { type: 'account' }, provider: { id: 'p' }, forwardHeaders: {}, target: {} } as unknown as AuthSlice;
const lease = { grow() {}, release() {} };
const answer = (status: number, headers: Record<string, string> = {}): ForwardSlice =>
  ({ origin: 'http://127.0.0.1', status, headers, body: new PassThrough(), sentAt: 0, headersAt: 0, memory: lease, maxAnswerBytes: 1 }) as unknown as ForwardSlice;

async function run(routeValue: unknown, statuses: (name: string) => number, options: { replayable?: boolean; dependencies?: Partial<ExecutorDependencies>; headers?: Record<string, string> } = {}) {
  const plan = await resolvePlan(parseRoute(routeValue), { name: 'r', source: 'header' }, async () => auth);
  const attempts: AttemptRecord[] = [];
  const sent: string[] = [];
  const dependencies: ExecutorDependencies = { state: new MemoryRoutingState(), random: seededRandom(1), sleep: async () => {}, ...options.dependencies };
  const result = await executeRoute(
    plan,
    {
      facts: { metadata: {} },
      signal: new AbortController().signal,
      startedAt: performance.now(),
      replayable: options.replayable ?? true,
      attempts,
      send: async (target) => {
        sent.push(target.name);
        return answer(statuses(target.name), options.headers);
      },
    },
    dependencies,
  ).catch((error: unknown) => error as GatewayError);
  return { result, attempts, sent };
}

const two = (extra: Record<string, unknown> = {}) => ({
  strategy: { mode: 'fallback' },
  targets: [
    { name: 'a', provider: 'p' },
    { name: 'b', provider: 'p' },
  ],
  ...extra,
});

test("the route's deadline stops retries and fallbacks: no wait starts past it", async (t) => {
  const waited: number[] = [];
  const { sent, result } = await run(two({ retry: { attempts: 5 }, deadline: 1000 }), () => 503, {
    headers: { 'retry-after': '0.6' },
    dependencies: {
      sleep: async (ms) => {
        waited.push(ms);
        await new Promise((resolve) => setTimeout(resolve, ms));
      },
    },
  });
  t.true(sent.length < 12, `sent ${sent.join(',')}`);
  t.true(waited.reduce((sum, ms) => sum + ms, 0) < 1000);
  t.is((result as { forward: ForwardSlice }).forward.status, 503);
});

test('a request that cannot be replayed gets one attempt: no retry, no fallback', async (t) => {
  const { sent } = await run(two({ retry: { attempts: 3 } }), () => 503, { replayable: false });
  t.deepEqual(sent, ['a']);
});

test('load balancing skips a target whose breaker is open', async (t) => {
  const state = new MemoryRoutingState({ failures: 1, failureRatio: 1, minRequests: 100, windowMs: 60_000, cooldownMs: 60_000 });
  const route = { strategy: { mode: 'loadbalance' }, targets: [{ name: 'a', provider: 'p' }, { name: 'b', provider: 'p' }] };
  const first = await run(route, (name) => (name === 'a' ? 500 : 200), { dependencies: { state, random: () => 0 } });
  t.deepEqual(first.sent, ['a', 'b']);
  for (let index = 0; index < 5; index++) {
    const next = await run(route, () => 200, { dependencies: { state, random: () => 0 } });
    t.deepEqual(next.sent, ['b']);
  }
});

test('findRoute: the header wins over the key route, the key route over an alias; inline only for the account key', async (t) => {
  const route = parseRoute({ targets: [{ provider: 'p' }] });
  const catalog = { routes: new Map([['h', route], ['k', route]]), models: new Map([['fast', route]]) };
  t.like(await findRoute(catalog, { header: 'h', keyRoute: 'k', allowedRoutes: ['h'], model: 'fast', account: false }), { label: { name: 'h', source: 'header' } });
  t.like(await findRoute(catalog, { keyRoute: 'k', model: 'fast', account: false }), { label: { name: 'k', source: 'key' } });
  t.like(await findRoute(catalog, { model: 'fast', account: false }), { label: { name: 'fast', source: 'alias' } });
  t.is(await findRoute(catalog, { model: 'other', account: true }), undefined);
  const forbidden = await findRoute(catalog, { header: '{"targets":[]}', account: false }).catch((error: GatewayError) => error);
  t.like((forbidden as GatewayError).body, { code: 'inline_route_forbidden' });
  const unknownKeyRoute = await findRoute(catalog, { keyRoute: 'gone', account: false }).catch((error: GatewayError) => error);
  t.like((unknownKeyRoute as GatewayError).body, { code: 'unknown_route' });
});

test("a failed answer replaced by a later failure gives back its memory lease and its body", async (t) => {
  const plan = await resolvePlan(parseRoute({ retry: { attempts: 1 }, targets: [{ name: 'a', provider: 'p' }] }), { source: 'inline' }, async () => auth);
  let released = 0;
  const first = { ...answer(503), memory: { grow() {}, release: () => released++ } } as unknown as ForwardSlice;
  let calls = 0;
  const error = await executeRoute(
    plan,
    {
      facts: { metadata: {} },
      signal: new AbortController().signal,
      startedAt: performance.now(),
      replayable: true,
      attempts: [],
      send: async () => {
        if (calls++ === 0) return first;
        throw new GatewayError(502, { message: 'refused', type: 'upstream_error', param: null, code: 'upstream_unreachable' });
      },
    },
    { state: new MemoryRoutingState(), random: () => 0, sleep: async () => {} },
  ).catch((caught: unknown) => caught);
  t.is((error as GatewayError).status, 502);
  t.is(released, 1);
  t.true(first.body.destroyed);
});

test('an answer counts as in flight for least_busy until its body is done', async (t) => {
  const state = new MemoryRoutingState();
  const plan = await resolvePlan(parseRoute({ targets: [{ name: 'a', provider: 'p' }] }), { name: 'busy', source: 'header' }, async () => auth);
  const result = await executeRoute(
    plan,
    { facts: { metadata: {} }, signal: new AbortController().signal, startedAt: performance.now(), replayable: true, attempts: [], send: async () => answer(200) },
    { state, random: () => 0, sleep: async () => {} },
  );
  t.is(state.load(plan.targets[0].key).inFlight, 1);
  result.forward.body.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  t.is(state.load(plan.targets[0].key).inFlight, 0);
});

test('a status the route lists in on_status_codes moves a fallback on even when it is a 4xx; an unlisted 4xx is the answer', async (t) => {
  const listed = await run(two({ on_status_codes: [404, 503] }), (name) => (name === 'a' ? 404 : 200));
  t.deepEqual(listed.sent, ['a', 'b']);
  t.is((listed.result as { forward: ForwardSlice }).forward.status, 200);
  const unlisted = await run(two(), (name) => (name === 'a' ? 404 : 200));
  t.deepEqual(unlisted.sent, ['a'], 'by default a 404 is the answer');
  const retried = await run(two({ retry: { attempts: 1, on_status_codes: [409] } }), (name) => (name === 'a' ? 409 : 200));
  t.deepEqual(retried.sent, ['a', 'a'], 'a listed retry status is retried on the same target');
});
