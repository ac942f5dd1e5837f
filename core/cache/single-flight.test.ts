import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { ResponseCache } from './response-cache.js';
import { SingleFlight } from './single-flight.js';
import { type CacheStore, SqliteCacheStore } from './store.js';

const entry = (text: string) => ({ storedAt: Date.now(), provider: 'openai', answer: { text } });

function flights(t: { teardown(fn: () => void): void }, options: { waitMs?: number; leaseMs?: number; writeThrough?: boolean; open?: () => Promise<CacheStore> } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'single-flight-'));
  const cache = new ResponseCache({
    open: options.open ?? (async () => new SqliteCacheStore(dataDir, { maxBytes: 1 << 20, writeThrough: options.writeThrough })),
    clock: { now: () => Date.now() },
    logger: pino({ level: 'silent' }),
    timeoutMs: 200,
    maxEntryBytes: 10_000,
    semanticMaxEntries: 10,
  });
  t.teardown(() => {
    void cache.close().finally(() => rmSync(dataDir, { recursive: true, force: true }));
  });
  const make = () => new SingleFlight(cache, { waitMs: options.waitMs ?? 5000, leaseMs: options.leaseMs ?? 2000, timeoutMs: 200, logger: pino({ level: 'silent' }) });
  return { cache, make };
}

for (const writeThrough of [false, true]) {
  const store = writeThrough ? 'leases in cache.sqlite (workers)' : 'leases in memory';
  test(`${store}: the first miss leads, the others follow and get its answer once stored`, async (t) => {
    const { cache, make } = flights(t, { writeThrough });
    const [one, two] = [make(), make()]; // two instances over one store
    const leader = await one.claim('account/a');
    t.is(leader?.role, 'leader');
    t.deepEqual(await two.claim('account/a'), { role: 'follower' });
    t.deepEqual(await one.claim('account/a'), { role: 'follower' });
    t.is((await one.claim('account/b'))?.role, 'leader', 'another key is not coalesced');
    const waits = [one.wait('account/a', 60_000), one.wait('account/a', 60_000), two.wait('account/a', 60_000)];
    await cache.put('account/a', entry('the answer'), 60_000);
    if (leader?.role === 'leader') await leader.release();
    for (const found of await Promise.all(waits)) t.deepEqual(found?.entry.answer, { text: 'the answer' });
    t.is((await two.claim('account/a'))?.role, 'leader', 'a released key can be led again');
  });

  test(`${store}: a leader that stops without an answer frees its followers, who get none`, async (t) => {
    const { make } = flights(t, { writeThrough });
    const flight = make();
    const leader = await flight.claim('account/failed');
    const wait = flight.wait('account/failed', 60_000);
    if (leader?.role === 'leader') await leader.release();
    t.is(await wait, undefined);
  });
}

test('a follower stops waiting after waitMs, and a dead leader frees the key when its lease expires', async (t) => {
  const { make } = flights(t, { waitMs: 150, leaseMs: 100, writeThrough: true });
  const [one, two] = [make(), make()];
  t.is((await one.claim('account/slow'))?.role, 'leader');
  t.is(await two.wait('account/slow', 60_000), undefined);
  // The leader never releases (its renewal stopped after waitMs): the lease expires by itself.
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is((await two.claim('account/slow'))?.role, 'leader');
});

test('waitMs 0 turns single flight off, and a store that fails makes plain misses', async (t) => {
  t.is(await flights(t, { waitMs: 0 }).make().claim('account/x'), undefined);
  const failing = flights(t, { open: async () => Promise.reject(new Error('connection refused')) }).make();
  t.is(await failing.claim('account/x'), undefined);
  t.is(await failing.wait('account/x', 1000), undefined);
});
