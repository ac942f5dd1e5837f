import { parentPort, workerData } from 'node:worker_threads';
import { SqliteLogStore, type SqliteRetention } from './sqlite-store.js';

/** Runs a {@link SqliteLogStore} in a worker thread; see `SqliteWorkerStore`. */
interface Call {
  id: number;
  method: 'init' | 'insertJson' | 'list' | 'get' | 'usage' | 'count' | 'prune' | 'close' | 'usedBytes';
  args: unknown[];
}

const decoder = new TextDecoder();
const { path, retention } = workerData as { path: string; retention: SqliteRetention };
const store = new SqliteLogStore(path, retention, (message) => parentPort!.postMessage({ warning: message }));

parentPort!.on('message', async (call: Call) => {
  try {
    // Batches arrive as JSON bytes in a transferred buffer: no copy and no structured clone of
    // hundreds of objects on the request thread.
    const result =
      call.method === 'insertJson'
        ? await store.insert(JSON.parse(decoder.decode(call.args[0] as Uint8Array)))
        : await (store[call.method] as (...args: unknown[]) => unknown).apply(store, call.args);
    parentPort!.postMessage({ id: call.id, result });
  } catch (error) {
    const failure = error as Error & { errcode?: number; code?: string };
    parentPort!.postMessage({ id: call.id, error: { message: failure.message, errcode: failure.errcode, code: failure.code } });
  }
});
