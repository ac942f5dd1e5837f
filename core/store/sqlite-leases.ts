import type { DatabaseSync } from 'node:sqlite';

/** The reservations' leases of one reserved counter: member `<request id>|<nanos>` → end of its lease. */
interface Leases {
  readonly members: Map<string, number>;
  /** The members written to the file: those that outlive the process (batches'). */
  readonly persisted: Set<string>;
  /** No lease ends before this (a lower bound: the member that set it may have gone since), so an admission scans only when one may have ended. */
  next: number;
}

/** How often lease rows of finished periods are deleted from the file. */
const LEASE_SWEEP_MS = 60_000;

/** A lease member's amount (nano-USD). */
const amountOf = (member: string): number => Number(member.slice(member.lastIndexOf('|') + 1));

/**
 * The embedded store's reservation leases (docs/limits.md#reservations-and-their-lease): in memory,
 * per reserved counter; only the members that outlive the process (batches') are written to the
 * file (table `reservation_leases`), by the store's flush.
 */
export class SqliteLeases {
  private readonly leases = new Map<string, Leases>();
  /** Persisted members changed since the last flush, per reserved counter: the end of the lease, or null once gone from the file. */
  private dirty = new Map<string, Map<string, number | null>>();
  private lastSweep = 0;
  private readonly sql: ReturnType<typeof prepare>;

  /**
   * `loaded(key, held)`: the leases of `key` were read from the file for the first time in this
   * process, and the persisted ones hold `held` nano-USD. `changed`: something is to be flushed.
   */
  constructor(
    database: DatabaseSync,
    private readonly loaded: (key: string, held: number) => void,
    private readonly changed: () => void,
  ) {
    this.sql = prepare(database);
  }

  get pending(): boolean {
    return this.dirty.size > 0;
  }

  /** Adds (or with `until` null removes) a lease member, written to the file when it `persists`; true when it was there or is added. */
  set(key: string, member: string, until: number | null, persists = false): boolean {
    const leases = this.of(key);
    if (until === null) {
      if (!leases.members.delete(member)) return false;
      if (!leases.persisted.delete(member)) return true;
    } else {
      leases.members.set(member, until);
      leases.next = Math.min(leases.next, until);
      if (!persists) return true;
      leases.persisted.add(member);
    }
    let dirty = this.dirty.get(key);
    if (dirty === undefined) this.dirty.set(key, (dirty = new Map()));
    // A member added and gone within one flush interval never reaches the file.
    if (until === null && typeof dirty.get(member) === 'number') dirty.delete(member);
    else dirty.set(member, until);
    this.changed();
    return true;
  }

  /** Removes the members of `key` whose lease ended by `now` (their requests were never settled: a crashed instance); their amounts' sum. */
  expire(key: string, now: number): number {
    const leases = this.of(key);
    if (leases.next > now) return 0;
    let gone = 0;
    let next = Infinity;
    for (const [member, until] of leases.members) {
      if (until > now) {
        next = Math.min(next, until);
        continue;
      }
      this.set(key, member, null);
      gone += amountOf(member);
    }
    leases.next = next;
    return gone;
  }

  /** Writes the persisted members changed since the last flush (inside the store's transaction); `expiresOf`: their counter's end. */
  write(now: number, expiresOf: (key: string) => number | null): void {
    for (const [key, members] of this.dirty) {
      const expires = expiresOf(key);
      for (const [member, until] of members) {
        if (until === null) this.sql.remove.run(key, member);
        else this.sql.save.run(key, member, until, expires);
      }
    }
    if (now - this.lastSweep >= LEASE_SWEEP_MS) {
      this.sql.drop.run(now);
      this.lastSweep = now;
    }
  }

  /** After a successful {@link write}. */
  written(): void {
    this.dirty = new Map();
  }

  /** Drops the leases of a counter that ended (its period is over). */
  forget(key: string): void {
    this.leases.delete(key);
  }

  /** The leases of `key`, read from the file the first time. */
  private of(key: string): Leases {
    let leases = this.leases.get(key);
    if (leases === undefined) {
      const rows = this.sql.leases.all(key) as Array<{ member: string; until: number }>;
      const members = new Map(rows.map((row) => [row.member, Number(row.until)]));
      leases = { members, persisted: new Set(members.keys()), next: rows.reduce((earliest, row) => Math.min(earliest, Number(row.until)), Infinity) };
      this.leases.set(key, leases);
      this.loaded(
        key,
        rows.reduce((sum, row) => sum + amountOf(row.member), 0),
      );
    }
    return leases;
  }
}

function prepare(database: DatabaseSync) {
  database.exec('CREATE TABLE IF NOT EXISTS reservation_leases (key TEXT NOT NULL, member TEXT NOT NULL, until INTEGER NOT NULL, expires INTEGER, PRIMARY KEY (key, member))');
  return {
    leases: database.prepare('SELECT member, until FROM reservation_leases WHERE key = ?'),
    save: database.prepare('INSERT OR REPLACE INTO reservation_leases (key, member, until, expires) VALUES (?, ?, ?, ?)'),
    remove: database.prepare('DELETE FROM reservation_leases WHERE key = ? AND member = ?'),
    drop: database.prepare('DELETE FROM reservation_leases WHERE expires IS NOT NULL AND expires <= ?'),
  };
}
