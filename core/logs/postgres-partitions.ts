import type pg from 'pg';
import { COLUMNS } from './postgres-schema.js';

/** A partition's span: one UTC day. */
export const DAY_MS = 86_400_000;

/** The tables partitioned by day, parent first: a day's partitions are made and dropped together. */
const TABLES = ['logs', 'log_bodies'] as const;

/** The start (epoch ms) of the UTC day holding `timeMs`. */
export const dayOf = (timeMs: number): number => Math.floor(timeMs / DAY_MS) * DAY_MS;

/** A day's partition of a table: `logs_p20261129`. */
export const partitionName = (table: string, day: number): string => `${table}_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;

const PARTITION = /^(logs|log_bodies)_p(\d{4})(\d{2})(\d{2})$/;

/** The day of a partition's name, or undefined for a table this code did not name. */
function dayOfName(name: string): number | undefined {
  const match = PARTITION.exec(name);
  return match ? Date.UTC(Number(match[2]), Number(match[3]) - 1, Number(match[4])) : undefined;
}

interface PartitionRow {
  name: string;
  /** The parent, or null for a table left detached (a retention pass stopped between detaching and dropping). */
  parent: string | null;
  pending: boolean;
}

/** The day tables of the schema: attached partitions of `logs` and `log_bodies`, and detached leftovers. */
async function dayTables(client: pg.ClientBase | pg.Pool, schema: string): Promise<Array<PartitionRow & { day: number }>> {
  const found = await client.query(
    `SELECT c.relname AS name, p.relname AS parent, coalesce(i.inhdetachpending, false) AS pending
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class p ON p.oid = i.inhparent
     WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname ~ '^(logs|log_bodies)_p[0-9]{8}$'`,
    [schema],
  );
  return (found.rows as PartitionRow[]).flatMap((row) => {
    const day = dayOfName(row.name);
    return day === undefined ? [] : [{ ...row, day }];
  });
}

/** The days that have both partitions attached. */
export async function attachedDays(client: pg.ClientBase | pg.Pool, schema: string): Promise<Set<number>> {
  const count = new Map<number, number>();
  for (const row of await dayTables(client, schema)) if (row.parent !== null && !row.pending) count.set(row.day, (count.get(row.day) ?? 0) + 1);
  return new Set([...count].filter(([, tables]) => tables === TABLES.length).map(([day]) => day));
}

/**
 * Makes the partitions of these days that are missing, in the caller's transaction (which holds the
 * schema's advisory lock). Each is created as a plain table and then attached: `ATTACH PARTITION`
 * takes a SHARE UPDATE EXCLUSIVE lock on the parent, which inserts and reads do not wait for, where
 * `CREATE TABLE ... PARTITION OF` would take an ACCESS EXCLUSIVE one. The partition is empty, so
 * attaching scans nothing, and its indexes are made from the parent's partitioned indexes.
 */
export async function createDays(client: pg.ClientBase, schema: string, days: Iterable<number>): Promise<void> {
  const present = new Set((await dayTables(client, schema)).filter((row) => row.parent !== null).map((row) => row.name));
  for (const day of days) {
    for (const table of TABLES) {
      const name = partitionName(table, day);
      if (present.has(name)) continue;
      await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.${name} (LIKE ${schema}.${table} INCLUDING DEFAULTS)`);
      await client.query(`ALTER TABLE ${schema}.${table} ATTACH PARTITION ${schema}.${name} FOR VALUES FROM (${day}) TO (${day + DAY_MS})`);
    }
  }
}

/**
 * Drops the day partitions that end at or before `before`, both tables. Each is detached with
 * `DETACH PARTITION ... CONCURRENTLY` (a SHARE UPDATE EXCLUSIVE lock on the parent: inserts and
 * reads go on) and then dropped; one whose detach was interrupted is finished (`FINALIZE`), one
 * left detached is dropped. Runs on a client holding the retention lock, outside a transaction (a
 * concurrent detach cannot run in one). Returns the partitions dropped.
 */
export async function dropDaysBefore(client: pg.ClientBase, schema: string, before: number): Promise<string[]> {
  const dropped: string[] = [];
  for (const row of await dayTables(client, schema)) {
    if (row.day + DAY_MS > before) continue;
    if (row.parent !== null) await client.query(`ALTER TABLE ${schema}.${row.parent} DETACH PARTITION ${schema}.${row.name} ${row.pending ? 'FINALIZE' : 'CONCURRENTLY'}`);
    await client.query(`DROP TABLE IF EXISTS ${schema}.${row.name}`);
    dropped.push(row.name);
  }
  return dropped;
}

/** How many rows a step of the legacy move takes. */
export const MOVE_BATCH = 5000;

/** The days of the next batch of legacy rows (newest first), to make their partitions before moving them. */
export async function nextLegacyDays(client: pg.ClientBase, schema: string, batch = MOVE_BATCH): Promise<number[]> {
  const found = await client.query(
    `SELECT DISTINCT (time_ms / ${DAY_MS}) * ${DAY_MS} AS day FROM (SELECT time_ms FROM ${schema}.logs_legacy ORDER BY time_ms DESC, id DESC LIMIT ${batch}) AS next`,
  );
  return (found.rows as Array<{ day: string }>).map((row) => Number(row.day));
}

/**
 * Moves the next batch of legacy rows (newest first) and their bodies into the partitioned tables,
 * in one statement: each row is in exactly one of the tables in any snapshot, so a reader of both
 * sees it once, and a move that fails leaves the batch where it was (the next one starts again from
 * what is left: resumable). `ON CONFLICT DO NOTHING` keeps a row also written again after the
 * migration started once. Returns the rows moved (0: the legacy table is empty).
 */
export async function moveLegacyBatch(client: pg.ClientBase, schema: string, batch = MOVE_BATCH): Promise<number> {
  const columns = COLUMNS.join(', ');
  const moved = await client.query(
    `WITH moved AS (DELETE FROM ${schema}.logs_legacy WHERE id IN (SELECT id FROM ${schema}.logs_legacy ORDER BY time_ms DESC, id DESC LIMIT ${batch}) RETURNING ${columns}),
       logs_in AS (INSERT INTO ${schema}.logs (${columns}) SELECT ${columns} FROM moved ON CONFLICT DO NOTHING),
       bodies AS (DELETE FROM ${schema}.log_bodies_legacy AS b USING moved WHERE b.id = moved.id RETURNING b.id, b.time_ms, b.request_body, b.response_body),
       bodies_in AS (INSERT INTO ${schema}.log_bodies (id, time_ms, request_body, response_body) SELECT id, time_ms, request_body, response_body FROM bodies ON CONFLICT DO NOTHING)
     SELECT count(*) AS n FROM moved`,
  );
  return Number(moved.rows[0].n);
}

/**
 * Drops the legacy tables once the move has emptied them (bodies without a log row, which the
 * store never writes, go with them). Returns false while rows remain.
 */
export async function dropLegacyWhenEmpty(client: pg.ClientBase, schema: string): Promise<boolean> {
  const left = await client.query(`SELECT EXISTS (SELECT 1 FROM ${schema}.logs_legacy) AS any`);
  if (left.rows[0].any) return false;
  await client.query(`DROP TABLE IF EXISTS ${schema}.logs_legacy, ${schema}.log_bodies_legacy`);
  return true;
}
