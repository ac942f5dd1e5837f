import test from 'ava';
import { matchQuery } from './conditions.js';
import { retryWaitMs } from './executor.js';
import { parseRoute } from './route.js';
import { REGEX_INPUT_MAX } from './safe-regex.js';
import { DEFAULT_BREAKER, DEFAULT_RETRY, MemoryRoutingState } from './state.js';

const budget = { ...DEFAULT_RETRY, budgetRatio: 0.2, budgetMinRetries: 2, budgetWindowMs: 10_000 };

test('the retry budget allows budgetMinRetries on a quiet target, then a share of its first attempts', (t) => {
  let now = 0;
  const state = new MemoryRoutingState(DEFAULT_BREAKER, () => now, undefined, budget);
  state.countRequest('a');
  t.true(state.takeRetry('a'));
  t.true(state.takeRetry('a'));
  t.false(state.takeRetry('a'), 'past the minimum with one request');
  for (let index = 0; index < 19; index++) state.countRequest('a');
  // 20 first attempts × 0.2 = 4 retries in the window, 2 already taken.
  t.true(state.takeRetry('a'));
  t.true(state.takeRetry('a'));
  t.false(state.takeRetry('a'));
  // Another target has a budget of its own.
  t.true(state.takeRetry('b'));
  // The window slides: half a window after the next one starts, the old counts weigh half.
  now = 15_000;
  // previous: 20 requests, 4 retries, weighing 0.5: 10 requests → max(2, 2) retries allowed, 2 counted.
  t.false(state.takeRetry('a'));
  // Two windows on, the old counts are gone.
  now = 40_000;
  t.true(state.takeRetry('a'));
  t.true(state.takeRetry('a'));
  t.false(state.takeRetry('a'));
});

test('the wait before a retry is never under the floor, even when Retry-After says 0', (t) => {
  for (const random of [0, 0.5, 0.999]) {
    const wait = retryWaitMs(0, 0, () => random, 50);
    t.true(wait >= 50 && wait < 100, `${wait}`);
    t.true(retryWaitMs(undefined, 0, () => random, 50) >= 50);
  }
  // A longer Retry-After is kept.
  t.is(retryWaitMs(2000, 0, () => 0.5, 50), 2000);
});

test('$regex: RE2 semantics for common patterns, linear on catastrophic ones, no match past the input bound', (t) => {
  const facts = (tag: string) => ({ metadata: { tag } });
  const query = (pattern: string) => parseRoute({ strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tag': { $regex: pattern } }, then: 'a' }] }, targets: [{ name: 'a', provider: 'p' }] });
  const conditionOf = (pattern: string) => {
    const strategy = query(pattern).strategy;
    if (strategy.mode !== 'conditional') throw new Error('conditional');
    return strategy.conditions[0].query;
  };
  t.true(matchQuery(conditionOf('^gold'), facts('gold-eu')));
  t.true(matchQuery(conditionOf('eu$'), facts('gold-eu')));
  t.false(matchQuery(conditionOf('^eu'), facts('gold-eu')));
  t.true(matchQuery(conditionOf('\\d{3}'), facts('x123')));
  t.true(matchQuery(conditionOf('(?i)GOLD'), facts('gold')));
  t.false(matchQuery(conditionOf('^([a-z]+-?)+$'), facts('abcdefghijklmnopqrstuvwxyz!')));
  t.false(matchQuery(conditionOf('(a|aa)+$'), facts(`${'a'.repeat(1000)}!`)));
  t.true(matchQuery(conditionOf('a'), facts('a'.repeat(REGEX_INPUT_MAX))));
  t.false(matchQuery(conditionOf('a'), facts('a'.repeat(REGEX_INPUT_MAX + 1))));
  const refused = t.throws(() => query('(?<=x)y'));
  t.is((refused as { body?: { param?: string } }).body?.param, 'config.strategy.conditions[0].query.metadata.tag.$regex');
});
