import test from 'ava';
import Keyv from 'keyv';
import { pino } from 'pino';
import { ResponseCache, type StoreResult } from './response-cache.js';
import type { CacheEntry, CacheStore, VectorLog } from './store.js';

/** A store whose every call hangs (`hang`) or fails at once (`fail`), as a Redis that is down or lagging. */
function brokenStore(mode: 'hang' | 'fail'): CacheStore {
  const answer = () => (mode === 'hang' ? new Promise<never>(() => {}) : Promise.reject(new Error('connection refused')));
  const adapter = { get: answer, set: answer, delete: answer, clear: answer, on: () => adapter, opts: {}, namespace: undefined };
  const vectors: VectorLog = { append: answer, since: answer, clear: answer };
  return {
    kind: 'redis',
    entries: new Keyv<CacheEntry>({ store: adapter as never, throwOnErrors: true }),
    vectors,
    leases: { pollMs: 1, acquire: answer, renew: answer, release: answer, held: answer },
    deleteNamespace: answer,
    clear: answer,
    close: async () => {},
  };
}

for (const mode of ['hang', 'fail'] as const) {
  test(`a store that ${mode === 'hang' ? 'lags' : 'fails'} makes misses and unstored answers, with a warning, never an error`, async (t) => {
    const lines: string[] = [];
    const results: StoreResult[] = [];
    const cache = new ResponseCache({
      open: async () => brokenStore(mode),
      clock: { now: () => 0 },
      logger: pino({ level: 'warn' }, { write: (line: string) => lines.push(line) }),
      timeoutMs: 20,
      maxEntryBytes: 1000,
      semanticMaxEntries: 10,
      observer: { stored: (result) => results.push(result), evicted: () => {} },
    });
    t.is(await cache.get('account/x', 1000), undefined);
    t.is(await cache.put('account/x', { storedAt: 0, provider: 'openai', answer: {} }, 1000), 'failed');
    t.is(await cache.nearest({ namespace: 'account', partition: 'p', guard: '|0', vector: new Float32Array([1]) }, 0.9, 1000), undefined);
    t.deepEqual(results, ['failed']);
    t.is(lines.length, 3);
    for (const line of lines) t.regex(JSON.parse(line).cache.reason, mode === 'hang' ? /took over 20 ms/ : /connection refused/);
  });
}

test('an answer over the entry cap is not written', async (t) => {
  const results: StoreResult[] = [];
  const cache = new ResponseCache({
    open: async () => brokenStore('fail'),
    clock: { now: () => 0 },
    logger: pino({ level: 'silent' }),
    timeoutMs: 20,
    maxEntryBytes: 50,
    semanticMaxEntries: 10,
    observer: { stored: (result) => results.push(result), evicted: () => {} },
  });
  t.is(await cache.put('account/x', { storedAt: 0, provider: 'openai', answer: { text: 'x'.repeat(100) } }, 1000), 'too_large');
  t.deepEqual(results, ['too_large']);
});
