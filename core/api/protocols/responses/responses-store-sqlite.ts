import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { ResponseStore, StoredResponse } from './responses-store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS responses (
  owner TEXT NOT NULL, id TEXT NOT NULL, created_ms INTEGER NOT NULL, provider TEXT NOT NULL, previous_id TEXT, body TEXT NOT NULL,
  PRIMARY KEY (owner, id)
);
CREATE INDEX IF NOT EXISTS responses_created ON responses (created_ms);
`;

type Row = { owner: string; id: string; created_ms: number; provider: string; previous_id: string | null; body: string };

/** A stored row as the record (input and response are kept as one JSON body). */
export const recordOf = (row: Row): StoredResponse => {
  const body = JSON.parse(row.body) as Pick<StoredResponse, 'input' | 'response' | 'mask'>;
  return { id: row.id, owner: row.owner, createdMs: Number(row.created_ms), provider: row.provider, previousId: row.previous_id, input: body.input, response: body.response, ...(body.mask ? { mask: body.mask } : {}) };
};

/**
 * Responses state in an embedded SQLite file (`<data dir>/responses.db`, owner-only): its own file
 * rather than the log's, whose writer runs in a worker thread and gives up at once on a locked
 * database. Each call is one small synchronous statement (well under a millisecond).
 */
export class SqliteResponseStore implements ResponseStore {
  readonly kind = 'sqlite';
  private database?: DatabaseSync;
  private statements?: { put: StatementSync; get: StatementSync; delete: StatementSync; prune: StatementSync };

  constructor(
    private readonly path: string,
    private readonly maxAgeMs: number,
  ) {}

  async init(): Promise<void> {
    this.open();
  }

  /** Opens the file (once); a failure is thrown to the caller and the next call tries again. */
  private open(): void {
    if (this.database) return;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    closeSync(openSync(this.path, 'a', 0o600));
    for (const path of [this.path, `${this.path}-wal`, `${this.path}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
    const database = new DatabaseSync(this.path);
    database.exec(`PRAGMA busy_timeout = 1000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; ${SCHEMA}`);
    this.database = database;
    this.statements = {
      put: database.prepare('INSERT OR REPLACE INTO responses (owner, id, created_ms, provider, previous_id, body) VALUES (?, ?, ?, ?, ?, ?)'),
      get: database.prepare('SELECT * FROM responses WHERE owner = ? AND id = ?'),
      delete: database.prepare('DELETE FROM responses WHERE owner = ? AND id = ?'),
      prune: database.prepare('DELETE FROM responses WHERE created_ms < ?'),
    };
  }

  private get sql() {
    this.open();
    return this.statements!;
  }

  async put(record: StoredResponse): Promise<void> {
    this.sql.put.run(record.owner, record.id, record.createdMs, record.provider, record.previousId, JSON.stringify({ input: record.input, response: record.response, ...(record.mask ? { mask: record.mask } : {}) }));
  }

  async get(owner: string, id: string): Promise<StoredResponse | undefined> {
    const row = this.sql.get.get(owner, id) as Row | undefined;
    return row ? recordOf(row) : undefined;
  }

  async delete(owner: string, id: string): Promise<boolean> {
    return Number(this.sql.delete.run(owner, id).changes) > 0;
  }

  async prune(now = Date.now()): Promise<number> {
    if (this.maxAgeMs <= 0) return 0;
    return Number(this.sql.prune.run(now - this.maxAgeMs).changes);
  }

  async close(): Promise<void> {
    this.database?.close();
    this.database = undefined;
    this.statements = undefined;
  }
}
