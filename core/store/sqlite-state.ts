import { EventEmitter } from 'node:events';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import Keyv from 'keyv';
import { SqliteKeyvStore } from './sqlite-keyv.js';
import type { Admission, AdmissionResult, InvalidationEvent, Settlement, SharedState } from './state.js';

/**
 * The embedded store: one SQLite file (`<dataDir>/gateway.sqlite`) for records and counters. Every
 * limit check runs in one `BEGIN IMMEDIATE` transaction, so it is atomic even if another process
 * opened the same file; invalidation events stay within this process (one instance per file).
 */
export class SqliteState implements SharedState {
  readonly kind = 'embedded' as const;
  readonly records: Keyv;
  private readonly database: DatabaseSync;
  private readonly bus = new EventEmitter();
  private readonly sql: ReturnType<typeof prepare>;

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
    return this.transaction(() => this.admitNow(admission));
  }

  private admitNow(admission: Admission): AdmissionResult {
    const { now } = admission;
    let reservation = admission.budgetNanos === undefined ? 0 : admission.reservationNanos;
    let minuteCount = 0;
    if (admission.requestsPerMinute !== undefined) {
      this.sql.trimWindow.run(admission.minuteWindowKey, now - 60_000);
      const row = this.sql.window.get(admission.minuteWindowKey) as { count: number; oldest: number | null };
      minuteCount = Number(row.count);
      if (minuteCount >= admission.requestsPerMinute) {
        return { admitted: false, reason: 'requests_per_minute', retryAfterMs: Number(row.oldest ?? now) + 60_000 - now, count: minuteCount };
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
    if (admission.requestsPerMinute !== undefined) this.sql.addToWindow.run(admission.minuteWindowKey, admission.requestId, now);
    this.increment(admission.dayCounterKey, 1, now + admission.msUntilDayEnds + 86_400_000);
    this.increment(admission.totalCounterKey, 1, null);
    return { admitted: true, minuteCount: minuteCount + 1, dayCount: dayCount + 1, reservedNanos: reservation };
  }

  async settle(settlement: Settlement): Promise<void> {
    this.transaction(() => {
      const now = Date.now();
      if (settlement.reservationNanos !== 0) this.increment(settlement.reservedKey, -settlement.reservationNanos, null);
      for (const { key, ttlMs } of settlement.spent) {
        this.increment(key, settlement.actualNanos, ttlMs === undefined ? null : now + ttlMs);
      }
    });
  }

  async read(counterKeys: readonly string[]): Promise<number[]> {
    const now = Date.now();
    return counterKeys.map((key) => this.counter(key, now));
  }

  async publish(event: InvalidationEvent): Promise<void> {
    this.bus.emit('event', event);
  }

  subscribe(handler: (event: InvalidationEvent) => void): void {
    this.bus.on('event', handler);
  }

  async close(): Promise<void> {
    this.database.close();
  }

  private counter(key: string, now: number): number {
    const row = this.sql.counter.get(key) as { value: number; expires: number | null } | undefined;
    if (row === undefined || (row.expires !== null && row.expires <= now)) return 0;
    return Number(row.value);
  }

  /** Adds `delta`; an expired counter restarts from 0. `expires` null keeps the current expiry. */
  private increment(key: string, delta: number, expires: number | null): void {
    this.sql.increment.run({ key, delta, expires, now: Date.now() });
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
    CREATE TABLE IF NOT EXISTS windows (key TEXT NOT NULL, member TEXT NOT NULL, at INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS windows_by_key ON windows (key, at);
  `);
  return {
    claim: database.prepare('INSERT INTO claims (name, owner) VALUES (?, ?) ON CONFLICT(name) DO NOTHING'),
    claimOwner: database.prepare('SELECT owner FROM claims WHERE name = ?'),
    release: database.prepare('DELETE FROM claims WHERE name = ? AND owner = ?'),
    addMember: database.prepare('INSERT INTO sets (name, member) VALUES (?, ?) ON CONFLICT DO NOTHING'),
    removeMember: database.prepare('DELETE FROM sets WHERE name = ? AND member = ?'),
    members: database.prepare('SELECT member FROM sets WHERE name = ? ORDER BY member'),
    counter: database.prepare('SELECT value, expires FROM counters WHERE key = ?'),
    increment: database.prepare(`
      INSERT INTO counters (key, value, expires) VALUES (:key, :delta, :expires)
      ON CONFLICT(key) DO UPDATE SET
        value = CASE WHEN counters.expires IS NOT NULL AND counters.expires <= :now THEN :delta ELSE counters.value + :delta END,
        expires = CASE WHEN counters.expires IS NOT NULL AND counters.expires <= :now THEN :expires ELSE COALESCE(:expires, counters.expires) END`),
    trimWindow: database.prepare('DELETE FROM windows WHERE key = ? AND at <= ?'),
    window: database.prepare('SELECT COUNT(*) AS count, MIN(at) AS oldest FROM windows WHERE key = ?'),
    addToWindow: database.prepare('INSERT INTO windows (key, member, at) VALUES (?, ?, ?)'),
  };
}
