import test from 'ava';
import type { Settlement, SharedState } from '../../store/state.js';
import { periodCounter } from '../../vault/levels.js';
import { PriceTable } from '../../vault/pricing.js';
import { batchReservation, settleBatch } from './batch-money.js';

/** The settle a batch asks of the shared state, captured. */
function capture(): { settles: Settlement[]; dependencies: Parameters<typeof settleBatch>[0] } {
  const settles: Settlement[] = [];
  const state = { settle: async (settlement: Settlement) => void settles.push(settlement) } as unknown as SharedState;
  return { settles, dependencies: { state: () => state, prices: new PriceTable({}), levels: async () => undefined, outputTokenEstimate: 1024 } };
}

test("a batch made before levels (its key's reservation alone) settles on its key's counters as it reserved", async (t) => {
  const { settles, dependencies } = capture();
  const reservation = batchReservation({ key: 'usage:vk_1:reserved:total', nanos: 5000, keyId: 'vk_1' });
  await settleBatch(dependencies, reservation, 0.000002);
  const now = Date.now();
  t.like(settles[0], { reservationNanos: 5000, actualNanos: 2000, levels: [{ reservedKey: 'usage:vk_1:reserved:total' }] });
  t.is(settles[0].unleased, true, 'reserved before leases: released without a lease member');
  t.deepEqual(
    settles[0].levels[0].spent.map((counter) => counter.key),
    (['total', 'day', 'week', 'month'] as const).map((period) => periodCounter('usage:vk_1', 'spent', period, now)),
  );
});

test("each level settles its own counters: a team's budget period, the key's four; a level without a budget releases nothing", async (t) => {
  const { settles, dependencies } = capture();
  await settleBatch(
    dependencies,
    {
      requestId: 'batch_gw_1',
      nanos: 9000,
      leased: true,
      levels: [
        { level: 'key', id: 'vk_2', base: 'usage:vk_2', limits: {}, countsRequests: true },
        { level: 'team', id: 't1', base: 'usage:team:t1', limits: { budget_usd: 1, budget_period: 'month' }, reservedKey: 'usage:team:t1:reserved:month:x' },
        { level: 'organization', id: 'organization', base: 'usage:org', limits: {} },
      ],
    },
    0.000001,
  );
  const [key, team, organization] = settles[0].levels;
  t.is(key.reservedKey, undefined);
  t.is(key.spent.length, 4);
  t.is(team.reservedKey, 'usage:team:t1:reserved:month:x');
  t.deepEqual(
    team.spent.map((counter) => counter.key),
    [periodCounter('usage:team:t1', 'spent', 'month', Date.now())],
  );
  t.deepEqual(organization, { spent: [] });
  t.is(settles[0].unleased, undefined, 'a leased reservation is released only while its lease member is there');
});
