import type pg from 'pg';
import { inSchemaTransaction, loadPg } from '../logs/postgres-store.js';
import type { AuditEvent } from './event.js';
import { type AuditQuery, type AuditRow, type AuditStore, type ChainHead, COLUMNS, eventOf, listWhere, type RemovedSegment, rowOf } from './store.js';

/**
 * The shared audit store: the table `audit_events` in the log store's PostgreSQL database and
 * schema (`DATABASE_URL`, `logs.postgresSchema`), which every instance appends to. An append is one
 * transaction holding an advisory lock (`pg_advisory_xact_lock`) taken before the head is read, so
 * instances appending at once keep one chain. JSON members are `text`, not `jsonb`: the stored bytes
 * are the canonical ones the hash covered. A database that is down does not stop the gateway from
 * starting: the table is made by the first call that finds it up.
 */
export class PostgresAuditStore implements AuditStore {
  readonly kind = 'postgres';
  private readonly pool: pg.Pool;
  private ready?: Promise<void>;
  private readonly table: string;

  constructor(
    connectionString: string,
    private readonly schema: string,
  ) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name "${schema}"`);
    this.table = `${schema}.audit_events`;
    this.pool = new (loadPg().Pool)({ connectionString, max: 4, connectionTimeoutMillis: 5000, query_timeout: 30_000, statement_timeout: 30_000 });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    this.pool.on('error', () => {});
  }

  private init(): Promise<void> {
    this.ready ??= inSchemaTransaction(this.pool, this.schema, async (client) => {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (seq bigint PRIMARY KEY, id text NOT NULL UNIQUE, time text NOT NULL, time_ms bigint NOT NULL,
           actor text NOT NULL, actor_type text NOT NULL, actor_id text, action text NOT NULL, target text, target_type text, target_id text,
           changes text, outcome text NOT NULL, address text, user_agent text, prev_hash text NOT NULL, hash text NOT NULL)`,
      );
      for (const [name, columns] of [['time', 'time_ms, seq'], ['action', 'action, seq'], ['actor', 'actor_id, seq'], ['target', 'target_id, seq']]) {
        await client.query(`CREATE INDEX IF NOT EXISTS audit_${name} ON ${this.table} (${columns})`);
      }
    }).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** Runs `work` in a transaction holding the chain's advisory lock. */
  private async locked<T>(work: (client: pg.PoolClient, head: ChainHead | undefined) => Promise<T>): Promise<T> {
    await this.init();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gateway-audit:${this.table}`]);
      const found = await client.query(`SELECT seq, hash FROM ${this.table} ORDER BY seq DESC LIMIT 1`);
      const row = found.rows[0] as { seq: string; hash: string } | undefined;
      const result = await work(client, row ? { seq: Number(row.seq), hash: row.hash } : undefined);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  private insert(client: pg.PoolClient, event: AuditEvent) {
    return client.query(`INSERT INTO ${this.table} (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, index) => `$${index + 1}`).join(', ')})`, rowOf(event));
  }

  async append(build: (head: ChainHead | undefined) => AuditEvent): Promise<AuditEvent> {
    return this.locked(async (client, head) => {
      const event = build(head);
      await this.insert(client, event);
      return event;
    });
  }

  async list(query: AuditQuery): Promise<AuditEvent[]> {
    await this.init();
    const { where, values } = listWhere(query, (index) => `$${index}`, "(target::jsonb ->> 'team')");
    const result = await this.pool.query(`SELECT * FROM ${this.table} ${where} ORDER BY seq DESC LIMIT $${values.length + 1}`, [...values, query.limit]);
    return result.rows.map((row) => eventOf(row as AuditRow));
  }

  async range(afterSeq: number, limit: number): Promise<AuditEvent[]> {
    await this.init();
    const result = await this.pool.query(`SELECT * FROM ${this.table} WHERE seq > $1 ORDER BY seq LIMIT $2`, [afterSeq, limit]);
    return result.rows.map((row) => eventOf(row as AuditRow));
  }

  async lastOfAction(action: string): Promise<AuditEvent | undefined> {
    await this.init();
    const result = await this.pool.query(`SELECT * FROM ${this.table} WHERE action = $1 ORDER BY seq DESC LIMIT 1`, [action]);
    return result.rows[0] ? eventOf(result.rows[0] as AuditRow) : undefined;
  }

  async removeBefore(cutoffMs: number, build: (removed: RemovedSegment, head: ChainHead) => AuditEvent): Promise<AuditEvent | undefined> {
    return this.locked(async (client, head) => {
      if (!head) return undefined;
      const first = await client.query(`SELECT min(seq) AS seq FROM ${this.table} WHERE time_ms >= $1`, [cutoffMs]);
      const firstKept = first.rows[0]?.seq;
      const throughSeq = firstKept === null || firstKept === undefined ? head.seq : Number(firstKept) - 1;
      const last = await client.query(`SELECT hash FROM ${this.table} WHERE seq = $1`, [throughSeq]);
      if (last.rows.length === 0) return undefined;
      const removed = await client.query(`DELETE FROM ${this.table} WHERE seq <= $1`, [throughSeq]);
      const event = build({ count: removed.rowCount ?? 0, throughSeq, anchorHash: String(last.rows[0].hash) }, head);
      await this.insert(client, event);
      return event;
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
