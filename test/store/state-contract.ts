import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { Admission, LevelAdmission, SharedState } from '../../core/store/state.js';

// The shared-state contract: every store (embedded SQLite, Redis, Redis Cluster, Redis behind
// Sentinel) passes the same tests. test/vault/store.vault.test.ts runs it on SQLite and Redis,
// test/store/redis-cluster.test.ts on a cluster and a Sentinel set-up.

let sequence = 0;
type One = Partial<Omit<Admission, 'levels'>> & Partial<LevelAdmission>;
/** A one-level admission (its level's keys under a fresh id), flattened: the level's fields beside the request's. */
export function admission(overrides: One = {}): Admission & Required<Pick<LevelAdmission, 'dayCounterKey' | 'totalCounterKey'>> & LevelAdmission {
  const id = `k${++sequence}`;
  const flat = {
    now: Date.now(),
    requestId: randomBytes(8).toString('hex'),
    minuteWindowKey: `${id}:minute`,
    dayCounterKey: `${id}:day`,
    totalCounterKey: `${id}:total`,
    spentKey: `${id}:spent`,
    reservedKey: `${id}:reserved`,
    tokensWindowKey: `${id}:tokens`,
    concurrentKey: `${id}:inflight`,
    reservationNanos: 0,
    tokens: 0,
    msUntilDayEnds: 3_600_000,
    ...overrides,
  };
  return withLevels(flat);
}
/** The flattened admission with its `levels` rebuilt from its level fields (so a spread override changes the level too). */
function withLevels<T extends Omit<Admission, 'levels'> & LevelAdmission>(flat: T): T & Admission {
  const { now: _now, requestId: _id, reservationNanos: _r, reservationIsCeiling: _c, tokens: _t, msUntilDayEnds: _d, leaseMs: _l, reservationLeaseMs: _rl, reservationPersists: _rp, levels: _levels, ...level } = flat as T & { levels?: unknown };
  return { ...flat, levels: [level as LevelAdmission] };
}
/** Settles a one-level admission's request. */
export const settleOne = (state: SharedState, base: LevelAdmission, fields: { reservationNanos: number; actualNanos: number; requestId?: string; report?: string[] }) =>
  state.settle({ requestId: fields.requestId ?? 'r', reservationNanos: fields.reservationNanos, actualNanos: fields.actualNanos, estimatedTokens: 0, levels: [{ reservedKey: base.reservedKey, spent: [{ key: base.spentKey }] }], ...(fields.report ? { report: fields.report } : {}) });

/**
 * Registers the contract's tests (serial) for the store `open` gives (undefined: skipped, e.g. Redis
 * unreachable); each state opened is pushed to `opened` for the file's clean-up.
 */
