import type { LogBodies, LogEntry, LogSink } from './entry.js';
import { type LogRecord, type PendingRecord, textBodies, toLogRecord } from './record.js';
import type { SpillFile } from './spill.js';
import type { LogStore } from './store.js';

export interface LogQueueOptions {
  /** Entries held in memory before they overflow to the spill file (default 10 000). */
  capacity: number;
  /** Records per store write (default 500). */
  batchSize: number;
  /** Cap of each stored body (characters). */
  bodyMaxBytes: number;
  /** Delay between attempts to reach a store that failed (default 1000 ms). */
  retryMs: number;
  /** How long a partial batch waits for more entries (default 0: next turn of the event loop). */
  lingerMs?: number;
}

/** What the queue reports, for metrics and warnings. */
export interface LogQueueObserver {
  written?(count: number): void;
  spilled?(count: number): void;
  replayed?(count: number): void;
  dropped?(count: number, reason: DropReason, detail?: string): void;
  storeDown?(error: unknown): void;
  storeUp?(): void;
}

/** Why entries were lost: the spill file at its cap, failing to write, or holding a line cut by a crash. */
export type DropReason = 'spill_full' | 'spill_unwritable' | 'spill_unreadable';

interface Pending {
  entry: LogEntry;
  bodies?: LogBodies;
}

/**
 * Takes log entries off the request path: `write` only pushes to a bounded array. A writer drains
 * it in batches into the store. When the store fails, batches go to the spill file and the store is
 * retried every `retryMs`; once it answers, the spill is replayed. When the array is full (the store
 * is slower than the traffic) its contents overflow to the spill file at once. An entry is dropped
 * only when the spill file is at its cap, and every drop is reported.
 */
export class LogQueue implements LogSink {
  private memory: Pending[] = [];
  private running = false;
  private up = false;
  private initialized = false;
  /** The last store write (a batch or a replay) failed; cleared by the next one that succeeds. */
  private failing = false;
  private closed = false;
  private retryTimer?: NodeJS.Timeout;
  private lingerTimer?: NodeJS.Timeout;
  private idleWaiters: Array<() => void> = [];
  readonly totals = { written: 0, spilled: 0, replayed: 0, dropped: 0 };

  constructor(
    private readonly store: LogStore,
    private readonly spill: SpillFile,
    private readonly options: LogQueueOptions,
    private readonly observer: LogQueueObserver = {},
  ) {}

  /** Opens the store and replays what an earlier run spilled. Never throws: a store that fails is retried. */
  start(): void {
    this.up = true;
    this.schedule(true);
  }

  /** Entries waiting in memory. */
  get depth(): number {
    return this.memory.length;
  }

  get spillBytes(): number {
    return this.spill.bytes;
  }

  /**
   * Whether the store accepts writes: it opened and its last write succeeded. A retry of a store
   * that failed does not count until a write goes through (`gateway_log_store_up`).
   */
  get storeUp(): boolean {
    return this.reachable && !this.failing;
  }

  /** The store opened and is not waiting for its retry. */
  private get reachable(): boolean {
    return this.up && this.initialized;
  }

  write(entry: LogEntry, bodies?: LogBodies): void {
    if (this.memory.length >= this.options.capacity) this.overflow();
    this.memory.push({ entry, bodies });
    if (this.closed) this.overflow(); // after close: straight to the spill file, replayed on the next start
    else this.schedule();
  }

  private record(pending: Pending): LogRecord {
    try {
      return toLogRecord(pending.entry, pending.bodies, this.options.bodyMaxBytes);
    } catch {
      return toLogRecord(pending.entry, undefined);
    }
  }

  private countSpill(result: { kept: number; dropped: number }): void {
    this.totals.spilled += result.kept;
    if (result.kept > 0) this.observer.spilled?.(result.kept);
    if (result.dropped > 0) {
      this.totals.dropped += result.dropped;
      this.observer.dropped?.(result.dropped, 'spill_full');
    }
  }

  /** The store is slower than the traffic: move the whole backlog to the spill file now. */
  private overflow(): void {
    const backlog = this.memory;
    this.memory = [];
    try {
      this.countSpill(this.spill.appendSync(backlog.map((pending) => this.record(pending))));
    } catch (error) {
      this.totals.dropped += backlog.length;
      this.observer.dropped?.(backlog.length, 'spill_unwritable', (error as Error).message);
    }
  }

