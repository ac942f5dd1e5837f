import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { RedisState } from '../../core/store/redis-state.js';
import { COUNTER_FLUSH_MS, SqliteState } from '../../core/store/sqlite-state.js';
import type { InvalidationEvent, SharedState } from '../../core/store/state.js';
import { admission, settleOne, stateContract } from '../store/state-contract.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from './vault-harness.js';

const prefix = `test-store-${process.pid}-${randomBytes(4).toString('hex')}`;
let redisUp = false;
const opened: SharedState[] = [];

test.before(async () => {
  redisUp = await redisAvailable();
});
test.after.always(async () => {
  await Promise.all(opened.map((state) => state.close()));
  if (redisUp) await clearRedisPrefix(prefix);
});

const stores: Array<[name: string, open: () => Promise<SharedState | undefined>]> = [
  ['embedded SQLite', async () => new SqliteState(mkdtempSync(join(tmpdir(), 'store-test-')))],
  ['Redis', async () => (redisUp ? RedisState.connect(REDIS_URL, prefix) : undefined)],
];

for (const [name, open] of stores) stateContract(name, open, opened);

test.serial('Redis: an event published by one connection reaches another', async (t) => {
  if (!redisUp) return t.pass('Redis unreachable: skipped');
  const [first, second] = await Promise.all([RedisState.connect(REDIS_URL, prefix), RedisState.connect(REDIS_URL, prefix)]);
  opened.push(first, second);
  const received = new Promise<InvalidationEvent>((resolve) => second.subscribe(resolve));
  await first.publish({ kind: 'virtual-key', id: 'vk_1' });
  t.deepEqual(await received, { kind: 'virtual-key', id: 'vk_1' });
});

test.serial('embedded SQLite: counters and the per-minute window are written to the file within the flush interval and read back after a restart; a restart releases the reservations of the requests that died with the process, not batches', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'store-test-'));
  const first = new SqliteState(directory);
  const base = admission({ requestsPerMinute: 2, requestsPerDay: 10, budgetNanos: 1000, reservationNanos: 100 });
  t.true((await first.admit({ ...base, requestId: 'r1' })).admitted);
  await settleOne(first, base, { requestId: 'r1', reservationNanos: 100, actualNanos: 30 });
  t.true((await first.admit({ ...base, requestId: 'r2' })).admitted);
  // A batch's reservation outlives the process; r2's (a request in flight) does not.
  const batch = admission({ budgetNanos: 1000, reservationNanos: 70, reservationPersists: true });
  t.true((await first.admit({ ...batch, requestId: 'batch_1' })).admitted);
  const expected = [2, 2, 30, 100, 70];
  const keys = [base.dayCounterKey, base.totalCounterKey, base.spentKey, base.reservedKey, batch.reservedKey];

  // Without closing the first (as after a crash), a second handle on the file sees what was flushed.
  await new Promise((resolve) => setTimeout(resolve, COUNTER_FLUSH_MS * 3));
  const reader = new SqliteState(directory);
  t.deepEqual(await reader.read(keys), expected);
  await reader.close();

  await first.close();
  const reopened = new SqliteState(directory);
  opened.push(reopened);
  t.deepEqual(await reopened.read(keys), expected, 'counters survive a restart');
  t.like(await reopened.admit({ ...base, requestId: 'r3' }), { admitted: false, reason: 'requests_per_minute', count: 2 }, 'so does the window');
  // r2's request died with the first process: the first admission of this one releases it at once; the batch's stays until it settles.
  t.like(await reopened.admit({ ...base, now: Date.now() + 61_000, reservationNanos: 0, requestId: 'r4' }), { admitted: true });
  t.like(await reopened.admit({ ...batch, reservationNanos: 0, requestId: 'r5' }), { admitted: true });
  t.deepEqual(await reopened.read([base.reservedKey, batch.reservedKey]), [0, 70], "r2's reservation released after the restart, the batch's kept");
  await settleOne(reopened, batch, { requestId: 'batch_1', reservationNanos: 70, actualNanos: 60 });
  t.deepEqual(await reopened.read([batch.spentKey, batch.reservedKey]), [60, 0], 'the batch settles once, on the restarted process');
});