export function stateContract(name: string, open: () => Promise<SharedState | undefined>, opened: SharedState[]): void {
  const withStore = (title: string, body: (t: ExecutionContext, state: SharedState) => Promise<void>) =>
    test.serial(`${name}: ${title}`, async (t) => {
      const state = await open();
      if (!state) return t.pass(`${name} unavailable: skipped`);
      opened.push(state);
      await body(t, state);
    });

  withStore('a name is claimed by one owner only, and released only by it', async (t, state) => {
    t.true(await state.claim('name-a', 'owner-1'));
    t.true(await state.claim('name-a', 'owner-1'), 'claiming again as the owner is fine');
    t.false(await state.claim('name-a', 'owner-2'));
    await state.release('name-a', 'owner-2');
    t.false(await state.claim('name-a', 'owner-2'), 'someone else cannot release it');
    await state.release('name-a', 'owner-1');
    t.true(await state.claim('name-a', 'owner-2'));
  });

  withStore('records and sets', async (t, state) => {
    await state.records.set('thing:1', { a: 1 });
    t.deepEqual(await state.records.get('thing:1'), { a: 1 });
    await state.addToSet('things', 'b');
    await state.addToSet('things', 'a');
    await state.addToSet('things', 'a');
    t.deepEqual(await state.members('things'), ['a', 'b']);
    await state.removeFromSet('things', 'a');
    t.deepEqual(await state.members('things'), ['b']);
    t.true(await state.records.delete('thing:1'));
    t.is(await state.records.get('thing:1'), undefined);
  });

  withStore('the per-minute window admits up to the limit and tells when a slot frees', async (t, state) => {
    const base = admission({ requestsPerMinute: 2 });
    const now = Date.now();
    t.true((await state.admit({ ...base, now: now - 30_000, requestId: 'r1' })).admitted);
    t.true((await state.admit({ ...base, now, requestId: 'r2' })).admitted);
    const refused = await state.admit({ ...base, now, requestId: 'r3' });
    t.false(refused.admitted);
    t.like(refused, { reason: 'requests_per_minute', retryAfterMs: 30_000, count: 2 });
    t.true((await state.admit({ ...base, now: now + 30_001, requestId: 'r4' })).admitted, 'the oldest request left the window');
  });

  withStore('the daily limit, and refused requests are not counted', async (t, state) => {
    const base = admission({ requestsPerDay: 1, budgetNanos: 100, reservationNanos: 60 });
    t.true((await state.admit(base)).admitted);
    t.like(await state.admit({ ...base, requestId: 'x' }), { admitted: false, reason: 'requests_per_day', retryAfterMs: 3_600_000 });
    t.deepEqual(await state.read([base.dayCounterKey, base.totalCounterKey, base.reservedKey]), [1, 1, 60]);
  });

  withStore('budget: reservations count until settled; settlement replaces them with the actual cost', async (t, state) => {
    const base = admission({ budgetNanos: 100, reservationNanos: 40 });
    t.true((await state.admit(base)).admitted);
    t.true((await state.admit({ ...base, requestId: 'b' })).admitted);
    t.like(await state.admit({ ...base, requestId: 'c' }), { admitted: false, reason: 'budget', spentNanos: 0, reservedNanos: 80 });
    await settleOne(state, base, { requestId: base.requestId, reservationNanos: 40, actualNanos: 10 });
    t.deepEqual(await state.read([base.spentKey, base.reservedKey]), [10, 40]);
    t.true((await state.admit({ ...base, requestId: 'd' })).admitted, '10 + 40 + 40 fits 100');
    await settleOne(state, base, { requestId: 'b', reservationNanos: 40, actualNanos: 45 });
    await settleOne(state, base, { requestId: 'd', reservationNanos: 40, actualNanos: 45 });
    t.deepEqual(await state.read([base.spentKey, base.reservedKey]), [100, 0]);
    t.like(await state.admit({ ...base, reservationNanos: 0, requestId: 'e' }), { admitted: false, reason: 'budget', level: 0 }, 'an exhausted budget refuses even a request that reserves nothing');
  });

  withStore('a settle returns the counter it is asked to report, after the charge, and nothing otherwise', async (t, state) => {
    const base = admission({ budgetNanos: 1000, reservationNanos: 40 });
    const spent = [{ key: `${base.spentKey}:total` }, { key: base.spentKey, ttlMs: 60_000 }, { key: `${base.spentKey}:month`, ttlMs: 60_000 }];
    const settle = (actualNanos: number, report?: string[]) =>
      state.settle({ requestId: 'r', reservationNanos: 0, actualNanos, estimatedTokens: 0, levels: [{ reservedKey: base.reservedKey, spent }], ...(report ? { report } : {}) });
    t.is(await settle(7), undefined);
    t.deepEqual(await settle(5, [base.spentKey]), [12]);
    t.deepEqual(await settle(3, [`${base.spentKey}:total`, base.spentKey]), [15, 15]);
    t.deepEqual(await state.read(spent.map(({ key }) => key)), [15, 15, 15]);
  });

  withStore('counters with a lifetime expire', async (t, state) => {
    const key = `expiring-${sequence++}`;
    await state.settle({ requestId: 'r', reservationNanos: 0, actualNanos: 5, estimatedTokens: 0, levels: [{ spent: [{ key, ttlMs: 100 }] }] });
    t.deepEqual(await state.read([key]), [5]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    t.deepEqual(await state.read([key]), [0]);
  });

  withStore('several levels: admitted only when every level admits, counted at none when one refuses', async (t, state) => {
    const team = admission({ requestsPerMinute: 1 });
    const key = admission({ budgetNanos: 100 });
    const both = (requestId: string, reservationNanos: number): Admission => ({ ...key, requestId, reservationNanos, levels: [key.levels[0]!, team.levels[0]!] });
    t.like(await state.admit(both('a', 90)), { admitted: true, reservedNanos: 90 });
    // The team's minute is full: the key's budget (which would admit 5) counts nothing.
    t.like(await state.admit(both('b', 5)), { admitted: false, level: 1, reason: 'requests_per_minute' });
    t.deepEqual(await state.read([key.reservedKey, key.dayCounterKey]), [90, 1]);
    // The key's budget refuses: the team's window does not count the request.
    const other = admission({ requestsPerMinute: 5 });
    t.like(await state.admit({ ...key, requestId: 'c', reservationNanos: 20, levels: [other.levels[0]!, key.levels[0]!] }), { admitted: false, level: 1, reason: 'budget', spentNanos: 0, reservedNanos: 90 });
    t.is(await state.minuteCount(other.minuteWindowKey, Date.now()), 0);
  });

  withStore('tokens per minute: estimates counted at admission, replaced by the actual tokens at settlement', async (t, state) => {
    const base = admission({ tokensPerMinute: 1000, tokens: 400 });
    const first = await state.admit({ ...base, requestId: 't1' });
    t.like(first, { admitted: true, levels: [{ tokensInWindow: 400 }] });
    t.like(await state.admit({ ...base, requestId: 't2' }), { admitted: true, levels: [{ tokensInWindow: 800 }] });
    const refused = await state.admit({ ...base, requestId: 't3' });
    t.like(refused, { admitted: false, reason: 'tokens_per_minute', count: 800 });
    t.true(!refused.admitted && refused.retryAfterMs > 59_000 && refused.retryAfterMs <= 60_000, 'the first estimate leaves the window in a minute');
    // t1 used 100 tokens: 300 given back, so 400 more fit.
    await state.settle({ requestId: 't1', reservationNanos: 0, actualNanos: 0, estimatedTokens: 400, actualTokens: 100, levels: [{ spent: [], tokensWindowKey: base.tokensWindowKey }] });
    t.like(await state.admit({ ...base, requestId: 't4' }), { admitted: true, levels: [{ tokensInWindow: 900 }] });
    const later = Date.now() + 60_001;
    t.like(await state.admit({ ...base, now: later, requestId: 't5' }), { admitted: true, levels: [{ tokensInWindow: 400 }] }, 'a minute later the window is empty');
  });

  withStore('max concurrent: a request in flight holds its place until settled (or its lease ends)', async (t, state) => {
    const base = admission({ maxConcurrent: 2 });
    t.true((await state.admit({ ...base, requestId: 'c1' })).admitted);
    t.true((await state.admit({ ...base, requestId: 'c2' })).admitted);
    t.like(await state.admit({ ...base, requestId: 'c3' }), { admitted: false, reason: 'max_concurrent', count: 2 });
    await state.settle({ requestId: 'c1', reservationNanos: 0, actualNanos: 0, estimatedTokens: 0, levels: [{ spent: [], concurrentKey: base.concurrentKey }] });
    t.true((await state.admit({ ...base, requestId: 'c4' })).admitted);
    const leased = admission({ maxConcurrent: 1, leaseMs: 50 });
    t.true((await state.admit({ ...leased, requestId: 'l1' })).admitted);
    t.like(await state.admit({ ...leased, requestId: 'l2' }), { admitted: false, reason: 'max_concurrent' });
    t.true((await state.admit({ ...leased, now: Date.now() + 100, requestId: 'l3' })).admitted, 'a request never settled (a crashed instance) stops counting when its lease ends');
  });

  withStore('a reservation never settled (a crashed instance) is released after its lease, and the budget admits again', async (t, state) => {
    const base = admission({ budgetNanos: 100, reservationNanos: 60, reservationLeaseMs: 1000 });
    const now = Date.now();
    t.true((await state.admit({ ...base, now, requestId: 'lost' })).admitted);
    t.like(await state.admit({ ...base, now: now + 999, requestId: 'early' }), { admitted: false, reason: 'budget', reservedNanos: 60 }, 'held until its lease ends');
    t.deepEqual(await state.read([base.reservedKey]), [60]);
    t.like(await state.admit({ ...base, now: now + 1000, requestId: 'after' }), { admitted: true, reservedNanos: 60 }, 'the lost reservation is released first');
    t.deepEqual(await state.read([base.reservedKey]), [60], "only the new request's reservation counts");
    // Several levels, one of them without a budget: each budget's lost reservations go.
    const team = admission({ budgetNanos: 200, reservationLeaseMs: 1000 });
    const both = (requestId: string, at: number, reservationNanos: number): Admission => ({ ...base, now: at, requestId, reservationNanos, levels: [base.levels[0]!, admission().levels[0]!, team.levels[0]!] });
    t.like(await state.admit(both('two-levels', now + 5000, 40)), { admitted: true }, '60 (after) released, 40 reserved at both budgets');
    t.deepEqual(await state.read([base.reservedKey, team.reservedKey]), [40, 40]);
    t.like(await state.admit(both('big', now + 6001, 100)), { admitted: true }, 'both 40s released at their own lease end');
    t.deepEqual(await state.read([base.reservedKey, team.reservedKey]), [100, 100]);
  });

  withStore('a settle after its reservation was reclaimed adds the cost but releases nothing (never below 0)', async (t, state) => {
    const base = admission({ budgetNanos: 1000, reservationNanos: 300, reservationLeaseMs: 1000 });
    const now = Date.now();
    t.true((await state.admit({ ...base, now, requestId: 'slow' })).admitted);
    t.true((await state.admit({ ...base, now: now + 1500, requestId: 'next' })).admitted, "reclaims slow's 300");
    t.deepEqual(await state.read([base.reservedKey]), [300]);
    await settleOne(state, base, { requestId: 'slow', reservationNanos: 300, actualNanos: 250 });
    t.deepEqual(await state.read([base.spentKey, base.reservedKey]), [250, 300], "the late settle charges its cost; next's reservation stays");
    await settleOne(state, base, { requestId: 'next', reservationNanos: 300, actualNanos: 10 });
    await settleOne(state, base, { requestId: 'next', reservationNanos: 300, actualNanos: 0 });
    t.deepEqual(await state.read([base.spentKey, base.reservedKey]), [260, 0], 'a second settle of the same request releases nothing more');
    t.true((await state.admit({ ...base, now: now + 3000, reservationNanos: 740, requestId: 'rest' })).admitted, 'the budget admits up to what is left: 1000 - 260');
  });

  withStore('a settle before the lease ends releases the reservation exactly once', async (t, state) => {
    const base = admission({ budgetNanos: 100, reservationNanos: 50, reservationLeaseMs: 1000 });
    const now = Date.now();
    t.true((await state.admit({ ...base, now, requestId: 'a' })).admitted);
    t.true((await state.admit({ ...base, now, requestId: 'b' })).admitted);
    await settleOne(state, base, { requestId: 'a', reservationNanos: 50, actualNanos: 20 });
    t.deepEqual(await state.read([base.spentKey, base.reservedKey]), [20, 50]);
    // After a's lease: only b's (never settled) is reclaimed; a's is not released a second time.
    t.like(await state.admit({ ...base, now: now + 1000, reservationNanos: 80, requestId: 'c' }), { admitted: true, reservedNanos: 80 });
    t.deepEqual(await state.read([base.spentKey, base.reservedKey]), [20, 80]);
    await settleOne(state, base, { requestId: 'c', reservationNanos: 80, actualNanos: 0 });
    t.deepEqual(await state.read([base.reservedKey]), [0]);
  });
}

