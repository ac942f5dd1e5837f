import type pg from 'pg';
import { DAY_MS } from './postgres-partitions.js';
import { bodyDocument, COLUMNS } from './postgres-schema.js';
import { listWhere, type LogQuery, searchTerms } from './store.js';

/** Matches in a day up to which a search reads the bodies first; past it, the day's rows newest first. */
export const BODIES_FIRST_CAP = 2000;

type Row = Record<string, unknown>;

const placeholder = (index: number) => `$${index}`;

/** The metadata condition of a list query (a `jsonb` column with a GIN index). */
export const metadataCondition = (key: string, value: string | undefined, param: (value: unknown) => string) =>
  value === undefined ? `metadata ? ${param(key)}` : `metadata @> ${param(JSON.stringify({ [key]: value }))}::jsonb`;

/**
 * A search page of the partitioned log, one day at a time, newest day first, until the page is
 * full. One plan for every word does not exist: a word in few bodies is best found through the
 * GIN index and then its rows fetched, a word in many bodies by reading the day's rows newest first
 * and checking each one's bodies; the planner chooses between them from estimates that the
 * partitioned tables do not give it (no statistics of the parents, and a semi-join over ids it
 * cannot judge: a rare word took seconds on a million rows). So the store asks the index first, in
 * each day: up to {@link BODIES_FIRST_CAP} matching bodies are read (a bitmap scan, stopped at the
 * cap), and if that was all of them, their rows are fetched by primary key with the other filters
 * (in a MATERIALIZED CTE, so the page's ORDER BY and LIMIT cannot turn the fetch into a walk of the
 * day's time index); otherwise the word is common in that day, and its rows are read newest first. `days` are the
 * attached days, newest first; the query's bounds (horizon, cursor) are already in `query`; `cap`
 * is there for tests.
 */
export async function searchByDay(pool: pg.Pool, schema: string, query: LogQuery & { search: string }, days: readonly number[], cap = BODIES_FIRST_CAP): Promise<Row[]> {
  const rows: Row[] = [];
  const words = searchTerms(query.search).join(' ');
  const matches = `${bodyDocument(schema)} @@ plainto_tsquery('simple'::regconfig, `;
  const newest = Math.min(query.to ?? Infinity, query.cursor ? query.cursor.timeMs + 1 : Infinity);
  for (const day of days) {
    if (rows.length > query.limit) break;
    if (day >= newest || day + DAY_MS <= (query.from ?? -Infinity)) continue;
    const inDay: LogQuery = { ...query, from: Math.max(query.from ?? day, day), to: Math.min(query.to ?? day + DAY_MS, day + DAY_MS), limit: query.limit + 1 - rows.length };
    const bounds = listWhere({ limit: 1, from: inDay.from, to: inDay.to, ...(query.cursor ? { cursor: query.cursor } : {}) }, placeholder, undefined);
    const found = await pool.query(
      `SELECT id, time_ms FROM ${schema}.log_bodies ${bounds.where} AND ${matches}${bounds.param(words)}) LIMIT ${cap + 1}`,
      bounds.params,
    );
    const { search: _search, ...filters } = inDay;
    let dayRows: pg.QueryResult;
    if (found.rows.length <= cap) {
      if (found.rows.length === 0) continue;
      const { where, params, param } = listWhere(filters, placeholder, metadataCondition);
      const pairs = `(id, time_ms) IN (SELECT * FROM unnest(${param(found.rows.map((row) => row.id))}::text[], ${param(found.rows.map((row) => row.time_ms))}::bigint[]))`;
      // The matches' rows first, then the page: with the ORDER BY and LIMIT in one query the planner
      // read the day's time index newest first and semi-joined it with the matches (730 000 rows
      // read for 126 matches of a rare word in a day of 1.67 M: 250 ms); fenced, it probes the
      // primary key once per match (~1 ms).
      dayRows = await pool.query(
        `WITH hits AS MATERIALIZED (SELECT ${COLUMNS.join(', ')} FROM ${schema}.logs ${where ? `${where} AND` : 'WHERE'} ${pairs})
         SELECT * FROM hits ORDER BY time_ms DESC, id DESC LIMIT ${inDay.limit}`,
        params,
      );
    } else {
      const { where, params, param } = listWhere(filters, placeholder, metadataCondition);
      const inBodies = `id IN (SELECT id FROM ${schema}.log_bodies WHERE time_ms >= ${param(inDay.from)} AND time_ms < ${param(inDay.to)} AND ${matches}${param(words)}))`;
      dayRows = await pool.query(`SELECT ${COLUMNS.join(', ')} FROM ${schema}.logs ${where ? `${where} AND` : 'WHERE'} ${inBodies} ORDER BY time_ms DESC, id DESC LIMIT ${inDay.limit}`, params);
    }
    rows.push(...(dayRows.rows as Row[]));
  }
  return rows;
}
