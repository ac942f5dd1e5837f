import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';

// The SQLite log store's free-text search over the bodies: its schema, its queries, and the
// indexer that keeps it behind the inserts (core/logs/sqlite-store.ts).

type Row = Record<string, SQLInputValue>;

/**
 * The text of a stored body that the search index holds: the string values of a JSON body (not its
 * keys, numbers or punctuation; escapes decoded, so a word after a `\n` is a word), one per line;
 * a body that is not valid JSON (plain text, or JSON the size cap cut) as it is. A JSON body without
 * strings gives null (nothing to index). SQL, so that the rebuild below runs in any SQLite client.
 */
const searchText = (body: string) =>
  `CASE WHEN json_valid(${body}) THEN (SELECT group_concat(value, char(10)) FROM json_tree(${body}) WHERE type = 'text') ELSE ${body} END`;

/** Version 8: how far the bodies are indexed (one row). */
export const SEARCH_STATE = 'CREATE TABLE IF NOT EXISTS log_search_state (id INTEGER PRIMARY KEY CHECK (id = 1), indexed_to INTEGER NOT NULL); INSERT OR IGNORE INTO log_search_state (id, indexed_to) VALUES (1, 0);';
/** Every stored body is indexed (after a rebuild, or on the way to version 8 from an index that indexed every row as it was inserted). */
export const ALL_INDEXED = 'UPDATE log_search_state SET indexed_to = (SELECT coalesce(max(rowid), 0) FROM log_bodies);';

/**
 * Free-text search over the bodies (when on). `log_search` is a contentless FTS5 table (the text
 * lives once, in `log_bodies`) keyed by `log_bodies`' rowid, holding {@link searchText} of each
 * body. Bodies are indexed in batches of their own, behind the inserts (`SearchIndexer.indexBatch`):
 * FTS5's cost per row falls by more than half from the 20–100-row batches the log writer commits
 * to batches of thousands (it writes its pending terms out as one segment per transaction, and
 * fewer, larger segments need less merging). `log_search_state.indexed_to` is the rowid up to
 * which every stored body is indexed; it is read and moved in the same transactions that index, so
 * several processes on one file (GATEWAY_WORKERS) never index a body twice. A search indexes what
 * is behind first, so a search always sees every stored body. (Schema 7 indexed each row in the
 * insert's transaction; before it, a trigger did, at about three times that cost.)
 * Retention's delete removes them through a trigger (`contentless_delete` makes that a cheap
 * tombstone, with no re-tokenising; a body deleted before it was indexed leaves a harmless one).
 * The index keeps the words' positions: a word the tokenizer splits (`gpt-4o`) is a phrase query,
 * answered from the index alone.
 * Created (and filled from the bodies already stored) when the store opens with search on and the
 * table is missing or older than schema version 7; dropped when it opens with search off.
 * `automerge` stays FTS5's 4: 8 saved ~5 µs per row but left more segments, and a phrase of two
 * common words took ~3 times as long (bench/log-search.ts). `deletemerge` 30 (FTS5's default is 10):
 * a segment is rewritten for its deleted rows once 30% of them are gone rather than 10%; retention
 * deletes the oldest rows, whose segments then go whole: a third of the work per deleted row, the
 * same size of index in a steady state of inserts and deletes. A full `VACUUM` renumbers
 * `log_bodies`' rowids: run {@link REBUILD_SEARCH} after one.
 */
export const SEARCH_SCHEMA = `
CREATE VIRTUAL TABLE log_search USING fts5(request_body, response_body, content='', contentless_delete=1);
INSERT INTO log_search (log_search, rank) VALUES ('deletemerge', 30);
CREATE TRIGGER log_bodies_search_delete AFTER DELETE ON log_bodies BEGIN
  DELETE FROM log_search WHERE rowid = old.rowid;
END;
${SEARCH_STATE}
`;
/** Drops the index; the insert trigger is the one schema versions 5 and 6 indexed with. */
export const DROP_SEARCH = 'DROP TRIGGER IF EXISTS log_bodies_search_insert; DROP TRIGGER IF EXISTS log_bodies_search_delete; DROP TABLE IF EXISTS log_search; DROP TABLE IF EXISTS log_search_state;';

/** Indexes the bodies with rowids in (?1, ?2]. */
const INDEX_BODIES = `INSERT INTO log_search (rowid, request_body, response_body) SELECT rowid, ${searchText('request_body')}, ${searchText('response_body')} FROM log_bodies WHERE rowid > ?1 AND rowid <= ?2`;

/** Re-indexes every stored body (the migration to version 7, and after a full VACUUM: plain SQL, for the `sqlite3` shell too). */
export const REBUILD_SEARCH = `INSERT INTO log_search (log_search) VALUES ('delete-all');
INSERT INTO log_search (rowid, request_body, response_body) SELECT rowid, ${searchText('request_body')}, ${searchText('response_body')} FROM log_bodies;
${ALL_INDEXED}`;

/** An FTS5 query from the search words: each one a quoted string (no operator syntax reaches FTS5; a word the tokenizer splits is a phrase), all of them required. */
const ftsQuery = (terms: string[]) => terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' ');

/**
 * A search's condition, in one of two shapes. A word that few bodies hold: the set of matching ids
 * is made once (`IN`), and the time index walks the rows until a page is full. A common word: that
 * set would be large (a word in most bodies: every body's id), so each row the time index walks is
 * probed instead (`EXISTS`: a seek in the word's posting list by rowid), and a page fills after a few
 * rows. {@link COMMON_MATCHES} decides between them. (`id` is qualified in the probe: inside it, a
 * bare `id` would be the body's own.)
 */
