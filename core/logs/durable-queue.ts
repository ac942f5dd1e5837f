import type { LogBodies, LogEntry } from './entry.js';
import { type LogRecord, toLogRecord } from './record.js';
import type { SpillFile } from './spill.js';

/** Why entries were lost: the spill file at its cap, failing to write, or holding a line cut by a crash. */
export type DropReason = 'spill_full' | 'spill_unwritable' | 'spill_unreadable';

export interface DurableQueueOptions {
  /** Entries held in memory before they overflow to the spill file (the log store's default: 10 000). */
  capacity: number;
  /** Records per write (the log store's default: 500). */
  batchSize: number;
  /** Cap of each stored body (characters). */
  bodyMaxBytes: number;
  /** Delay between attempts to reach a target that failed (the log store's default: 1000 ms). */
  retryMs: number;
  /** How long a partial batch waits for more entries (default 0: next turn of the event loop). */
  lingerMs?: number;
}

/** What every durable queue reports about its spill file, for metrics and warnings. */
export interface SpillObserver {
  spilled?(count: number): void;
  replayed?(count: number): void;
  dropped?(count: number, reason: DropReason, detail?: string): void;
}

/** The spill file's counts; a queue adds the count of records its target took. */
export interface SpillTotals {
  spilled: number;
  replayed: number;
  dropped: number;
}

export interface Pending {
  entry: LogEntry;
  bodies?: LogBodies;
}

/**
 * The machinery the log store's queue (`LogQueue`) and each external sink's queue (`SinkQueue`)
 * share: a bounded array that `write` pushes to, a writer started at once for a full batch or after
 * `lingerMs`, the spill file with its counts, a retry timer, the replay of the spill, the waiters of
 * `flush` and `close`. A subclass says what one step of the writer does (`step`), how a backlog goes
 * to the spill file (`overflow`) and how its target closes (`closeTarget`).
 */
export abstract class DurableQueue<Totals extends SpillTotals, Observer extends SpillObserver> {
  protected memory: Pending[] = [];
  protected running = false;
  /** Not waiting for the retry of a target that failed. */
  protected up = false;
  /** The target opened (a sink: and has not failed since). */
  protected opened = false;
  /** The last write failed; cleared by the next one that succeeds. */
  protected failing = false;
  protected closed = false;
  protected retryTimer?: NodeJS.Timeout;
  private lingerTimer?: NodeJS.Timeout;
  private idleWaiters: Array<() => void> = [];

  constructor(
    protected readonly spill: SpillFile,
    protected readonly options: DurableQueueOptions,
    protected readonly observer: Observer,
    readonly totals: Totals,
  ) {}

  /** Opens the target and replays what an earlier run spilled. Never throws: a target that fails is retried. */
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

  /** The target opened, is not waiting for its retry, and its last write (if any since) went through. */
  protected get accepting(): boolean {
    return this.up && this.opened && !this.failing;
  }

  protected record(pending: Pending): LogRecord {
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

  private unwritable(count: number, error: unknown): void {
    this.totals.dropped += count;
    this.observer.dropped?.(count, 'spill_unwritable', (error as Error).message);
  }

  /** Appends to the spill file synchronously, so appends keep the order they were made in. */
  protected spillSync(records: readonly LogRecord[]): void {
    if (records.length === 0) return;
    try {
      this.countSpill(this.spill.appendSync(records));
    } catch (error) {
      this.unwritable(records.length, error);
    }
  }

  protected async spillAsync(records: readonly LogRecord[]): Promise<void> {
    try {
      this.countSpill(await this.spill.append(records));
    } catch (error) {
      this.unwritable(records.length, error);
    }
  }

  /**
   * Starts the writer: at once for a full batch (or when asked), otherwise after `lingerMs`, so
   * that light traffic still makes batches rather than one write (and, for the SQLite store, one
   * message to its worker) per request.
   */
  protected schedule(immediate = false): void {
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

  /** Tries the target again after `retryMs`. */
  protected retryLater(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.up = true;
      this.schedule(true);
    }, this.options.retryMs);
    // Only a pending `flush` keeps the process alive for the retry (it waits through the outage).
    if (this.idleWaiters.length === 0 || this.closed) this.retryTimer.unref();
  }

  /** Sends the oldest spilled segment through `send` and counts it; throws (keeping it) when `send` fails. */
  protected async replaySpill(send: (records: LogRecord[]) => Promise<void>): Promise<void> {
    const { replayed, unreadable } = await this.spill.replayOldest(send, this.options.batchSize);
    this.totals.replayed += replayed;
    this.observer.replayed?.(replayed);
    if (unreadable > 0) {
      this.totals.dropped += unreadable;
      this.observer.dropped?.(unreadable, 'spill_unreadable');
    }
  }

  /** One unit of the writer's work; false when there is none left. */
  protected abstract step(): Promise<boolean>;

  /** Moves the backlog in memory (and whatever else must go with it) to the spill file, synchronously. */
  protected abstract overflow(): void;

  /** Closes the target; never throws. */
  protected abstract closeTarget(): Promise<void>;

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

  private isSettled(): boolean {
    return !this.running && this.memory.length === 0 && this.spill.isEmpty && this.up && this.opened;
  }

  private notifyIdle(): void {
    if (!this.isSettled()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves once every entry written so far reached the target (waits through an outage). */
  flush(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      if (!this.closed) this.retryTimer?.ref();
      this.schedule(true);
    });
  }

  /** Gives the writer up to `graceMs` to send what is queued, spills the rest (replayed on the next start), closes the target. */
  async close(graceMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.lingerTimer);
    // A batch in flight gets one more second; if its write then fails, it still goes to the spill file
    // (a sink's batch still in flight after it is spilled by `overflow`, and delivered again next time).
    const deadline = Date.now() + 1000;
    while (this.running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    this.overflow();
    await this.closeTarget();
  }
}
