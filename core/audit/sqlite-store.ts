import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { AuditEvent } from './event.js';
import { type AuditQuery, type AuditRow, type AuditStore, type ChainHead, COLUMNS, eventOf, listWhere, type RemovedSegment, rowOf } from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_events (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, time TEXT NOT NULL, time_ms INTEGER NOT NULL,
  actor TEXT NOT NULL, actor_type TEXT NOT NULL, actor_id TEXT, action TEXT NOT NULL,
  target TEXT, target_type TEXT, target_id TEXT, changes TEXT, outcome TEXT NOT NULL,
  address TEXT, user_agent TEXT, prev_hash TEXT NOT NULL, hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_time ON audit_events (time_ms, seq);
CREATE INDEX IF NOT EXISTS audit_action ON audit_events (action, seq);
CREATE INDEX IF NOT EXISTS audit_actor ON audit_events (actor_id, seq);
CREATE INDEX IF NOT EXISTS audit_target ON audit_events (target_id, seq);
`;

/**
 * The embedded audit store: `<data dir>/audit.db` (owner-only), its own file, which the gateway's
 * processes (GATEWAY_WORKERS) and the command line share. An append is a `BEGIN IMMEDIATE`
 * transaction: SQLite's write lock is the append lock, taken before the head is read, so writers in
 * other processes wait (up to the busy timeout) and the chain stays one.
 */
export class SqliteAuditStore implements AuditStore {
  readonly kind = 'sqlite';
  private database?: DatabaseSync;
  private statements?: { head: StatementSync; insert: StatementSync; range: StatementSync; lastOf: StatementSync };

  constructor(private readonly path: string) {}

  /** Opens the file (once); a failure is thrown to the caller and the next call tries again. */
  private open(): { database: DatabaseSync; statements: NonNullable<SqliteAuditStore['statements']> } {
    if (!this.database) {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      closeSync(openSync(this.path, 'a', 0o600));
      for (const path of [this.path, `${this.path}-wal`, `${this.path}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
      const database = new DatabaseSync(this.path);
      database.exec(`PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; ${SCHEMA}`);
      this.statements = {
        head: database.prepare('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1'),
        insert: database.prepare(`INSERT INTO audit_events (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`),
        range: database.prepare('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?'),
        lastOf: database.prepare('SELECT * FROM audit_events WHERE action = ? ORDER BY seq DESC LIMIT 1'),
      };
      this.database = database;
    }
    return { database: this.database, statements: this.statements! };
  }

  /** Runs `work` in a write transaction (the append lock). */
  private transaction<T>(work: (statements: NonNullable<SqliteAuditStore['statements']>, database: DatabaseSync) => T): T {
    const { database, statements } = this.open();
    database.exec('BEGIN IMMEDIATE');
    try {
      const result = work(statements, database);
      database.exec('COMMIT');
      return result;
    } catch (error) {
      database.exec('ROLLBACK');
      throw error;
    }
  }

  private static head(statements: NonNullable<SqliteAuditStore['statements']>): ChainHead | undefined {
    const row = statements.head.get() as { seq: number; hash: string } | undefined;
    return row ? { seq: Number(row.seq), hash: row.hash } : undefined;
  }

  async append(build: (head: ChainHead | undefined) => AuditEvent): Promise<AuditEvent> {
    return this.transaction((statements) => {
      const event = build(SqliteAuditStore.head(statements));
      statements.insert.run(...(rowOf(event) as SQLInputValue[]));
      return event;
    });
  }

  async list(query: AuditQuery): Promise<AuditEvent[]> {
    const { database } = this.open();
    const { where, values } = listWhere(query, () => '?');
    const rows = database.prepare(`SELECT * FROM audit_events ${where} ORDER BY seq DESC LIMIT ?`).all(...(values as SQLInputValue[]), query.limit);
    return rows.map((row) => eventOf(row as AuditRow));
  }

  async range(afterSeq: number, limit: number): Promise<AuditEvent[]> {
    return this.open().statements.range.all(afterSeq, limit).map((row) => eventOf(row as AuditRow));
  }

  async lastOfAction(action: string): Promise<AuditEvent | undefined> {
    const row = this.open().statements.lastOf.get(action);
    return row ? eventOf(row as AuditRow) : undefined;
  }

  async removeBefore(cutoffMs: number, build: (removed: RemovedSegment, head: ChainHead) => AuditEvent): Promise<AuditEvent | undefined> {
    return this.transaction((statements, database) => {
      const first = database.prepare('SELECT min(seq) AS seq FROM audit_events WHERE time_ms >= ?').get(cutoffMs) as { seq: number | null };
      const head = SqliteAuditStore.head(statements);
      if (!head) return undefined;
      const throughSeq = first.seq === null ? head.seq : Number(first.seq) - 1;
      const last = database.prepare('SELECT hash FROM audit_events WHERE seq = ?').get(throughSeq) as { hash: string } | undefined;
      if (!last) return undefined;
      const count = Number(database.prepare('DELETE FROM audit_events WHERE seq <= ?').run(throughSeq).changes);
      const event = build({ count, throughSeq, anchorHash: last.hash }, head);
      statements.insert.run(...(rowOf(event) as SQLInputValue[]));
      return event;
    });
  }

  async close(): Promise<void> {
    this.database?.close();
    this.database = undefined;
    this.statements = undefined;
  }
}
