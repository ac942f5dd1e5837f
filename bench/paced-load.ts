// An open-loop load at a fixed rate with sub-millisecond latencies (autocannon reports whole
// milliseconds). `PacedSchedule` is the accounting alone (no I/O, no timers: unit-tested);
// `PacedLoader` drives it over N keep-alive connections (one undici Client each).
import { Client } from 'undici';
import { percentileOfSorted } from './stats.js';

/** One request of the schedule, as handed to a connection (times in ms on performance.now()'s clock). */
export interface Dispatch {
  /** Position in the schedule (0 = the first request). */
  readonly index: number;
  /** When the schedule wanted it sent: `startAt + index × interval`. */
  readonly dueAt: number;
  /** When it was actually handed to its connection. */
  readonly sentAt: number;
  /** The connection (0 … connections − 1) it went out on. */
  readonly connection: number;
  /** Where its latency is counted from (see `latencyStart`). */
  readonly countFrom: number;
}

/**
 * Where a request's latency is counted from, so that a slow server cannot hide its queueing
 * (coordinated omission) and the load tool's own lateness is not blamed on the server:
 * - its connection was free when it fell due (`connectionFreeAt <= dueAt`): from `sentAt`; any
 *   delay between `dueAt` and `sentAt` is the load tool's timer firing late (reported as send lag);
 * - every connection was busy when it fell due: the time it waited for one (`connectionFreeAt −
 *   dueAt`) is added, so a request queued behind busy connections counts from when it was due.
 * `connectionFreeAt` is when the connection it went out on became free (−Infinity if never used).
 */
export function latencyStart(dueAt: number, connectionFreeAt: number, sentAt: number): number {
  return sentAt - Math.max(0, Math.min(connectionFreeAt, sentAt) - dueAt);
}

