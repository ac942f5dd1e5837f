import type pg from 'pg';
import { dropLegacyWhenEmpty, MOVE_BATCH, moveLegacyBatch, nextLegacyDays } from './postgres-partitions.js';

/** How long the move waits before trying again after a failure, or while another instance moves. */
const RETRY_MS = 1000;

/**
 * Moves the rows of a log from before partitioning (`logs_legacy`, `log_bodies_legacy`) into the
 * partitioned tables in the background, batch by batch, newest first, then drops the legacy
 * tables. One instance moves at a time (a session advisory lock); the others wait for the legacy
 * tables to go. A failure (a database that went away) is retried; a stopped move resumes with
 * the rows left at the next start. `ensureDays` makes the partitions a batch needs; `done` is called
 * once the legacy tables are gone.
 */
export class LegacyMove {
  private stopping = false;
  private readonly running: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly connect: () => Promise<pg.Client>,
    private readonly schema: string,
    private readonly ensureDays: (days: number[]) => Promise<void>,
    private readonly done: () => void,
    private readonly batch = MOVE_BATCH,
  ) {
    this.running = this.run();
  }

  /** Resolves when the legacy tables are gone (or the move was stopped). */
  get finished(): Promise<void> {
    return this.running;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        if (await this.pass()) {
          this.done();
          return;
        }
      } catch {
        // Retried below: the rows stay where they were.
      }
      await this.pause();
    }
  }

  /** One connection's work: true once the legacy tables are gone. */
  private async pass(): Promise<boolean> {
    const client = await this.connect();
    const lock = `gateway-logs-move:${this.schema}`;
    try {
      const gone = async () => (await client.query('SELECT to_regclass($1) IS NULL AS gone', [`${this.schema}.logs_legacy`])).rows[0].gone as boolean;
      if (await gone()) return true;
      const locked = await client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [lock]);
      if (!locked.rows[0].ok) return false;
      while (!this.stopping) {
        const days = await nextLegacyDays(client, this.schema, this.batch);
        if (days.length === 0) return (await gone()) || (await dropLegacyWhenEmpty(client, this.schema));
        await this.ensureDays(days);
        await moveLegacyBatch(client, this.schema, this.batch);
      }
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }

  private pause(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, RETRY_MS);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Stops after the batch in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
  }
}
