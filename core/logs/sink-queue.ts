import type { LogSinkTarget, SinkRecord } from '../spec/sink.js';
import type { LogBodies, LogEntry, LogSink } from './entry.js';
import type { DropReason } from './queue.js';
import { type LogRecord, toLogRecord } from './record.js';
import type { SpillFile } from './spill.js';

/** A stored record is what a sink receives (checked here, where the two meet). */
const asSinkRecords = (records: readonly LogRecord[]): readonly SinkRecord[] => records;

export interface SinkQueueOptions {
  /** Records per delivery. */
  batchSize: number;
  /** Entries held in memory before they go to the spill directory. */
  capacity: number;
  retryMs: number;
  /** A delivery (or an `open`) not settled by then counts as failed. */
  timeoutMs: number;
  /** Whether records carry the bodies, and their cap. */
  bodies: boolean;
  bodyMaxBytes: number;
  /** How long a partial batch waits for more entries. */
  lingerMs: number;
}

/** What a sink's queue reports, for metrics and warnings. */
export interface SinkQueueObserver {
  delivered?(count: number): void;
  spilled?(count: number): void;
  replayed?(count: number): void;
  dropped?(count: number, reason: DropReason, detail?: string): void;
  down?(error: unknown): void;
  up?(): void;
}

interface Pending {
  entry: LogEntry;
  bodies?: LogBodies;
}

/** Rejects when `promise` has not settled within `ms` (the promise itself goes on; its result is ignored). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * One external sink's durable queue, in the order entries were logged. `write` only pushes to a
 * bounded array. A writer delivers batches, one at a time; a failed delivery marks the sink down,
 * and the batch with everything behind it goes to the sink's spill directory, which is replayed,
 * oldest first, before anything newer once the sink answers again (retried every `retryMs`). When
 * the array is full it overflows to the spill directory at once (a batch in flight goes there too,
 * ahead of the rest, and is delivered again: the sink deduplicates by record id). So the order of
 * first deliveries is the order of the entries; a record may be delivered twice, never lost unless
 * the spill directory is at its cap (counted).
 */
export class SinkQueue implements LogSink {
  private memory: Pending[] = [];
  private inflight?: { records: LogRecord[]; spilled: boolean };
  private running = false;
  private up = false;
  private opened = false;
  private failing = false;
  private closed = false;
  private retryTimer?: NodeJS.Timeout;
  private lingerTimer?: NodeJS.Timeout;
  private idleWaiters: Array<() => void> = [];
  readonly totals = { delivered: 0, spilled: 0, replayed: 0, dropped: 0 };

  constructor(
    readonly name: string,
    private readonly target: LogSinkTarget,
    private readonly spill: SpillFile,
    private readonly options: SinkQueueOptions,
    private readonly observer: SinkQueueObserver = {},
  ) {}

  /** Connects and replays what an earlier run spilled. Never throws: a sink that fails is retried. */
  start(): void {
    this.up = true;
    this.schedule(true);
  }

  get depth(): number {
    return this.memory.length;
  }

  get spillBytes(): number {
    return this.spill.bytes;
  }

  /** Whether the sink took its last delivery (or opened and has not failed since). */
  get sinkUp(): boolean {
    return this.up && this.opened && !this.failing;
  }

  write(entry: LogEntry, bodies?: LogBodies): void {
    this.memory.push(this.options.bodies && bodies ? { entry, bodies } : { entry });
    if (this.closed || this.memory.length >= this.options.capacity) this.overflow();
    else this.schedule();
  }

  private record(pending: Pending): LogRecord {
    try {
      return toLogRecord(pending.entry, pending.bodies, this.options.bodyMaxBytes);
    } catch {
      return toLogRecord(pending.entry, undefined);
    }
  }

  /** Appends to the spill directory, synchronously, so appends keep the order they were made in. */
  private toSpill(records: readonly LogRecord[]): void {
    if (records.length === 0) return;
    try {
      const { kept, dropped } = this.spill.appendSync(records);
      this.totals.spilled += kept;
      if (kept > 0) this.observer.spilled?.(kept);
      if (dropped > 0) {
        this.totals.dropped += dropped;
        this.observer.dropped?.(dropped, 'spill_full');
      }
    } catch (error) {
      this.totals.dropped += records.length;
      this.observer.dropped?.(records.length, 'spill_unwritable', (error as Error).message);
    }
  }

