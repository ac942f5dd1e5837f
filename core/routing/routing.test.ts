import test from 'ava';
import { resolveConfig } from '../../config/index.js';
import { createGateway } from '../app.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { balanceOrder, pickLeastBusy, pickLowestLatency, pickWeighted } from './balancer.js';
import { matchQuery } from './conditions.js';
import { backoffMs, retryAfterMs } from './executor.js';
import { findRoute, resolvePlan } from './resolve.js';
import { MemoryRoutingState, seededRandom } from './state.js';

test('weighted picks over 2,000 requests are within 5 % of the weights (seeded)', (t) => {
  const targets = [
    { key: 'a', weight: 0.7 },
    { key: 'b', weight: 0.2 },
    { key: 'c', weight: 0.1 },
  ];
  const random = seededRandom(42);
  const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
  for (let index = 0; index < 2000; index++) counts[pickWeighted(targets, random).key]++;
  for (const target of targets) {
    const share = counts[target.key] / 2000;
    t.true(Math.abs(share - target.weight) <= 0.05 * target.weight + 0.01, `${target.key}: ${share} vs ${target.weight}`);
  }
});

test('the same seed gives the same picks; a zero weight is never picked', (t) => {
  const targets = [
    { key: 'a', weight: 1 },
    { key: 'b', weight: 0 },
    { key: 'c', weight: 1 },
  ];
  const first = Array.from({ length: 50 }, ((random) => () => balanceOrder(targets, 'weighted', new MemoryRoutingState(), random)[0].key)(seededRandom(7)));
  const again = Array.from({ length: 50 }, ((random) => () => balanceOrder(targets, 'weighted', new MemoryRoutingState(), random)[0].key)(seededRandom(7)));
  t.deepEqual(first, again);
  t.false(first.includes('b'));
});

test('least_busy prefers the target with fewer attempts in flight', (t) => {
  const state = new MemoryRoutingState();
  const targets = [
    { key: 'busy', weight: 1 },
    { key: 'idle', weight: 1 },
  ];
  const done = [state.begin('busy'), state.begin('busy'), state.begin('idle')];
  t.is(pickLeastBusy(targets, state).key, 'idle');
  done[2]();
  state.begin('idle');
  state.begin('idle');
  t.is(pickLeastBusy(targets, state).key, 'busy');
});

test('lowest_latency prefers the faster target by its EWMA, and measures an unmeasured one first', (t) => {
  const state = new MemoryRoutingState();
  const targets = [
    { key: 'slow', weight: 1 },
    { key: 'fast', weight: 1 },
  ];
  state.success('slow', 400);
  t.is(pickLowestLatency(targets, state).key, 'fast', 'not measured yet: tried first');
  for (const latency of [50, 60, 40]) state.success('fast', latency);
  t.is(pickLowestLatency(targets, state).key, 'fast');
  for (let index = 0; index < 10; index++) state.success('fast', 900);
  t.is(pickLowestLatency(targets, state).key, 'slow');
});

test('a breaker opens after N failures, lets one probe through after the cooldown, and closes on its success', (t) => {
  let now = 1_000_000;
  const state = new MemoryRoutingState({ failures: 3, failureRatio: 1, minRequests: 1000, windowMs: 60_000, cooldownMs: 30_000 }, () => now);
  for (let index = 0; index < 2; index++) state.failure('t');
  t.true(state.allow('t'));
  state.failure('t');
  t.false(state.allow('t'));
  t.is(state.retryInMs('t'), 30_000);
  t.deepEqual(state.breakers(), [{ target: 't', state: 'open' }]);
  now += 29_999;
  t.false(state.allow('t'));
  now += 1;
  t.true(state.allow('t'), 'the half-open probe');
  t.false(state.allow('t'), 'one probe at a time');
  state.success('t', 10);
  t.true(state.allow('t'));
  t.deepEqual(state.breakers(), [{ target: 't', state: 'closed' }]);
});

test('a failed half-open probe opens the breaker again; a failure ratio within the window opens it too', (t) => {
  let now = 0;
  const state = new MemoryRoutingState({ failures: 100, failureRatio: 0.5, minRequests: 4, windowMs: 10_000, cooldownMs: 1000 }, () => now);
  state.success('r', 1);
  state.failure('r');
  state.success('r', 1);
  t.true(state.allow('r'));
  state.failure('r');
  t.false(state.allow('r'), '2 of 4 failed');
  now += 1000;
  t.true(state.allow('r'));
  state.failure('r');
  t.false(state.allow('r'));
});