export const searchCondition =
  (common: boolean) =>
  (terms: string[], id: string, param: (value: unknown) => string): string =>
    common
      ? `EXISTS (SELECT 1 FROM log_bodies AS b JOIN log_search ON log_search.rowid = b.rowid WHERE b.id = ${id === 'id' ? 'logs.id' : id} AND log_search MATCH ${param(ftsQuery(terms))})`
      : `${id} IN (SELECT id FROM log_bodies WHERE rowid IN (SELECT rowid FROM log_search WHERE log_search MATCH ${param(ftsQuery(terms))}))`;

/** Bodies indexed per transaction, and how many behind start a batch at once (see {@link SEARCH_SCHEMA}). */
const INDEX_BATCH = 2000;
/** How long fewer bodies than {@link INDEX_BATCH} wait to be indexed (a search indexes them at once). */
const INDEX_DELAY_MS = 1000;
const SQLITE_BUSY = 5;

/** Past this many matching bodies a search probes row by row rather than making the set of matches. */
const COMMON_MATCHES = 2000;

/** Whether a search's words are in more than {@link COMMON_MATCHES} bodies (one bounded scan of the index). */
export function isCommonSearch(db: DatabaseSync, terms: string[]): boolean {
  const counted = db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM log_search WHERE log_search MATCH ? LIMIT ${COMMON_MATCHES + 1})`).get(ftsQuery(terms)) as Row;
  return Number(counted.n) > COMMON_MATCHES;
}

/**
 * Keeps the search index behind the inserts of one open database (see {@link SEARCH_SCHEMA}): the
 * store counts the bodies it stores in `unindexed` and calls {@link SearchIndexer.schedule}.
 */
export class SearchIndexer {
  /** Bodies this process stored since its last indexing batch (another process's are found by the batch itself). */
  unindexed = 0;
  private timer?: NodeJS.Timeout;
  private readonly indexBodies: StatementSync;
  private readonly state: { read: StatementSync; write: StatementSync; behind: StatementSync };

  constructor(
    private readonly db: DatabaseSync,
    private readonly onWarning: (message: string) => void,
  ) {
    this.indexBodies = db.prepare(INDEX_BODIES);
    this.state = {
      read: db.prepare('SELECT indexed_to FROM log_search_state'),
      write: db.prepare('UPDATE log_search_state SET indexed_to = ?'),
      behind: db.prepare('SELECT count(*) AS n, max(rowid) AS top FROM (SELECT rowid FROM log_bodies WHERE rowid > ? ORDER BY rowid LIMIT ?)'),
    };
  }

  /**
   * Indexes, in one transaction, up to `limit` bodies behind `indexed_to` (see {@link SEARCH_SCHEMA});
   * returns how many it indexed.
   */
  private indexBatch(limit: number): number {
    const db = this.db;
    const state = this.state;
    db.exec('BEGIN IMMEDIATE');
    try {
      const from = Number((state.read.get() as Row).indexed_to);
      const behind = state.behind.get(from, limit) as Row;
      const count = Number(behind.n);
      if (count > 0) {
        this.indexBodies.run(from, behind.top);
        state.write.run(behind.top);
      }
      db.exec('COMMIT');
      return count;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Indexes every body that is behind (before a search, and on close). */
  indexAll(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.unindexed = 0;
    while (this.indexBatch(INDEX_BATCH) === INDEX_BATCH) {
      // more behind
    }
  }

  /**
   * Indexes every body that is behind; when another process on the file holds the write lock
   * (busy), leaves them to the next batch. Other failures are thrown.
   */
  indexBehind(): void {
    try {
      this.indexAll();
    } catch (error) {
      if ((error as { errcode?: number }).errcode !== SQLITE_BUSY) throw error;
      this.unindexed = Math.max(this.unindexed, 1);
      this.schedule();
    }
  }

  /**
   * Indexes what is behind once {@link INDEX_BATCH} bodies are (after this turn: the insert's answer
   * goes out first), or after {@link INDEX_DELAY_MS} when fewer are.
   */
  schedule(): void {
    if (this.unindexed === 0) return;
    const full = this.unindexed >= INDEX_BATCH;
    if (this.timer && !full) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.db.isOpen) return;
      try {
        this.indexBehind();
      } catch (error) {
        // Failing: warned, and tried again after the next insert or delay.
        this.unindexed = Math.max(this.unindexed, 1);
        this.onWarning(`log search index: ${(error as Error).message}`);
        this.schedule();
      }
    }, full ? 0 : INDEX_DELAY_MS);
    this.timer.unref();
  }

  /**
   * A body's rowid at or below `indexed_to` is a rowid used again (SQLite gives max(rowid) + 1: the
   * newest bodies were deleted, or a `VACUUM` renumbered them), so it is not indexed yet: every body
   * before it is, and the index starts again from it.
   */
  keepBehind(rowid: number): void {
    const state = this.state;
    if (rowid <= Number((state.read.get() as Row).indexed_to)) state.write.run(rowid - 1);
  }

  /** Indexes what this process left behind (when it can: else the next open does), and stops the timer. */
  close(): void {
    if (this.db.isOpen && this.unindexed > 0) {
      try {
        this.indexAll();
      } catch {
        // busy or failing: the next open indexes what is behind
      }
    }
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
