import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { type PendingRecord, recordFromText } from './record.js';
import { SqliteLogStore, type SqliteRetention } from './sqlite-store.js';

/** Runs a {@link SqliteLogStore} in a worker thread; see `SqliteWorkerStore`. */
interface Call {
  id: number;
  method: 'init' | 'insertJson' | 'insertPendingJson' | 'list' | 'get' | 'bodies' | 'usage' | 'verdicts' | 'usageTotals' | 'count' | 'prune' | 'close' | 'usedBytes';
  args: unknown[];
}

const decoder = new TextDecoder();
const { path, retention, search, nice } = workerData as { path: string; retention: SqliteRetention; search: boolean; nice: number };
// Background work: this thread alone yields the CPU to the request thread (on Linux a thread's nice
// value is its own; elsewhere it would be the whole process's, so it is left alone there).
if (nice > 0 && process.platform === 'linux') {
  try {
    setPriority(nice);
  } catch (error) {
    parentPort!.postMessage({ warning: `the log writer's nice value (${nice}) could not be set: ${(error as Error).message}` });
  }
}
const store = new SqliteLogStore(path, retention, (message) => parentPort!.postMessage({ warning: message }), search);

/** The records of entries sent with their bodies as text; an entry whose bodies fail is stored without them (as the queue does). */
function records(pending: readonly PendingRecord[], bodyMaxBytes: number) {
  return pending.map(({ entry, bodies }) => {
    try {
      return recordFromText(entry, bodies, bodyMaxBytes);
    } catch {
      return recordFromText(entry, undefined, bodyMaxBytes);
    }
  });
}

parentPort!.on('message', async (call: Call) => {
  try {
    // Batches arrive as JSON bytes in a transferred buffer: no copy and no structured clone of
    // hundreds of objects on the request thread.
    const result =
      call.method === 'insertJson'
        ? await store.insert(JSON.parse(decoder.decode(call.args[0] as Uint8Array)))
        : call.method === 'insertPendingJson'
          ? await store.insert(records(JSON.parse(decoder.decode(call.args[0] as Uint8Array)), call.args[1] as number))
          : await (store[call.method as Exclude<Call['method'], 'insertPendingJson' | 'insertJson'>] as (...args: unknown[]) => unknown).apply(store, call.args);
    parentPort!.postMessage({ id: call.id, result });
  } catch (error) {
    const failure = error as Error & { errcode?: number; code?: string };
    parentPort!.postMessage({ id: call.id, error: { message: failure.message, errcode: failure.errcode, code: failure.code } });
  }
});