test('conditions: $eq $ne $in $nin $regex $gt $gte $lt $lte $and $or over metadata, model, caller and user', (t) => {
  const facts = { metadata: { tier: 'gold', region: 'eu', score: '7' }, model: 'gpt-4o', user: 'u1', callerId: 'k1', callerName: 'team' };
  t.true(matchQuery({ 'metadata.tier': 'gold' }, facts));
  t.true(matchQuery({ 'metadata.tier': { $ne: 'free' }, model: { $regex: '^gpt-' } }, facts));
  t.true(matchQuery({ 'metadata.region': { $in: ['eu', 'uk'] }, 'caller.name': { $nin: ['other'] } }, facts));
  t.true(matchQuery({ 'metadata.score': { $gt: 5, $lte: 7 } }, facts));
  t.false(matchQuery({ 'metadata.score': { $lt: 7 } }, facts));
  t.true(matchQuery({ $or: [{ user: 'nobody' }, { 'caller.id': { $eq: 'k1' } }] }, facts));
  t.false(matchQuery({ $and: [{ user: 'u1' }, { 'metadata.missing': { $gte: 1 } }] }, facts));
});

test('Retry-After is read as seconds, an HTTP date or retry-after-ms; back-off has full jitter under an exponential ceiling', (t) => {
  t.is(retryAfterMs({ 'retry-after': '3' }), 3000);
  t.is(retryAfterMs({ 'retry-after-ms': '250' }), 250);
  t.is(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 5_000), 5_000);
  t.is(retryAfterMs({ 'retry-after': 'soon' }), undefined);
  t.is(retryAfterMs({ 'retry-after': '0.5' }), 500);
  t.is(retryAfterMs({ 'retry-after': '-3' }), undefined);
  t.is(backoffMs(0, () => 0.999), 99.9);
  t.is(backoffMs(3, () => 0.5), 400);
  t.is(backoffMs(20, () => 1), 5000);
  t.is(backoffMs(2, () => 0), 0);
});

test('config routes and aliases are checked at boot: the BootError names the route and the field', (t) => {
  const error = t.throws(() => resolveConfig({ providers: [], routes: { fast: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }, { provider: 'openai', weight: -1 }] } } }, {}));
  t.is(error?.name, 'BootError');
  t.regex(error!.message, /routes\.fast: .*routes\.fast\.targets\[1\]\.weight/);
  const alias = t.throws(() => resolveConfig({ providers: [], models: { cheap: { strategy: { mode: 'single' }, targets: [] } } }, {}));
  t.regex(alias!.message, /models\.cheap\.targets/);
  const unknown = t.throws(() => createGateway({ providers: [openai()], routes: { r: { strategy: { mode: 'single' }, targets: [{ provider: 'nosuch' }] } } }, { environment: { GATEWAY_API_KEY: 'gw-boot-test-key-0123456789', GATEWAY_DATA_DIR: '/tmp/gateway-routing-boot' } }));
  t.regex(unknown!.message, /routes\.r\.targets\[0\]\.provider names "nosuch"/);
});

test('an inline route is parsed once per header text and shared; a refused one is refused every time and never kept', async (t) => {
  const catalog = { routes: new Map(), models: new Map() };
  const header = JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ name: 'first', provider: 'openai' }, { name: 'second', provider: 'openai' }] });
  const first = await findRoute(catalog, { header, account: true });
  const again = await findRoute(catalog, { header: ` ${header} `, account: true });
  t.is(again?.route, first?.route, 'the same parsed route (the header is trimmed first)');
  t.deepEqual(first?.label, { source: 'inline' });
  // The state keys of its targets are made once and stay the same.
  const open = async () => ({}) as never;
  const plans = [await resolvePlan(first!.route, first!.label, open), await resolvePlan(again!.route, again!.label, open)];
  t.deepEqual(plans[0].targets.map((target) => target.key), plans[1].targets.map((target) => target.key));
  t.regex(plans[0].targets[0].key, /^inline:first:[0-9a-f]{8}$/);
  // A virtual key may not send one, cached or not.
  await t.throwsAsync(findRoute(catalog, { header, account: false }), { message: /for the account key/ });
  const invalid = JSON.stringify({ strategy: { mode: 'fallback' }, targets: [] });
  for (let round = 0; round < 2; round++) {
    await t.throwsAsync(findRoute(catalog, { header: invalid, account: true }), { instanceOf: Error });
  }
});
