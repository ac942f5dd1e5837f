import type pg from 'pg';
import { inSchemaTransaction, loadPg } from '../../../logs/postgres-store.js';
import type { ResponseStore, StoredResponse } from './responses-store.js';

type Row = { owner: string; id: string; created_ms: string | number; provider: string; previous_id: string | null; body: Pick<StoredResponse, 'input' | 'response' | 'mask'> };

/**
 * Responses state in the log store's PostgreSQL database (`DATABASE_URL`, the log schema), shared
 * by every instance of the gateway: a response made through one is continued through another. A
 * database that is down does not stop the gateway from starting: the table is created on the first
 * call that finds it up.
 */
export class PostgresResponseStore implements ResponseStore {
  readonly kind = 'postgres';
  private readonly pool: pg.Pool;
  private ready?: Promise<void>;

  constructor(
    connectionString: string,
    private readonly schema: string,
    private readonly maxAgeMs: number,
  ) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name "${schema}"`);
    this.pool = new (loadPg().Pool)({ connectionString, max: 4, connectionTimeoutMillis: 5000, query_timeout: 10_000, statement_timeout: 10_000 });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    this.pool.on('error', () => {});
  }

  init(): Promise<void> {
    this.ready ??= this.create().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private create(): Promise<void> {
    return inSchemaTransaction(this.pool, this.schema, async (client) => {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.schema}.responses (owner text NOT NULL, id text NOT NULL, created_ms bigint NOT NULL, provider text NOT NULL,
           previous_id text, body jsonb NOT NULL, PRIMARY KEY (owner, id))`,
      );
      await client.query(`CREATE INDEX IF NOT EXISTS responses_created ON ${this.schema}.responses (created_ms)`);
    });
  }

  async put(record: StoredResponse): Promise<void> {
    await this.init();
    await this.pool.query(
      `INSERT INTO ${this.schema}.responses (owner, id, created_ms, provider, previous_id, body) VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT (owner, id) DO UPDATE SET body = EXCLUDED.body, provider = EXCLUDED.provider`,
      [record.owner, record.id, record.createdMs, record.provider, record.previousId, JSON.stringify({ input: record.input, response: record.response, ...(record.mask ? { mask: record.mask } : {}) })],
    );
  }

  async get(owner: string, id: string): Promise<StoredResponse | undefined> {
    await this.init();
    const result = await this.pool.query(`SELECT * FROM ${this.schema}.responses WHERE owner = $1 AND id = $2`, [owner, id]);
    const row = result.rows[0] as Row | undefined;
    if (!row) return undefined;
    return { id: row.id, owner: row.owner, createdMs: Number(row.created_ms), provider: row.provider, previousId: row.previous_id, input: row.body.input, response: row.body.response, ...(row.body.mask ? { mask: row.body.mask } : {}) };
  }

  async delete(owner: string, id: string): Promise<boolean> {
    await this.init();
    const result = await this.pool.query(`DELETE FROM ${this.schema}.responses WHERE owner = $1 AND id = $2`, [owner, id]);
    return (result.rowCount ?? 0) > 0;
  }

  async prune(now = Date.now()): Promise<number> {
    if (this.maxAgeMs <= 0) return 0;
    await this.init();
    const result = await this.pool.query(`DELETE FROM ${this.schema}.responses WHERE created_ms < $1`, [now - this.maxAgeMs]);
    return result.rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
