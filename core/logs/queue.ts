import { DurableQueue, type DurableQueueOptions, type Pending, type SpillObserver } from './durable-queue.js';
import type { LogBodies, LogEntry, LogSink } from './entry.js';
import { type LogRecord, type PendingRecord, textBodies } from './record.js';
import type { SpillFile } from './spill.js';
import type { LogStore } from './store.js';

export type { DropReason } from './durable-queue.js';

export type LogQueueOptions = DurableQueueOptions;

/** What the queue reports, for metrics and warnings. */
export interface LogQueueObserver extends SpillObserver {
  written?(count: number): void;
  storeDown?(error: unknown): void;
  storeUp?(): void;
}

/**
 * Takes log entries off the request path: `write` only pushes to a bounded array. A writer drains
 * it in batches into the store. When the store fails, batches go to the spill file and the store is
 * retried every `retryMs`; once it answers, the spill is replayed. When the array is full (the store
 * is slower than the traffic) its contents overflow to the spill file at once. An entry is dropped
 * only when the spill file is at its cap, and every drop is reported.
 */
export class LogQueue extends DurableQueue<{ written: number; spilled: number; replayed: number; dropped: number }, LogQueueObserver> implements LogSink {
  constructor(
    private readonly store: LogStore,
    spill: SpillFile,
    options: LogQueueOptions,
    observer: LogQueueObserver = {},
  ) {
    super(spill, options, observer, { written: 0, spilled: 0, replayed: 0, dropped: 0 });
  }

  /**
   * Whether the store accepts writes: it opened and its last write succeeded. A retry of a store
   * that failed does not count until a write goes through (`gateway_log_store_up`).
   */
  get storeUp(): boolean {
    return this.accepting;
  }

  write(entry: LogEntry, bodies?: LogBodies): void {
    if (this.memory.length >= this.options.capacity) this.overflow();
    this.memory.push({ entry, bodies });
    if (this.closed) this.overflow(); // after close: straight to the spill file, replayed on the next start
    else this.schedule();
  }

  /** The store is slower than the traffic: move the whole backlog to the spill file now. */
  protected override overflow(): void {
    const backlog = this.memory;
    this.memory = [];
    this.spillSync(backlog.map((pending) => this.record(pending)));
  }

  private markDown(error: unknown): void {
    if (this.up) this.observer.storeDown?.(error);
    this.up = false;
    this.failing = true;
    this.retryLater();
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

  protected override async step(): Promise<boolean> {
    if (this.up && !this.opened) {
      try {
        await this.store.init();
        this.opened = true;
        this.failing = false;
        this.observer.storeUp?.();
      } catch (error) {
        this.markDown(error);
      }
    }
    if (this.memory.length > 0) {
      const batch = this.memory.splice(0, this.options.batchSize);
      if (!this.up) {
        await this.spillAsync(batch.map((pending) => this.record(pending)));
        return true;
      }
      try {
        await this.insertBatch(batch);
      } catch (error) {
        this.markDown(error);
        await this.spillAsync(batch.map((pending) => this.record(pending)));
      }
      return true;
    }
    if (this.up && !this.spill.isEmpty) {
      try {
        await this.replaySpill((records) => this.insert(records));
      } catch (error) {
        this.markDown(error);
      }
      return true;
    }
    return false;
  }

  protected override closeTarget(): Promise<void> {
    return this.store.close().catch(() => {});
  }
}
