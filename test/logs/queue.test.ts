import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import test from 'ava';
import type { LogEntry } from '../../core/logs/entry.js';
import { LogQueue, type DropReason } from '../../core/logs/queue.js';
import { SpillFile } from '../../core/logs/spill.js';
import { SqliteLogStore } from '../../core/logs/sqlite-store.js';

const entry = (index: number): LogEntry => ({
  id: randomUUID(),
  time: new Date().toISOString(),
  traceId: `queue-${index}`,
  method: 'POST',
  path: '/v1/chat/completions',
  operation: 'chat',
  status: 200,
  outcome: 'ok',
  streaming: false,
  durationMs: 1,
  gatewayMs: 0.5,
  metadata: {},
  guardrails: [],
});

function setup(options: { spillMaxBytes?: number; capacity?: number } = {}) {
  const directory = mkdtempSync(join(tmpdir(), 'log-queue-'));
  const path = join(directory, 'logs.db');
  const store = new SqliteLogStore(path);
  const spill = new SpillFile(join(directory, 'spill'), options.spillMaxBytes ?? 1024 * 1024 * 1024);
  const events = { dropped: [] as Array<[number, DropReason]>, spilled: 0, down: 0 };
  const queue = new LogQueue(
    store,
    spill,
    { capacity: options.capacity ?? 10_000, batchSize: 100, bodyMaxBytes: 1000, retryMs: 20 },
    {
      dropped: (count, reason) => events.dropped.push([count, reason]),
      spilled: (count) => (events.spilled += count),
      storeDown: () => events.down++,
    },
  );
  return { directory, path, store, spill, queue, events };
}

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

test('entries are dropped only once the spill file is at its cap, and every drop is reported', async (t) => {
  const { path, store, queue, events, spill } = setup({ spillMaxBytes: 20_000 });
  queue.start();
  await queue.flush();
  const blocker = new DatabaseSync(path);
  blocker.exec('BEGIN EXCLUSIVE');
  for (let index = 0; index < 200; index++) queue.write(entry(index));
  await until(() => queue.depth === 0 && events.down > 0 && queue.totals.spilled + queue.totals.dropped === 200);
  t.true(queue.totals.spilled > 0 && queue.totals.dropped > 0, `spilled ${queue.totals.spilled}, dropped ${queue.totals.dropped}`);
  t.true(spill.bytes <= 20_000);
  t.is(events.dropped.reduce((sum, [count]) => sum + count, 0), queue.totals.dropped);
  t.true(events.dropped.every(([, reason]) => reason === 'spill_full'));
  blocker.exec('COMMIT');
  blocker.close();
  await queue.flush();
  t.is(await store.count(), queue.totals.spilled, 'everything that was spilled is stored');
  t.is(spill.bytes, 0);
  await queue.close();
});

test('a full in-memory queue overflows to the spill file instead of growing or dropping', async (t) => {
  const { path, store, queue } = setup({ capacity: 50 });
  queue.start();
  await queue.flush();
  const blocker = new DatabaseSync(path);
  blocker.exec('BEGIN EXCLUSIVE');
  // All written in one tick: the writer never runs in between, so only overflow keeps memory bounded.
  for (let index = 0; index < 500; index++) {
    queue.write(entry(index));
    t.true(queue.depth <= 50);
  }
  t.true(queue.totals.spilled >= 450);
  blocker.exec('COMMIT');
  blocker.close();
  await queue.flush();
  t.is(await store.count(), 500);
  t.is(queue.totals.dropped, 0);
  await queue.close();
});

test('what an earlier run spilled is replayed on start; a line cut by a crash is counted as dropped', async (t) => {
  const first = setup();
  first.queue.start();
  await first.queue.flush();
  const blocker = new DatabaseSync(first.path);
  blocker.exec('BEGIN EXCLUSIVE');
  for (let index = 0; index < 30; index++) first.queue.write(entry(index));
  await until(() => first.queue.totals.spilled === 30);
  await first.queue.close(50); // shuts down with the store still locked: the entries stay spilled
  blocker.exec('COMMIT');
  blocker.close();
  const segments = readdirSync(join(first.directory, 'spill'));
  t.true(segments.length >= 1);
  appendFileSync(join(first.directory, 'spill', segments.at(-1)!), '{"id":"cut-by-a-cr');

  const store = new SqliteLogStore(first.path);
  const spill = new SpillFile(join(first.directory, 'spill'), 1024 * 1024);
  const dropped: DropReason[] = [];
  const second = new LogQueue(store, spill, { capacity: 100, batchSize: 7, bodyMaxBytes: 1000, retryMs: 20 }, { dropped: (_count, reason) => dropped.push(reason) });
  second.start();
  await second.flush();
  t.is(await store.count(), 30);
  t.deepEqual(dropped, ['spill_unreadable']);
  t.deepEqual(readdirSync(join(first.directory, 'spill')), []);
  await second.close();
});

test('a store that cannot open at start is retried while entries wait in the spill file', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'log-queue-'));
  // The database path is a directory, so opening fails until it is freed.
  const path = join(directory, 'logs.db');
  const { mkdirSync, rmdirSync } = await import('node:fs');
  mkdirSync(path);
  const store = new SqliteLogStore(path);
  const queue = new LogQueue(store, new SpillFile(join(directory, 'spill'), 1024 * 1024), { capacity: 100, batchSize: 10, bodyMaxBytes: 100, retryMs: 20 });
  queue.start();
  for (let index = 0; index < 25; index++) queue.write(entry(index));
  await until(() => queue.totals.spilled === 25);
  t.false(queue.storeUp);
  rmdirSync(path);
  await queue.flush();
  t.is(await store.count(), 25);
  await queue.close();
});
