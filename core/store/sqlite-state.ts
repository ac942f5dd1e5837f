import { EventEmitter } from 'node:events';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import Keyv from 'keyv';
import { SqliteKeyvStore } from './sqlite-keyv.js';
import { SqliteLeases } from './sqlite-leases.js';
import { MemoryQuotaStore } from './quota-state.js';
import { type Admission, type AdmissionResult, CONCURRENCY_LEASE_MS, type InvalidationEvent, RESERVATION_LEASE_MS, type LevelCounts, type RefusalReason, type Settlement, type SharedState } from './state.js';

/** How often limit counters and window entries changed in memory are written to the file. */
export const COUNTER_FLUSH_MS = 100;

const MINUTE_MS = 60_000;

interface Counter {
  value: number;
  expires: number | null;
}

/** The admission times of one per-minute window, oldest first (`times[head]`). */
interface Window {
  times: number[];
  head: number;
}

/** The tokens of one per-minute token window, oldest first (`entries[head]`), their sum, and each request's entry (for its settlement). */
interface TokenWindow {
  entries: TokenEntry[];
  head: number;
  sum: number;
  byRequest: Map<string, TokenEntry>;
}

interface TokenEntry {
  readonly at: number;
  readonly request: string;
  tokens: number;
}

function refused(level: number, reason: RefusalReason, retryAfterMs: number, count: number): AdmissionResult {
  return { admitted: false, level, reason, retryAfterMs, count, spentNanos: 0, reservedNanos: 0 };
}

/** Ms until enough of the window's tokens leave it for `tokens` more to fit (a minute when they never fit). */
function tokensWait(window: TokenWindow, tokens: number, limit: number, now: number): number {
  if (tokens > limit) return MINUTE_MS;
  let freed = 0;
  for (let index = window.head; index < window.entries.length; index++) {
    const entry = window.entries[index]!;
    freed += entry.tokens;
    if (window.sum - freed + tokens <= limit) return entry.at + MINUTE_MS - now;
  }
  return MINUTE_MS;
}

/**
 * The embedded store: one SQLite file (`<dataDir>/gateway.sqlite`) for records and counters, for one
 * gateway process per file (invalidation events stay within this process).
 *
 * Limit counters and per-minute windows are checked and counted in memory, which is the authority
 * while the process runs (a check is a few map reads, ~1 µs; in SQLite it measured 70-95 µs, and a
 * per-minute window of N entries made it O(N)). Changes are written to the file in one transaction
 * every {@link COUNTER_FLUSH_MS} ms and on close (windows as per-second counts), and read back lazily
 * after a restart: a crash loses at most the last {@link COUNTER_FLUSH_MS} ms of counting.
 */
