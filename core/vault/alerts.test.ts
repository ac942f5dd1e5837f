import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { SqliteState } from '../store/sqlite-state.js';
import type { SharedState } from '../store/state.js';
import { BudgetAlerts, type ChargedBudget } from './alerts.js';

/** An embedded state whose counter reads are counted. */
function countingState(): { state: SharedState; reads: () => number } {
  const state = new SqliteState(mkdtempSync(join(tmpdir(), 'alerts-test-')));
  let reads = 0;
  const read = state.read.bind(state);
  state.read = (keys) => {
    reads++;
    return read(keys);
  };
  return { state, reads: () => reads };
}

const budget = (spentKey: string): ChargedBudget => ({ level: 'key', keyId: 'vk_1', keyName: 'one', budgetNanos: 1000, period: 'total', spentKey, now: Date.now() });
const logger = { warn: () => {} };

test('a charge that reports the spend raises its thresholds without reading the state; below them nothing starts', async (t) => {
  const { state, reads } = countingState();
  t.teardown(() => state.close());
  const alerts = new BudgetAlerts({ state: () => state, logger });
  alerts.charged(budget('spent'), 500);
  t.is((alerts as unknown as { pending: Set<unknown> }).pending.size, 0, 'a spend below 80 % starts no work');
  alerts.charged(budget('spent'), 850);
  await alerts.idle();
  t.is(reads(), 0);
  t.deepEqual(await state.members('budget-alerts'), ['vk_1:80']);
  alerts.charged(budget('spent'), 1000);
  await alerts.idle();
  t.is(reads(), 0);
  t.deepEqual((await state.members('budget-alerts')).sort(), ['vk_1:100', 'vk_1:80']);
});

test('a charge without the spend (a state that cannot report it) reads it once', async (t) => {
  const { state, reads } = countingState();
  t.teardown(() => state.close());
  await state.settle({ requestId: 'r', reservationNanos: 0, actualNanos: 900, estimatedTokens: 0, levels: [{ spent: [{ key: 'spent' }] }] });
  const alerts = new BudgetAlerts({ state: () => state, logger });
  alerts.charged(budget('spent'), undefined);
  await alerts.idle();
  t.is(reads(), 1);
  t.deepEqual(await state.members('budget-alerts'), ['vk_1:80']);
});
