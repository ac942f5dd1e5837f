import { EventEmitter } from 'node:events';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import Keyv from 'keyv';
import { SqliteKeyvStore } from './sqlite-keyv.js';
import { MemoryQuotaStore } from './quota-state.js';
import type { Admission, AdmissionResult, InvalidationEvent, Settlement, SharedState } from './state.js';

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
    const { now } = admission;
    let reservation = admission.budgetNanos === undefined ? 0 : admission.reservationNanos;
    let minuteCount = 0;
    let window: Window | undefined;
    if (admission.requestsPerMinute !== undefined) {
      window = this.window(admission.minuteWindowKey, now);
      minuteCount = window.times.length - window.head;
      if (minuteCount >= admission.requestsPerMinute) {
        return { admitted: false, reason: 'requests_per_minute', retryAfterMs: window.times[window.head] + MINUTE_MS - now, count: minuteCount };
      }
    }
    const dayCount = this.counter(admission.dayCounterKey, now);
    if (admission.requestsPerDay !== undefined && dayCount >= admission.requestsPerDay) {
      return { admitted: false, reason: 'requests_per_day', retryAfterMs: admission.msUntilDayEnds, count: dayCount };
    }
    if (admission.budgetNanos !== undefined) {
      const spent = this.counter(admission.spentKey, now);
      const reserved = this.counter(admission.reservedKey, now);
      const room = admission.budgetNanos - spent - reserved;
      reservation = admission.reservationIsCeiling ? Math.min(reservation, Math.max(room, 0)) : reservation;
      if (reservation > room || room <= 0) {
        return { admitted: false, reason: 'budget', spentNanos: spent, reservedNanos: reserved };
      }
      this.increment(admission.reservedKey, reservation, admission.periodTtlMs === undefined ? null : now + admission.periodTtlMs);
    }
    if (window !== undefined) {
      window.times.push(now);
      let seconds = this.pendingSeconds.get(admission.minuteWindowKey);
      if (seconds === undefined) this.pendingSeconds.set(admission.minuteWindowKey, (seconds = new Map()));
      const second = Math.floor(now / 1000);
      seconds.set(second, (seconds.get(second) ?? 0) + 1);
      this.scheduleFlush();
    }
    this.increment(admission.dayCounterKey, 1, now + admission.msUntilDayEnds + 86_400_000);
    this.increment(admission.totalCounterKey, 1, null);
    return { admitted: true, minuteCount: minuteCount + 1, dayCount: dayCount + 1, reservedNanos: reservation };
  }

  async settle(settlement: Settlement): Promise<number | undefined> {
    const now = Date.now();
    if (settlement.reservationNanos !== 0) this.increment(settlement.reservedKey, -settlement.reservationNanos, null);
    for (const { key, ttlMs } of settlement.spent) {
      this.increment(key, settlement.actualNanos, ttlMs === undefined ? null : now + ttlMs);
    }
    return settlement.report === undefined ? undefined : this.counter(settlement.report, now);
  }

  async read(counterKeys: readonly string[]): Promise<number[]> {
    const now = Date.now();
    return counterKeys.map((key) => this.counter(key, now));
  }

  async minuteCount(key: string, now: number): Promise<number> {
    const window = this.window(key, now);
    return window.times.length - window.head;
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
    if (this.dirtyCounters.size === 0 && this.pendingSeconds.size === 0) return;
    const now = Date.now();
    const windows = this.pendingSeconds;
    const counters = [...this.dirtyCounters];
    try {
      this.transaction(() => {
        for (const key of counters) {
          const counter = this.counters.get(key);
          if (counter) this.sql.saveCounter.run(key, counter.value, counter.expires);
        }
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
    // Counters past their lifetime are in the file (or never need to be); drop them from memory.
    for (const [key, counter] of this.counters) {
      if (counter.expires !== null && counter.expires <= now) this.counters.delete(key);
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