export class SqliteState implements SharedState {
  readonly kind = 'embedded' as const;
  readonly records: Keyv;
  /** Quota windows live in memory only: a restart forgets at most a minute of them. */
  readonly quota = new MemoryQuotaStore();
  private readonly database: DatabaseSync;
  private readonly bus = new EventEmitter();
  private readonly sql: ReturnType<typeof prepare>;
  private readonly counters = new Map<string, Counter>();
  private readonly windows = new Map<string, Window>();
  private readonly tokenWindows = new Map<string, TokenWindow>();
  private readonly concurrent = new Map<string, Map<string, number>>();
  /** Per reserved counter, its reservations' leases. */
  private readonly leases: SqliteLeases;
  /** Counter keys changed since the last flush. */
  private readonly dirtyCounters = new Set<string>();
  /**
   * Window entries added since the last flush, counted per key and second: the file keeps windows
   * as per-second counts, so a flush writes a row per key and second, not one per request.
   */
  private pendingSeconds = new Map<string, Map<number, number>>();
  private flushTimer?: NodeJS.Timeout;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, 'gateway.sqlite');
    this.database = new DatabaseSync(file);
    chmodSync(file, 0o600); // hashes and sealed secrets: readable by the gateway's user only
    this.database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    this.records = new Keyv({ store: new SqliteKeyvStore(this.database), useKeyPrefix: false });
    this.sql = prepare(this.database);
    this.leases = new SqliteLeases(this.database, (key, held) => this.leasesLoaded(key, held), () => this.scheduleFlush());
    this.bus.setMaxListeners(0);
  }

  async claim(name: string, owner: string): Promise<boolean> {
    this.sql.claim.run(name, owner);
    return (this.sql.claimOwner.get(name) as { owner: string }).owner === owner;
  }

  async release(name: string, owner: string): Promise<void> {
    this.sql.release.run(name, owner);
  }

  async addToSet(set: string, member: string): Promise<void> {
    this.sql.addMember.run(set, member);
  }

  async removeFromSet(set: string, member: string): Promise<void> {
    this.sql.removeMember.run(set, member);
  }

  async members(set: string): Promise<string[]> {
    return (this.sql.members.all(set) as Array<{ member: string }>).map((row) => row.member);
  }

  async admit(admission: Admission): Promise<AdmissionResult> {
    const { now, levels, tokens } = admission;
    let reservation = admission.reservationNanos;
    // First every check, then (all admitted) every count: synchronous, so nothing runs in between.
    for (let index = 0; index < levels.length; index++) {
      const level = levels[index]!;
      if (level.requestsPerMinute !== undefined) {
        const window = this.window(level.minuteWindowKey, now);
        const count = window.times.length - window.head;
        if (count >= level.requestsPerMinute) return refused(index, 'requests_per_minute', window.times[window.head]! + MINUTE_MS - now, count);
      }
      if (level.requestsPerDay !== undefined && level.dayCounterKey !== undefined) {
        const count = this.counter(level.dayCounterKey, now);
        if (count >= level.requestsPerDay) return refused(index, 'requests_per_day', admission.msUntilDayEnds, count);
      }
      if (level.tokensPerMinute !== undefined) {
        const window = this.tokenWindow(level.tokensWindowKey, now);
        if (window.sum + tokens > level.tokensPerMinute) return refused(index, 'tokens_per_minute', tokensWait(window, tokens, level.tokensPerMinute, now), window.sum);
      }
      if (level.maxConcurrent !== undefined) {
        const flying = this.inFlight(level.concurrentKey, now);
        if (flying.size >= level.maxConcurrent) return refused(index, 'max_concurrent', 1000, flying.size);
      }
      if (level.budgetNanos !== undefined) {
        const gone = this.leases.expire(level.reservedKey, now);
        if (gone > 0) this.decrement(level.reservedKey, gone, now);
        const spent = this.counter(level.spentKey, now);
        const reserved = this.counter(level.reservedKey, now);
        const room = level.budgetNanos - spent - reserved;
        if (admission.reservationIsCeiling) reservation = Math.min(reservation, Math.max(room, 0));
        if (reservation > room || room <= 0) return { admitted: false, level: index, reason: 'budget', retryAfterMs: 0, count: 0, spentNanos: spent, reservedNanos: reserved };
      }
    }
    const counts: LevelCounts[] = [];
    const leaseMember = `${admission.requestId}|${reservation}`;
    const leaseEnd = now + (admission.reservationLeaseMs ?? RESERVATION_LEASE_MS);
    for (const level of levels) {
      let minuteCount = 0;
      let minuteResetMs = 0;
      if (level.requestsPerMinute !== undefined) {
        const window = this.window(level.minuteWindowKey, now);
        window.times.push(now);
        minuteCount = window.times.length - window.head;
        minuteResetMs = window.times[window.head]! + MINUTE_MS - now;
        let seconds = this.pendingSeconds.get(level.minuteWindowKey);
        if (seconds === undefined) this.pendingSeconds.set(level.minuteWindowKey, (seconds = new Map()));
        const second = Math.floor(now / 1000);
        seconds.set(second, (seconds.get(second) ?? 0) + 1);
        this.scheduleFlush();
      }
      if (level.dayCounterKey !== undefined) this.increment(level.dayCounterKey, 1, now + admission.msUntilDayEnds + 86_400_000);
      if (level.totalCounterKey !== undefined) this.increment(level.totalCounterKey, 1, null);
      let tokensInWindow = 0;
      let tokensResetMs = 0;
      if (level.tokensPerMinute !== undefined) {
        const window = this.tokenWindow(level.tokensWindowKey, now);
        const entry = { at: now, request: admission.requestId, tokens };
        window.entries.push(entry);
        window.byRequest.set(admission.requestId, entry);
        window.sum += tokens;
        tokensInWindow = window.sum;
        tokensResetMs = window.entries[window.head]!.at + MINUTE_MS - now;
      }
      if (level.maxConcurrent !== undefined) this.inFlight(level.concurrentKey, now).set(admission.requestId, now + (admission.leaseMs ?? CONCURRENCY_LEASE_MS));
      if (level.budgetNanos !== undefined && reservation > 0) {
        this.increment(level.reservedKey, reservation, level.periodTtlMs === undefined ? null : now + level.periodTtlMs);
        this.leases.set(level.reservedKey, leaseMember, leaseEnd, admission.reservationPersists === true);
      }
      counts.push({ minuteCount, minuteResetMs, tokensInWindow, tokensResetMs });
    }
    return { admitted: true, reservedNanos: reservation, levels: counts };
  }

  async settle(settlement: Settlement): Promise<number[] | undefined> {
    const now = Date.now();
    for (const level of settlement.levels) {
      const { reservedKey } = level;
      // Released once: only while its lease holds it (a reclaimed one was released by an admission).
      if (reservedKey !== undefined && settlement.reservationNanos !== 0 && (settlement.unleased || this.leases.set(reservedKey, `${settlement.requestId}|${settlement.reservationNanos}`, null))) {
        this.decrement(reservedKey, settlement.reservationNanos, now);
      }
      for (const { key, ttlMs } of level.spent) this.increment(key, settlement.actualNanos, ttlMs === undefined ? null : now + ttlMs);
      if (level.tokensWindowKey !== undefined && settlement.actualTokens !== undefined) {
        const window = this.tokenWindows.has(level.tokensWindowKey) ? this.tokenWindow(level.tokensWindowKey, now) : undefined;
        const entry = window?.byRequest.get(settlement.requestId);
        // Still in the window: the actual tokens replace the estimate (a request that used fewer gives them back).
        if (window && entry) {
          window.sum += settlement.actualTokens - entry.tokens;
          entry.tokens = settlement.actualTokens;
        }
      }
      if (level.concurrentKey !== undefined) this.concurrent.get(level.concurrentKey)?.delete(settlement.requestId);
    }
    return settlement.report === undefined || settlement.report.length === 0 ? undefined : settlement.report.map((key) => this.counter(key, now));
  }

  async read(counterKeys: readonly string[]): Promise<number[]> {
    const now = Date.now();
    return counterKeys.map((key) => this.counter(key, now));
  }

  async minuteCount(key: string, now: number): Promise<number> {
    const window = this.window(key, now);
    return window.times.length - window.head;
  }

  async windowUsage(tokensKey: string, concurrentKey: string, now: number): Promise<{ tokens: number; inFlight: number }> {
    return {
      tokens: this.tokenWindows.has(tokensKey) ? this.tokenWindow(tokensKey, now).sum : 0,
      inFlight: this.concurrent.has(concurrentKey) ? this.inFlight(concurrentKey, now).size : 0,
    };
  }

  async publish(event: InvalidationEvent): Promise<void> {
    this.bus.emit('event', event);
  }

  subscribe(handler: (event: InvalidationEvent) => void): void {
    this.bus.on('event', handler);
  }

  async close(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flush();
    this.database.close();
  }

  /** Writes what changed in memory since the last flush to the file, in one transaction. */
  flush(): void {
    this.flushTimer = undefined;
    if (this.dirtyCounters.size === 0 && this.pendingSeconds.size === 0 && !this.leases.pending) return;
    const now = Date.now();
    const windows = this.pendingSeconds;
    const counters = [...this.dirtyCounters];
    try {
      this.transaction(() => {
        for (const key of counters) {
          const counter = this.counters.get(key);
          if (counter) this.sql.saveCounter.run(key, counter.value, counter.expires);
        }
        // A lease row lives as long as its counter (a finished period's go with it).
        this.leases.write(now, (key) => this.counters.get(key)?.expires ?? null);
        for (const [key, seconds] of windows) {
          for (const [second, count] of seconds) this.sql.addToWindow.run(key, second, count);
          this.sql.trimWindow.run(key, Math.floor((now - MINUTE_MS) / 1000));
        }
      });
    } catch {
      // The file is not writable right now (disk full, locked): memory stays right; retry later.
      this.scheduleFlush();
      return;
    }
    this.pendingSeconds = new Map();
    this.dirtyCounters.clear();
    this.leases.written();
    // Counters past their lifetime are in the file (or never need to be); drop them from memory.
    for (const [key, counter] of this.counters) {
      if (counter.expires !== null && counter.expires <= now) {
        this.counters.delete(key);
        this.leases.forget(key);
      }
    }
  }

  private scheduleFlush(): void {
    if (this.flushTimer !== undefined) return;
    this.flushTimer = setTimeout(() => this.flush(), COUNTER_FLUSH_MS);
    this.flushTimer.unref();
  }

  /** The counter in memory, read from the file the first time it is used. */
  private stored(key: string): Counter {
    let counter = this.counters.get(key);
    if (counter === undefined) {
      const row = this.sql.counter.get(key) as { value: number; expires: number | null } | undefined;
      counter = row === undefined ? { value: 0, expires: null } : { value: Number(row.value), expires: row.expires === null ? null : Number(row.expires) };
      this.counters.set(key, counter);
    }
    return counter;
  }

  private counter(key: string, now: number): number {
    const counter = this.stored(key);
    return counter.expires !== null && counter.expires <= now ? 0 : counter.value;
  }

  /** Adds `delta`; an expired counter restarts from 0. `expires` null keeps the current expiry. */
  private increment(key: string, delta: number, expires: number | null): void {
    const counter = this.stored(key);
    if (counter.expires !== null && counter.expires <= Date.now()) {
      counter.value = delta;
      counter.expires = expires;
    } else {
      counter.value += delta;
      counter.expires = expires ?? counter.expires;
    }
    this.dirtyCounters.add(key);
    this.scheduleFlush();
  }

  /** Subtracts up to `amount` from the counter `key` (never below 0; an expired or empty one is left alone). */
  private decrement(key: string, amount: number, now: number): void {
    const release = Math.min(amount, this.counter(key, now));
    if (release > 0) this.increment(key, -release, null);
  }

  /**
   * The leases of the reserved counter `key` were read from the file for the first time in this
   * process (always before the counter changes here: admissions and settlements read them first).
   * The counter is set to what the persisted ones (batches') hold: the other reservations it counted
   * belonged to requests in flight in a process that has ended (a crash, a restart), which no one
   * will settle.
   */
  private leasesLoaded(key: string, held: number): void {
    const counter = this.stored(key);
    if (counter.value === held || (counter.expires !== null && counter.expires <= Date.now())) return;
    counter.value = held;
    this.dirtyCounters.add(key);
    this.scheduleFlush();
  }

  /**
   * The token window of `key` with entries older than a minute dropped. Token windows and requests
   * in flight live in memory only: a restart forgets them (docs/limits.md).
   */
  private tokenWindow(key: string, now: number): TokenWindow {
    let window = this.tokenWindows.get(key);
    if (window === undefined) this.tokenWindows.set(key, (window = { entries: [], head: 0, sum: 0, byRequest: new Map() }));
    const { entries } = window;
    while (window.head < entries.length && entries[window.head]!.at <= now - MINUTE_MS) {
      const gone = entries[window.head]!;
      window.sum -= gone.tokens;
      window.byRequest.delete(gone.request);
      window.head++;
    }
    if (window.head > 64 && window.head * 2 >= entries.length) {
      entries.splice(0, window.head);
      window.head = 0;
    }
    return window;
  }

  /** The requests in flight of `key` (id → end of its lease), expired leases dropped. */
  private inFlight(key: string, now: number): Map<string, number> {
    let flying = this.concurrent.get(key);
    if (flying === undefined) this.concurrent.set(key, (flying = new Map()));
    for (const [request, until] of flying) if (until <= now) flying.delete(request);
    return flying;
  }

  /** The per-minute window of `key` with entries older than a minute dropped, read from the file the first time. */
  private window(key: string, now: number): Window {
    let window = this.windows.get(key);
    if (window === undefined) {
      // Entries read back from the file count as made at the end of their second (never earlier).
      const rows = this.sql.windowSeconds.all(key, Math.floor((now - MINUTE_MS) / 1000)) as Array<{ second: number; count: number }>;
      window = { times: rows.flatMap((row) => new Array<number>(Number(row.count)).fill(Number(row.second) * 1000 + 999)), head: 0 };
      this.windows.set(key, window);
    }
    const { times } = window;
    while (window.head < times.length && times[window.head] <= now - MINUTE_MS) window.head++;
    // Drop the consumed prefix once it is at least half the array (amortised O(1) per entry).
    if (window.head > 64 && window.head * 2 >= times.length) {
      times.splice(0, window.head);
      window.head = 0;
    }
    return window;
  }

  private transaction<T>(work: () => T): T {
    this.database.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.database.exec('COMMIT');
      return result;
    } catch (error) {
      this.database.exec('ROLLBACK');
      throw error;
    }
  }
}

