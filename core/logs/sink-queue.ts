import type { LogSinkTarget, SinkRecord } from '../spec/sink.js';
import { DurableQueue, type DurableQueueOptions, type SpillObserver } from './durable-queue.js';
import type { LogBodies, LogEntry, LogSink } from './entry.js';
import type { LogRecord } from './record.js';
import type { SpillFile } from './spill.js';

/** A stored record is what a sink receives (checked here, where the two meet). */
const asSinkRecords = (records: readonly LogRecord[]): readonly SinkRecord[] => records;

export interface SinkQueueOptions extends DurableQueueOptions {
  /** A delivery (or an `open`) not settled by then counts as failed. */
  timeoutMs: number;
  /** Whether records carry the bodies (capped at `bodyMaxBytes`). */
  bodies: boolean;
  lingerMs: number;
}

/** What a sink's queue reports, for metrics and warnings. */
export interface SinkQueueObserver extends SpillObserver {
  delivered?(count: number): void;
  down?(error: unknown): void;
  up?(): void;
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
export class SinkQueue extends DurableQueue<{ delivered: number; spilled: number; replayed: number; dropped: number }, SinkQueueObserver> implements LogSink {
  declare protected readonly options: SinkQueueOptions;
  private inflight?: { records: LogRecord[]; spilled: boolean };

  constructor(
    readonly name: string,
    private readonly target: LogSinkTarget,
    spill: SpillFile,
    options: SinkQueueOptions,
    observer: SinkQueueObserver = {},
  ) {
    super(spill, options, observer, { delivered: 0, spilled: 0, replayed: 0, dropped: 0 });
  }

  /** Whether the sink took its last delivery (or opened and has not failed since). */
  get sinkUp(): boolean {
    return this.accepting;
  }

  write(entry: LogEntry, bodies?: LogBodies): void {
    this.memory.push(this.options.bodies && bodies ? { entry, bodies } : { entry });
    if (this.closed || this.memory.length >= this.options.capacity) this.overflow();
    else this.schedule();
  }

  /** Moves the batch in flight (unless already there) and the whole backlog to the spill directory, in order. */
  protected override overflow(): void {
    const backlog = this.memory;
    this.memory = [];
    const inflight = this.inflight && !this.inflight.spilled ? this.inflight.records : [];
    if (this.inflight) this.inflight.spilled = true;
    this.spillSync([...inflight, ...backlog.map((pending) => this.record(pending))]);
  }

  private async markDown(error: unknown): Promise<void> {
    if (this.up && !this.failing) this.observer.down?.(error);
    this.up = false;
    this.failing = true;
    this.opened = false;
    await this.target.reset?.().catch(() => {});
    if (this.closed) clearTimeout(this.retryTimer);
    else this.retryLater();
  }

  private async deliver(records: readonly LogRecord[]): Promise<void> {
    await within(this.target.deliver(asSinkRecords(records)), this.options.timeoutMs, 'delivery');
    if (this.failing) this.observer.up?.();
    this.failing = false;
  }

  protected override async step(): Promise<boolean> {
    if (this.closed) return false;
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
        await this.replaySpill((records) => this.deliver(records));
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

  protected override async closeTarget(): Promise<void> {
    await this.target.close?.().catch(() => {});
  }
}