  /**
   * Starts the writer: at once for a full batch (or when asked), otherwise after `lingerMs`, so
   * that light traffic still makes batches rather than one store write (and one message to the
   * SQLite worker) per request.
   */
  private schedule(immediate = false): void {
    if (this.running || this.closed) return;
    if (!immediate && this.memory.length < this.options.batchSize) {
      if (!this.lingerTimer) {
        this.lingerTimer = setTimeout(() => {
          this.lingerTimer = undefined;
          this.schedule(true);
        }, this.options.lingerMs ?? 0);
        this.lingerTimer.unref();
      }
      return;
    }
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.running = true;
    setImmediate(() => void this.drain());
  }

  private markDown(error: unknown): void {
    if (this.up) this.observer.storeDown?.(error);
    this.up = false;
    this.failing = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.up = true;
      this.schedule(true);
    }, this.options.retryMs);
    this.retryTimer.unref();
  }

  private async toSpill(records: LogRecord[]): Promise<void> {
    try {
      this.countSpill(await this.spill.append(records));
    } catch (error) {
      this.totals.dropped += records.length;
      this.observer.dropped?.(records.length, 'spill_unwritable', (error as Error).message);
    }
  }

  private async insert(records: LogRecord[]): Promise<void> {
    await this.store.insert(records);
    this.written(records.length);
  }

  private written(count: number): void {
    this.failing = false;
    this.totals.written += count;
    this.observer.written?.(count);
  }

  /** The entry and its bodies as text, for a store that builds the record itself. */
  private pendingText(pending: Pending): PendingRecord {
    if (!pending.bodies) return { entry: pending.entry };
    try {
      return { entry: pending.entry, bodies: textBodies(pending.bodies, this.options.bodyMaxBytes) };
    } catch {
      return { entry: pending.entry };
    }
  }

  /** Stores a batch: built into records here, or by the store (off the request thread) when it can. */
  private async insertBatch(batch: Pending[]): Promise<void> {
    if (!this.store.insertPending) return this.insert(batch.map((pending) => this.record(pending)));
    await this.store.insertPending(
      batch.map((pending) => this.pendingText(pending)),
      this.options.bodyMaxBytes,
    );
    this.written(batch.length);
  }

  private async step(): Promise<boolean> {
    if (this.up && !this.initialized) {
      try {
        await this.store.init();
        this.initialized = true;
        this.failing = false;
        this.observer.storeUp?.();
      } catch (error) {
        this.markDown(error);
      }
    }
    if (this.memory.length > 0) {
      const batch = this.memory.splice(0, this.options.batchSize);
      if (!this.up) {
        await this.toSpill(batch.map((pending) => this.record(pending)));
        return true;
      }
      try {
        await this.insertBatch(batch);
      } catch (error) {
        this.markDown(error);
        await this.toSpill(batch.map((pending) => this.record(pending)));
      }
      return true;
    }
    if (this.up && !this.spill.isEmpty) {
      try {
        const { replayed, unreadable } = await this.spill.replayOldest((records) => this.insert(records), this.options.batchSize);
        this.totals.replayed += replayed;
        this.observer.replayed?.(replayed);
        if (unreadable > 0) {
          this.totals.dropped += unreadable;
          this.observer.dropped?.(unreadable, 'spill_unreadable');
        }
      } catch (error) {
        this.markDown(error);
      }
      return true;
    }
    return false;
  }

  private async drain(): Promise<void> {
    try {
      while (await this.step()) {
        // keep going while there is work
      }
    } finally {
      this.running = false;
      if (this.memory.length > 0 && !this.closed) this.schedule();
      else this.notifyIdle();
    }
  }

  private notifyIdle(): void {
    if (!this.isSettled()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private isSettled(): boolean {
    return !this.running && this.memory.length === 0 && this.spill.isEmpty && this.reachable;
  }

  /** Resolves once every entry written so far is in the store (waits through an outage). */
  flush(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.schedule(true);
    });
  }

  /** Gives the writer up to `graceMs` to store what is queued, spills the rest, closes the store. */
  async close(graceMs = 5000): Promise<void> {
    const flushed = this.flush();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([flushed, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.lingerTimer);
    // A batch in flight gets one more second; if its write then fails, it still goes to the spill file.
    const deadline = Date.now() + 1000;
    while (this.running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.memory.length > 0) this.overflow();
    await this.store.close().catch(() => {});
  }
}