function prepare(database: DatabaseSync) {
  database.exec(`
    CREATE TABLE IF NOT EXISTS claims (name TEXT PRIMARY KEY, owner TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS sets (name TEXT NOT NULL, member TEXT NOT NULL, PRIMARY KEY (name, member));
    CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL, expires INTEGER);
    DROP TABLE IF EXISTS windows;
    CREATE TABLE IF NOT EXISTS window_seconds (key TEXT NOT NULL, second INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, second));
  `);
  return {
    claim: database.prepare('INSERT INTO claims (name, owner) VALUES (?, ?) ON CONFLICT(name) DO NOTHING'),
    claimOwner: database.prepare('SELECT owner FROM claims WHERE name = ?'),
    release: database.prepare('DELETE FROM claims WHERE name = ? AND owner = ?'),
    addMember: database.prepare('INSERT INTO sets (name, member) VALUES (?, ?) ON CONFLICT DO NOTHING'),
    removeMember: database.prepare('DELETE FROM sets WHERE name = ? AND member = ?'),
    members: database.prepare('SELECT member FROM sets WHERE name = ? ORDER BY member'),
    counter: database.prepare('SELECT value, expires FROM counters WHERE key = ?'),
    saveCounter: database.prepare('INSERT OR REPLACE INTO counters (key, value, expires) VALUES (?, ?, ?)'),
    trimWindow: database.prepare('DELETE FROM window_seconds WHERE key = ? AND second < ?'),
    windowSeconds: database.prepare('SELECT second, count FROM window_seconds WHERE key = ? AND second >= ? ORDER BY second'),
    addToWindow: database.prepare('INSERT INTO window_seconds (key, second, count) VALUES (?, ?, ?) ON CONFLICT (key, second) DO UPDATE SET count = count + excluded.count'),
  };
}
