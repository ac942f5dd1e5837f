import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import test from 'ava';
import { SqliteLruStore } from './sqlite-lru-store.js';

const open = (maxBytes: number, file = join(mkdtempSync(join(tmpdir(), 'lru-')), 'cache.sqlite')) => {
  const evicted: number[] = [];
  const store = new SqliteLruStore(new DatabaseSync(file), { maxBytes, onEvict: (count) => evicted.push(count) });
  return { store, evicted, file };
};
const value = (size: number, fill = 'x') => fill.repeat(size);

test('keeps values with their TTL: an expired value reads as absent and is deleted', async (t) => {
  const { store } = open(10_000);
  await store.set('lasting', 'kept');
  await store.set('brief', 'gone soon', 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  t.is(await store.get('lasting'), 'kept');
  t.is(await store.get('brief'), undefined);
  t.is(store.size, 4);
});

test('past the cap the least recently used values go first, until the rest fits in 90% of it', async (t) => {
  const { store, evicted } = open(1000);
  for (const name of ['a', 'b', 'c', 'd']) await store.set(name, value(200));
  await store.get('a'); // a is now the most recently used
  await store.set('e', value(200)); // 1000 bytes: at the cap, nothing to evict
  t.deepEqual(evicted, []);
  await store.set('f', value(200)); // 1200 > 1000: evict to ≤ 900, so b and c
  t.deepEqual(evicted, [2]);
  t.is(await store.get('b'), undefined);
  t.is(await store.get('c'), undefined);
  for (const name of ['a', 'd', 'e', 'f']) t.is(await store.get(name), value(200), name);
  t.is(store.size, 800);
});

test('a replaced value counts its new size only; expired values are evicted before any live one', async (t) => {
  const { store } = open(1000);
  await store.set('a', value(300));
  await store.set('a', value(100));
  t.is(store.size, 100);
  await store.set('old', value(400), 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  await store.set('b', value(400));
  await store.set('c', value(200)); // 1100 > 1000: the expired one alone makes room
  t.is(await store.get('a'), value(100));
  t.is(await store.get('b'), value(400));
  t.is(store.size, 700);
});

test('deletePrefix removes one namespace’s keys only, and the totals survive reopening the file', async (t) => {
  const { store, file } = open(10_000);
  await store.set('key:a/1', value(10));
  await store.set('key:a/2', value(10));
  await store.set('key:ab/1', value(10));
  await store.set('shared:a/1', value(10));
  t.is(store.deletePrefix('key:a/'), 2);
  t.is(await store.get('key:ab/1'), value(10));
  t.is(store.size, 20);
  const reopened = open(10_000, file).store;
  t.is(reopened.size, 20);
  t.is(await reopened.get('shared:a/1'), value(10));
  t.is(reopened.deletePrefix(''), 2);
  t.is(reopened.size, 0);
});

test('writes wait in memory, readable at once, until one transaction writes them (flush, or any deletion)', async (t) => {
  const { store, file } = open(10_000);
  await store.set('a', value(10));
  await store.set('b', value(20));
  t.is(await store.get('a'), value(10), 'a pending write is read back at once');
  t.is(store.size, 30);
  t.is(await open(10_000, file).store.get('a'), undefined, 'not in the file yet');
  store.flush();
  const reopened = open(10_000, file).store;
  t.is(await reopened.get('a'), value(10));
  t.is(reopened.size, 30);
});

test('writeThrough (processes sharing the file): a value is in the file once set resolves, readable by another connection at once', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'lru-')), 'cache.sqlite');
  const writer = new SqliteLruStore(new DatabaseSync(file), { maxBytes: 10_000, writeThrough: true });
  const reader = open(10_000, file).store;
  await writer.set('a', value(10));
  t.is(await reader.get('a'), value(10));
  await writer.set('a', value(12, 'y'));
  t.is(await reader.get('a'), value(12, 'y'), 'a replaced value too');
  t.is(writer.size, 12);
});
