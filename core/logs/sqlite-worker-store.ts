import { Worker } from 'node:worker_threads';
import { entryJson } from './entry.js';
import type { LogRecord, PendingRecord } from './record.js';
import type { SqliteRetention } from './sqlite-store.js';
import type { LogBodiesRow, LogPage, LogQuery, LogStore, UsageCell, UsageQuery, UsageTotalsQuery, VerdictCounts, VerdictQuery } from './store.js';

const encoder = new TextEncoder();

interface Reply {
  id?: number;
  result?: unknown;
  error?: { message: string; errcode?: number; code?: string };
  warning?: string;
}

/**
 * The SQLite log store, run in a worker thread. `node:sqlite` is synchronous: on the main thread a
 * batch insert or a dashboard query over a large table would stall every request in flight. Here
 * the main thread only posts messages (records are structured-cloned) and awaits the answer.
 */
export class SqliteWorkerStore implements LogStore {
  readonly kind = 'sqlite';
  private worker?: Worker;
  private sequence = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly path: string,
    private readonly retention: SqliteRetention = { maxAgeMs: 0, maxBytes: 0 },
    private readonly onWarning: (message: string) => void = () => {},
    /** Index the bodies for search (`logs.search`). */
    readonly searchable = true,
    /** The worker thread's nice value (`logs.writerNice`; 0: the process's priority). */
    private readonly nice = 0,
  ) {}

  private start(): Worker {
    const worker = new Worker(new URL('./sqlite-worker.js', import.meta.url), { workerData: { path: this.path, retention: this.retention, search: this.searchable, nice: this.nice } });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      if (reply.warning !== undefined) return this.onWarning(reply.warning);
      const waiting = this.pending.get(reply.id!);
      if (!waiting) return;
      this.pending.delete(reply.id!);
      if (this.pending.size === 0) worker.unref(); // an idle store does not keep the process alive
      if (reply.error) waiting.reject(Object.assign(new Error(reply.error.message), { errcode: reply.error.errcode, code: reply.error.code }));
      else waiting.resolve(reply.result);
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return; // an earlier worker, already replaced or closed
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
      this.worker = undefined; // the next call starts a new worker
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`SQLite log worker exited (${code})`)));
    return worker;
  }

  private call<T>(method: string, ...args: unknown[]): Promise<T> {
    return this.send(method, args);
  }

  private send<T>(method: string, args: unknown[], transfer?: ArrayBuffer[]): Promise<T> {
    this.worker ??= this.start();
    if (this.pending.size === 0) this.worker.ref();
    const id = ++this.sequence;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker!.postMessage({ id, method, args }, transfer);
    });
  }

  init(): Promise<void> {
    return this.call('init');
  }
  insert(records: readonly LogRecord[]): Promise<void> {
    // JSON bytes in a transferred buffer: no copy and no structured clone of hundreds of objects.
    const bytes = encoder.encode(JSON.stringify(records));
    return this.send('insertJson', [bytes], [bytes.buffer as ArrayBuffer]);
  }
  /**
   * The records are built in the worker (redaction, capping, stream summaries): the request thread
   * only serialises the entries and their bodies' text.
   */
  insertPending(pending: readonly PendingRecord[], bodyMaxBytes: number): Promise<void> {
    // Each entry's JSON is the one its pino line was made of (entryJson): not serialised again. The
    // pieces are written straight into the bytes sent (no joined string, flattened and copied).
    const pieces: string[] = [];
    let size = 2;
    for (const { entry, bodies } of pending) {
      const json = entryJson(entry);
      const text = bodies ? JSON.stringify(bodies) : undefined;
      pieces.push(json, text ?? '');
      size += Buffer.byteLength(json) + (text === undefined ? 0 : Buffer.byteLength(text)) + 24;
    }
    const bytes = Buffer.allocUnsafeSlow(size);
    let offset = bytes.write('[');
    for (let index = 0; index < pieces.length; index += 2) {
      offset += bytes.write(index === 0 ? '{"entry":' : ',{"entry":', offset, 'latin1');
      offset += bytes.write(pieces[index], offset);
      if (pieces[index + 1] !== '') {
        offset += bytes.write(',"bodies":', offset, 'latin1');
        offset += bytes.write(pieces[index + 1], offset);
      }
      offset += bytes.write('}', offset, 'latin1');
    }
    offset += bytes.write(']', offset, 'latin1');
    return this.send('insertPendingJson', [bytes.subarray(0, offset), bodyMaxBytes], [bytes.buffer as ArrayBuffer]);
  }
  list(query: LogQuery): Promise<LogPage> {
    return this.call('list', query);
  }
  get(id: string): Promise<LogRecord | undefined> {
    return this.call('get', id);
  }
  bodies(ids: readonly string[]): Promise<LogBodiesRow[]> {
    return this.call('bodies', ids);
  }
  usage(query: UsageQuery): Promise<UsageCell[]> {
    return this.call('usage', query);
  }
  verdicts(query: VerdictQuery): Promise<VerdictCounts> {
    return this.call('verdicts', query);
  }
  usageTotals(query: UsageTotalsQuery): Promise<UsageCell[][]> {
    return this.call('usageTotals', query);
  }
  count(): Promise<number> {
    return this.call('count');
  }
  prune(now?: number): Promise<number> {
    return this.call('prune', now);
  }
  /** Bytes of the database in use. */
  usedBytes(): Promise<number> {
    return this.call('usedBytes');
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.call('close').catch(() => {});
    this.worker = undefined;
    await worker.terminate();
  }
}
