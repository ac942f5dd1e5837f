import test from 'ava';
import { type BreakerTransition, MemoryRoutingState } from '../../core/routing/state.js';

// What instances share of a breaker: its transitions. Opening and closing are reported; another
// instance's transition is applied without counting and without being reported again.
const settings = { failures: 2, failureRatio: 1, minRequests: 1000, windowMs: 60_000, cooldownMs: 10_000 };

test('opening and closing are reported with the time the breaker opened', (t) => {
  let now = 1_000;
  const seen: BreakerTransition[] = [];
  const state = new MemoryRoutingState(settings, () => now, (transition) => seen.push(transition));
  state.failure('x');
  t.deepEqual(seen, []);
  state.failure('x');
  t.deepEqual(seen, [{ target: 'x', state: 'open', openedAt: 1_000 }]);
  now += 10_000;
  t.true(state.allow('x'), 'the half-open probe');
  t.is(seen.length, 1, 'half-open is not reported');
  state.success('x', 5);
  t.deepEqual(seen.at(-1), { target: 'x', state: 'closed', openedAt: 1_000 });
});

test('an applied opening skips the target until its cooldown from the reported time; a later local opening is kept; an applied closing closes', (t) => {
  let now = 50_000;
  const seen: BreakerTransition[] = [];
  const state = new MemoryRoutingState(settings, () => now, (transition) => seen.push(transition));
  state.apply({ target: 'y', state: 'open', openedAt: 45_000 });
  t.false(state.allow('y'));
  t.is(state.retryInMs('y'), 5_000);
  state.apply({ target: 'y', state: 'open', openedAt: 40_000 });
  t.is(state.retryInMs('y'), 5_000, 'an older opening does not move the cooldown back');
  state.apply({ target: 'y', state: 'closed', openedAt: 45_000 });
  t.true(state.allow('y'));
  t.deepEqual(state.breakers(), [{ target: 'y', state: 'closed' }]);
  state.apply({ target: 'z', state: 'open', openedAt: 49_000 });
  now = 59_000;
  t.true(state.allow('z'), 'past the cooldown one probe goes through');
  t.false(state.allow('z'));
  t.deepEqual(seen, [], 'applied transitions are not reported again');
});