  /** Moves the batch in flight (unless already there) and the whole backlog to the spill directory, in order. */
  private overflow(): void {
    const backlog = this.memory;
    this.memory = [];
    const inflight = this.inflight && !this.inflight.spilled ? this.inflight.records : [];
    if (this.inflight) this.inflight.spilled = true;
    this.toSpill([...inflight, ...backlog.map((pending) => this.record(pending))]);
  }

  private schedule(immediate = false): void {
    if (this.running || this.closed) return;
    if (!immediate && this.memory.length < this.options.batchSize) {
      if (!this.lingerTimer) {
        this.lingerTimer = setTimeout(() => {
          this.lingerTimer = undefined;
          this.schedule(true);
        }, this.options.lingerMs);
        this.lingerTimer.unref();
      }
      return;
    }
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.running = true;
    setImmediate(() => void this.drain());
  }

  private async markDown(error: unknown): Promise<void> {
    if (this.up && !this.failing) this.observer.down?.(error);
    this.up = false;
    this.failing = true;
    this.opened = false;
    await this.target.reset?.().catch(() => {});
    clearTimeout(this.retryTimer);
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.up = true;
      this.schedule(true);
    }, this.options.retryMs);
    this.retryTimer.unref();
  }

  private async deliver(records: readonly LogRecord[]): Promise<void> {
    await within(this.target.deliver(asSinkRecords(records)), this.options.timeoutMs, 'delivery');
    if (this.failing) this.observer.up?.();
    this.failing = false;
  }

  private async step(): Promise<boolean> {
    if (!this.up) {
      if (this.memory.length === 0) return false;
      this.overflow();
      return true;
    }
    if (!this.opened) {
      try {
        if (this.target.open) await within(this.target.open(), this.options.timeoutMs, 'connection');
        this.opened = true;
      } catch (error) {
        await this.markDown(error);
        return true;
      }
    }
    if (!this.spill.isEmpty) {
      try {
        const { replayed, unreadable } = await this.spill.replayOldest((records) => this.deliver(records), this.options.batchSize);
        this.totals.replayed += replayed;
        this.observer.replayed?.(replayed);
        if (unreadable > 0) {
          this.totals.dropped += unreadable;
          this.observer.dropped?.(unreadable, 'spill_unreadable');
        }
      } catch (error) {
        await this.markDown(error);
      }
      return true;
    }
    if (this.memory.length === 0) return false;
    const inflight = { records: this.memory.splice(0, this.options.batchSize).map((pending) => this.record(pending)), spilled: false };
    this.inflight = inflight;
    try {
      await this.deliver(inflight.records);
      this.totals.delivered += inflight.records.length;
      this.observer.delivered?.(inflight.records.length);
    } catch (error) {
      await this.markDown(error);
      if (!inflight.spilled) this.overflow();
    } finally {
      this.inflight = undefined;
    }
    return true;
  }

  private async drain(): Promise<void> {
    try {
      while (!this.closed && (await this.step())) {
        // keep going while there is work
      }
    } finally {
      this.running = false;
      if (this.memory.length > 0 && !this.closed) this.schedule();
      else this.notifyIdle();
    }
  }

  private isSettled(): boolean {
    return !this.running && this.memory.length === 0 && this.spill.isEmpty && this.up && this.opened;
  }

  private notifyIdle(): void {
    if (!this.isSettled()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves once every entry written so far is delivered (waits through an outage). */
  flush(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.schedule(true);
    });
  }

  /** Gives the sink up to `graceMs` to take what is queued, spills the rest (replayed on the next start), closes it. */
  async close(graceMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.lingerTimer);
    // A batch in flight gets one more second; then it is spilled too (and delivered again next time).
    const deadline = Date.now() + 1000;
    while (this.running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    this.overflow();
    await this.target.close?.().catch(() => {});
  }
}