/** What a paced load measured. Latencies in ms. */
export interface PacedResult {
  /** Requests the schedule held (rate × duration). */
  scheduled: number;
  completed: number;
  /** Answers outside 200–299, by status. */
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Requests that failed without an answer (connection error, time-out). */
  errors: number;
  /**
   * Requests still queued or in flight when the load was cut off (the server fell behind the rate
   * for longer than the drain allowance). They are in the latency figures with the time they had
   * waited so far, a lower bound.
   */
  unfinished: number;
  firstError?: string;
  /** Completed requests per second, from the first due time to the last completion. */
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** How late the load tool itself sent requests whose connection was free (its timer's lateness). */
  sendLagP99Ms: number;
  /** Most requests ever waiting for a connection at once. */
  maxQueued: number;
  /** The raw latencies and send lags (ms), so that runs can be merged ({@link mergePacedResults}). */
  samples: { latencies: Float64Array; lags: Float64Array; elapsedMs: number };
  /** Per second from the start: answers slower than 20 ms and the slowest (see `PacedSchedule.slow`). */
  slow?: ReadonlyMap<number, { count: number; maxMs: number }>;
}

/** The percentiles of sorted latencies and send lags (ms). */
function latencyFigures(latencies: Float64Array, lags: Float64Array): Pick<PacedResult, 'p50Ms' | 'p90Ms' | 'p99Ms' | 'p999Ms' | 'maxMs' | 'sendLagP99Ms'> {
  return {
    p50Ms: percentileOfSorted(latencies, 0.5),
    p90Ms: percentileOfSorted(latencies, 0.9),
    p99Ms: percentileOfSorted(latencies, 0.99),
    p999Ms: percentileOfSorted(latencies, 0.999),
    maxMs: latencies.length === 0 ? Number.NaN : latencies[latencies.length - 1],
    sendLagP99Ms: percentileOfSorted(lags, 0.99),
  };
}

/** One result from several runs of the same load (interleaved slices): counts add up, percentiles are recomputed over every sample. */
export function mergePacedResults(results: readonly PacedResult[]): PacedResult {
  const concat = (pick: (result: PacedResult) => Float64Array): Float64Array => {
    const all = new Float64Array(results.reduce((sum, result) => sum + pick(result).length, 0));
    let offset = 0;
    for (const result of results) {
      all.set(pick(result), offset);
      offset += pick(result).length;
    }
    return all.sort();
  };
  const latencies = concat((result) => result.samples.latencies);
  const lags = concat((result) => result.samples.lags);
  const sum = (pick: (result: PacedResult) => number): number => results.reduce((total, result) => total + pick(result), 0);
  const statusCodes: Record<string, number> = {};
  for (const result of results) for (const [code, count] of Object.entries(result.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const completed = sum((result) => result.completed);
  const elapsedMs = sum((result) => result.samples.elapsedMs);
  const firstError = results.find((result) => result.firstError !== undefined)?.firstError;
  return {
    scheduled: sum((result) => result.scheduled),
    completed,
    non2xx: sum((result) => result.non2xx),
    statusCodes,
    errors: sum((result) => result.errors),
    unfinished: sum((result) => result.unfinished),
    ...(firstError === undefined ? {} : { firstError }),
    requestsPerSecond: elapsedMs > 0 ? (1000 * completed) / elapsedMs : Number.NaN,
    ...latencyFigures(latencies, lags),
    maxQueued: Math.max(...results.map((result) => result.maxQueued)),
    samples: { latencies, lags, elapsedMs },
  };
}

/**
 * The open-loop schedule: request `i` falls due at `startAt + i × 1000 / ratePerSecond`. A request
 * due while every connection is busy waits in a FIFO queue and goes out on the next connection to
 * free up; its latency then counts from its due time (see `latencyStart`).
 */
/** Latency (ms) above which an answer is listed in {@link PacedSchedule.slow}. */
export const SLOW_MS = 20;

export class PacedSchedule {
  readonly total: number;
  private readonly intervalMs: number;
  private next = 0;
  /** Free connections, the one free longest first, with the time each became free. */
  private readonly free: Array<{ connection: number; freeAt: number }> = [];
  private readonly queue: Array<{ index: number; dueAt: number }> = [];
  private readonly latencies: number[] = [];
  private readonly inFlight = new Set<Dispatch>();
  private unfinished = 0;
  private abandoned = false;
  private readonly lags: number[] = [];
  private maxQueued = 0;
  private finishedCount = 0;
  private lastFinishedAt: number;
  private non2xx = 0;
  private errors = 0;
  private firstError: string | undefined;
  private readonly statusCodes: Record<string, number> = {};
  /** Per second of the run (from its start): answers slower than {@link SLOW_MS} and the slowest. */
  readonly slow = new Map<number, { count: number; maxMs: number }>();

  constructor(private readonly options: { ratePerSecond: number; connections: number; durationSeconds: number; startAt: number }) {
    this.intervalMs = 1000 / options.ratePerSecond;
    this.total = Math.max(1, Math.round(options.ratePerSecond * options.durationSeconds));
    for (let connection = 0; connection < options.connections; connection++) this.free.push({ connection, freeAt: Number.NEGATIVE_INFINITY });
    this.lastFinishedAt = options.startAt;
  }

  dueAt(index: number): number {
    return this.options.startAt + index * this.intervalMs;
  }

  /** When the next request not yet taken falls due; undefined once every request has been taken. */
  nextDueAt(): number | undefined {
    return this.next < this.total ? this.dueAt(this.next) : undefined;
  }

  /** True once every scheduled request has finished (answered or failed), or the rest were abandoned. */
  done(): boolean {
    return this.abandoned || this.finishedCount === this.total;
  }

  /**
   * Gives up at `now` on every request not finished: queued, in flight, or not yet due. Those taken
   * enter the latency figures with the time they have waited so far; later answers are ignored.
   */
  abandon(now: number): void {
    if (this.abandoned) return;
    for (const request of this.queue) this.latencies.push(now - request.dueAt);
    for (const dispatch of this.inFlight) this.latencies.push(now - dispatch.countFrom);
    this.unfinished = this.queue.length + this.inFlight.size;
    this.queue.length = 0;
    this.inFlight.clear();
    this.next = this.total;
    this.abandoned = true;
  }

  /** Takes every request due by `now`: those that can go out now are returned, the rest queue. */
  take(now: number): Dispatch[] {
    const dispatches: Dispatch[] = [];
    while (this.next < this.total && this.dueAt(this.next) <= now) {
      const request = { index: this.next, dueAt: this.dueAt(this.next) };
      this.next++;
      const connection = this.free.shift();
      if (connection) dispatches.push(this.dispatch(request, connection, now));
      else this.queue.push(request);
    }
    this.maxQueued = Math.max(this.maxQueued, this.queue.length);
    return dispatches;
  }

  /**
   * Records the end of `dispatch` at `now` (`status` of the answer, or an error) and frees its
   * connection; returns the queued request that goes out on it right away, if any.
   */
  finish(dispatch: Dispatch, now: number, outcome: { status: number } | { error: string }): Dispatch | undefined {
    if (this.abandoned) return undefined;
    this.inFlight.delete(dispatch);
    this.finishedCount++;
    this.lastFinishedAt = Math.max(this.lastFinishedAt, now);
    if ('error' in outcome) {
      this.errors++;
      this.firstError ??= outcome.error;
    } else {
      this.statusCodes[outcome.status] = (this.statusCodes[outcome.status] ?? 0) + 1;
      if (outcome.status < 200 || outcome.status > 299) this.non2xx++;
      this.latencies.push(now - dispatch.countFrom);
      const latency = now - dispatch.countFrom;
      if (latency > SLOW_MS) {
        const second = Math.floor((now - this.options.startAt) / 1000);
        const bin = this.slow.get(second) ?? { count: 0, maxMs: 0 };
        this.slow.set(second, { count: bin.count + 1, maxMs: Math.max(bin.maxMs, latency) });
      }
    }
    const connection = { connection: dispatch.connection, freeAt: now };
    const waiting = this.queue.shift();
    if (waiting) return this.dispatch(waiting, connection, now);
    this.free.push(connection);
    return undefined;
  }

  private dispatch(request: { index: number; dueAt: number }, connection: { connection: number; freeAt: number }, now: number): Dispatch {
    const countFrom = latencyStart(request.dueAt, connection.freeAt, now);
    this.lags.push(now - Math.max(request.dueAt, connection.freeAt));
    const dispatch = { index: request.index, dueAt: request.dueAt, sentAt: now, connection: connection.connection, countFrom };
    this.inFlight.add(dispatch);
    return dispatch;
  }

  result(): PacedResult {
    const sorted = Float64Array.from(this.latencies).sort();
    const lags = Float64Array.from(this.lags).sort();
    const completed = this.latencies.length - this.unfinished;
    const elapsedMs = this.lastFinishedAt - this.options.startAt;
    return {
      scheduled: this.total,
      completed,
      non2xx: this.non2xx,
      statusCodes: { ...this.statusCodes },
      errors: this.errors,
      unfinished: this.unfinished,
      ...(this.firstError === undefined ? {} : { firstError: this.firstError }),
      requestsPerSecond: elapsedMs > 0 ? (1000 * completed) / elapsedMs : Number.NaN,
      ...latencyFigures(sorted, lags),
      maxQueued: this.maxQueued,
      samples: { latencies: sorted, lags, elapsedMs },
      slow: this.slow,
    };
  }
}

/** How long a run waits after its last request fell due before giving up on the rest. */
const DRAIN_MS = 15_000;

/** The request a paced load sends, again and again. */
export interface PacedRequest {
  /** Origin, e.g. `http://127.0.0.1:8787`. */
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * N keep-alive connections (one undici Client each, so that "a free connection" is exact) sending
 * `request` on a `PacedSchedule`. Reuse one loader for warm-up and measurement so that the
 * measured run starts on open connections.
 */
export class PacedLoader {
  private clients: Client[];
  /** A run was cut off: its connections may still carry requests nobody waits for. */
  private stale = false;

  constructor(
    private readonly request: PacedRequest,
    private readonly connections: number,
    private readonly timeoutMs = 10_000,
  ) {
    this.clients = this.connect();
  }

  private connect(): Client[] {
    const options = { pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs };
    return Array.from({ length: this.connections }, () => new Client(this.request.origin, options));
  }

  /**
   * Runs `ratePerSecond` for `durationSeconds` and resolves when every request has finished, or
   * `drainMs` after the last one fell due, whichever comes first (see `PacedResult.unfinished`).
   */
  async run(ratePerSecond: number, durationSeconds: number, drainMs = DRAIN_MS): Promise<PacedResult> {
    if (this.stale) {
      // The last run was cut off: start from free connections.
      await Promise.all(this.clients.map((client) => client.destroy()));
      this.clients = this.connect();
      this.stale = false;
    }
    const schedule = new PacedSchedule({ ratePerSecond, connections: this.clients.length, durationSeconds, startAt: performance.now() });
    const headers = { ...this.request.headers, 'content-length': String(Buffer.byteLength(this.request.body)) };
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const cutOff = setTimeout(() => {
        schedule.abandon(performance.now());
        this.stale = true;
        settleIfDone();
      }, durationSeconds * 1000 + drainMs);
      const settleIfDone = (): void => {
        if (schedule.done()) {
          clearTimeout(timer);
          clearTimeout(cutOff);
          resolve(schedule.result());
        }
      };
      const send = (dispatch: Dispatch): void => {
        this.clients[dispatch.connection]
          .request({ path: this.request.path, method: 'POST', headers, body: this.request.body })
          .then(async (answer) => {
            await answer.body.arrayBuffer();
            return { status: answer.statusCode };
          })
          .catch((error: unknown) => ({ error: String((error as Error)?.message ?? error) }))
          .then((outcome) => {
            const next = schedule.finish(dispatch, performance.now(), outcome);
            if (next) send(next);
            settleIfDone();
          });
      };
      const tick = (): void => {
        for (const dispatch of schedule.take(performance.now())) send(dispatch);
        const nextDue = schedule.nextDueAt();
        // Node timers have 1 ms granularity: a request may go out up to ~1 ms late, which
        // `latencyStart` keeps out of its latency and `sendLagP99Ms` reports.
        if (nextDue !== undefined) timer = setTimeout(tick, Math.max(0, nextDue - performance.now()));
      };
      tick();
    });
  }

  /** Closes the connections (at once when a run was cut off with requests still in flight). */
  async close(): Promise<void> {
    await Promise.all(this.clients.map((client) => (this.stale ? client.destroy() : client.close())));
  }
}
