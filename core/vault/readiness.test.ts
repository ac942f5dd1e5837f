import test from 'ava';
import { Readiness } from './readiness.js';
import type { VaultService } from './service.js';

// Readiness alone, with stand-ins for the vault: starting, ready, a store that does not answer, draining.

const vaultWith = (started: boolean, read: () => Promise<number[]>, kind: 'embedded' | 'redis' = 'redis') =>
  ({ isStarted: started, parts: { state: { kind, read } } }) as unknown as VaultService;

test('not ready before the vault is open; ready once its state store answers a read', async (t) => {
  t.deepEqual(await new Readiness(vaultWith(false, async () => [])).check(), { status: 503, body: { status: 'starting', store: null } });
  t.deepEqual(await new Readiness(vaultWith(true, async () => [0])).check(), { status: 200, body: { status: 'ready', store: 'redis' } });
});

test('a state store that fails or does not answer within 2 s makes the gateway not ready', async (t) => {
  t.deepEqual(await new Readiness(vaultWith(true, () => Promise.reject(new Error('ECONNREFUSED')))).check(), { status: 503, body: { status: 'store_unavailable', store: 'redis' } });
  t.deepEqual(await new Readiness(vaultWith(true, () => new Promise(() => {}))).check(), { status: 503, body: { status: 'store_unavailable', store: 'redis' } });
});

test('not ready while draining, whatever the store says', async (t) => {
  const readiness = new Readiness(vaultWith(true, async () => [0]));
  readiness.drain();
  t.deepEqual(await readiness.check(), { status: 503, body: { status: 'draining', store: null } });
});
