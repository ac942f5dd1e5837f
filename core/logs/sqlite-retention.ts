import type { DatabaseSync, SQLInputValue } from 'node:sqlite';

// Retention of the SQLite log store (core/logs/sqlite-store.ts): by age, then by size, in steps.

type Row = Record<string, SQLInputValue>;

export interface SqliteRetention {
  /** Rows older than this are deleted (0 = keep forever). */
  maxAgeMs: number;
  /** The database is kept under this size by deleting the oldest rows (0 = no limit). */
  maxBytes: number;
}

/**
 * Log rows retention deletes per transaction (with their bodies, search index entries and metadata:
 * 26 ms of the log writer at the median, measured on 200,000 bench-sized rows), and pages per step
 * of handing free pages back (~20 ms).
 */
const PRUNE_CHUNK_ROWS = 2000;
const VACUUM_STEP_PAGES = 1024;

/** The database a retention pass works on: `db` throws once the store is closed. */
export interface PrunedDatabase {
  readonly db: () => DatabaseSync;
  readonly isOpen: () => boolean;
}

/** The rows of the log. */
export function rowCount(db: DatabaseSync): number {
  return Number((db.prepare('SELECT COUNT(*) AS n FROM logs').get() as Row).n);
}

/** Bytes of the database in use (pages not on the free list). */
export function usedBytes(db: DatabaseSync): number {
  const pages = Number((db.prepare('PRAGMA page_count').get() as Row).page_count);
  const free = Number((db.prepare('PRAGMA freelist_count').get() as Row).freelist_count);
  const size = Number((db.prepare('PRAGMA page_size').get() as Row).page_size);
  return (pages - free) * size;
}

/**
 * Deletes the oldest rows older than `beforeMs`, at most `limit` of them (more only when that many
 * share the oldest millisecond), with their bodies and metadata, in one transaction. `more`: rows
 * older than `beforeMs` are left.
 */
function deleteOldest(db: DatabaseSync, beforeMs: number, limit: number): { deleted: number; more: boolean } {
  db.exec('BEGIN IMMEDIATE');
  try {
    const cutRow = db.prepare('SELECT time_ms FROM logs WHERE time_ms < ? ORDER BY time_ms LIMIT 1 OFFSET ?').get(beforeMs, limit) as Row | undefined;
    let cut = beforeMs;
    if (cutRow) {
      cut = Number(cutRow.time_ms);
      const oldest = Number((db.prepare('SELECT min(time_ms) AS t FROM logs').get() as Row).t);
      if (cut <= oldest) cut = oldest + 1;
    }
    const deleted = Number(db.prepare('DELETE FROM logs WHERE time_ms < ?').run(cut).changes);
    db.prepare('DELETE FROM log_bodies WHERE time_ms < ?').run(cut);
    db.prepare('DELETE FROM log_metadata WHERE time_ms < ?').run(cut);
    db.exec('COMMIT');
    return { deleted, more: cutRow !== undefined };
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * One retention pass over the database `handle` gives (see `SqliteLogStore.prune`): rows older than
 * `maxAgeMs`, then the oldest rows until the data fits in 90% of `maxBytes`, then the freed pages
 * handed back and the WAL truncated, in bounded steps with a turn of the event loop between them;
 * it ends once the database is closed. Returns the rows deleted.
 */
export async function prunePass(handle: PrunedDatabase, retention: SqliteRetention, now: number): Promise<number> {
  let deleted = 0;
  const { maxAgeMs, maxBytes } = retention;
  const inStep = async (): Promise<boolean> => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return handle.isOpen();
  };
  if (maxAgeMs > 0) {
    for (;;) {
      const step = deleteOldest(handle.db(), now - maxAgeMs, PRUNE_CHUNK_ROWS);
      deleted += step.deleted;
      if (!step.more || !(await inStep())) break;
    }
  }
  if (maxBytes > 0 && handle.isOpen() && usedBytes(handle.db()) > maxBytes * 0.9) {
    const chunk = Math.min(PRUNE_CHUNK_ROWS, Math.max(1, Math.ceil(rowCount(handle.db()) / 10)));
    while (usedBytes(handle.db()) > maxBytes * 0.9) {
      const step = deleteOldest(handle.db(), Number.MAX_SAFE_INTEGER, chunk);
      deleted += step.deleted;
      if (step.deleted === 0 || !(await inStep())) break;
    }
  }
  if (deleted > 0 && handle.isOpen()) {
    const freePages = handle.db().prepare('PRAGMA freelist_count');
    let free = Number((freePages.get() as Row).freelist_count);
    while (free > 0) {
      handle.db().exec(`PRAGMA incremental_vacuum(${VACUUM_STEP_PAGES})`);
      const left = Number((freePages.get() as Row).freelist_count);
      // Nothing freed: a file made before auto_vacuum was set keeps its free pages for reuse.
      if (left >= free || !(await inStep())) break;
      free = left;
    }
    if (!handle.isOpen()) return deleted;
    handle.db().exec('PRAGMA wal_checkpoint(TRUNCATE)');
  }
  return deleted;
}
