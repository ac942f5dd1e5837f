import test from 'ava';
import { timeOrderedId } from './ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('an id is a UUIDv7 whose first 48 bits are the time in milliseconds', (t) => {
  const now = Date.UTC(2026, 10, 23, 12, 34, 56, 789);
  const id = timeOrderedId(now);
  t.regex(id, UUID_V7);
  t.is(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16), now);
  t.is(timeOrderedId(0).slice(0, 14), '00000000-0000-');
  t.is(timeOrderedId(2 ** 48 - 1).slice(0, 14), 'ffffffff-ffff-');
});

test('ids sort by time and do not repeat, across refills of the random pool', (t) => {
  const ids: string[] = [];
  for (let index = 0; index < 5000; index++) ids.push(timeOrderedId(1_700_000_000_000 + index));
  for (const id of ids) t.regex(id, UUID_V7);
  t.deepEqual([...ids].sort(), ids);
  t.is(new Set(ids).size, ids.length);
  const same = Array.from({ length: 5000 }, () => timeOrderedId(1_700_000_000_000));
  t.is(new Set(same).size, same.length, 'ids of one millisecond differ by their random bits');
  // Every random position takes more than one value (the digits are not stuck).
  for (const position of [15, 16, 17, 19, 20, 21, 22, 24, 30, 35]) t.true(new Set(same.map((id) => id[position])).size > 1, `position ${position}`);
});
