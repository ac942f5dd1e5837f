import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { emptyCell, groupExpression, metadataGroupKey, NO_GROUP, percentile, type UsageCell, type UsageQuery, type UsageTotalsQuery } from './store.js';

// The usage aggregations of the SQLite log store (core/logs/sqlite-store.ts): one pass over a time
// range, counted here (SQLite has no percentile aggregate).

type Accumulating = UsageCell & { latencies: number[] };

/** Counts one row into a cell. */
function countRow(cell: Accumulating, status: SQLInputValue, latency: SQLInputValue, prompt: SQLInputValue, completion: SQLInputValue, cost: SQLInputValue, cacheStatus: SQLInputValue, saved: SQLInputValue): void {
  cell.requests++;
  if (Number(status) >= 400) cell.errors++;
  cell.latencies.push(Number(latency));
  cell.promptTokens += Number(prompt ?? 0);
  cell.completionTokens += Number(completion ?? 0);
  cell.costUsd += Number(cost ?? 0);
  if (cacheStatus === 'MISS') cell.cacheMisses++;
  else if (cacheStatus === 'HIT' || cacheStatus === 'SEMANTIC-HIT') {
    cell.cacheHits++;
    cell.savedUsd += Number(saved ?? 0);
  }
}

/** The cells with their exact percentiles. */
const finished = (cells: Iterable<Accumulating>): UsageCell[] =>
  [...cells].map(({ latencies, ...cell }) => {
    latencies.sort((a, b) => a - b);
    return { ...cell, p50Ms: percentile(latencies, 0.5), p95Ms: percentile(latencies, 0.95) };
  });

/** The usage cells of a time range, by group and bucket, in one pass over the range (`LogStore.usage`). */
export function usageCells(db: DatabaseSync, query: UsageQuery): UsageCell[] {
  const metadataKey = metadataGroupKey(query.groupBy);
  // A metadata key's value comes from the metadata table, found through its (key, time, id)
  // index: one probe per row of the range; rows without the key form the "(none)" group. The
  // index is named: left to itself, the planner takes the covering (key, value, …) one, which
  // can only use the key and so scans every row with that key for each log row.
  const group = metadataKey === undefined ? groupExpression(query.groupBy) : `COALESCE(m.value, '${NO_GROUP}')`;
  const join = metadataKey === undefined ? '' : 'LEFT JOIN log_metadata AS m INDEXED BY log_metadata_key ON m.key = ?4 AND m.time_ms = logs.time_ms AND m.log_id = logs.id';
  // One pass over the range: SQLite has no percentile aggregate, so the latencies are read
  // anyway, and summing in the same loop saves a second scan.
  const statement = db.prepare(
    `SELECT ${group}, CAST((logs.time_ms - ?1) / ?2 AS INTEGER), status, latency_ms, prompt_tokens, completion_tokens, cost_usd, cache_status, cache_saved_usd, ${query.groupBy === 'key' ? 'key_name' : 'NULL'}
     FROM logs ${join} WHERE logs.time_ms >= ?1 AND logs.time_ms < ?3${query.keys === undefined ? '' : ' AND logs.key_id IN (SELECT value FROM json_each(?5))'}`,
  );
  statement.setReturnArrays(true); // arrays, not objects: measurably cheaper per row
  // ?4 is the metadata key, ?5 the keys of a team's view (?4 bound, null, when only ?5 is used).
  const parameters: SQLInputValue[] = [query.from, query.bucketMs, query.to];
  if (metadataKey !== undefined || query.keys !== undefined) parameters.push(metadataKey ?? null);
  if (query.keys !== undefined) parameters.push(JSON.stringify(query.keys));
  const rows = statement.iterate(...parameters) as Iterable<SQLInputValue[]>;
  const cells = new Map<string, Accumulating>();
  for (const [groupName, bucketIndex, status, latency, prompt, completion, cost, cacheStatus, saved, keyName] of rows) {
    const bucket = query.from + Number(bucketIndex) * query.bucketMs;
    const key = `${groupName}\u0000${bucket}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { ...emptyCell(String(groupName), bucket), latencies: [] };
      cells.set(key, cell);
    }
    if (keyName !== null) cell.label = String(keyName); // a renamed key: the name of the last row read
    countRow(cell, status, latency, prompt, completion, cost, cacheStatus, saved);
  }
  return finished(cells.values());
}

/** A time range's totals by each of several groupings, in one pass (`LogStore.usageTotals`). */
export function usageTotalCells(db: DatabaseSync, query: UsageTotalsQuery): UsageCell[][] {
  // One pass: each row is counted once per grouping.
  const expressions = query.groupBys.map((groupBy) => groupExpression(groupBy));
  const statement = db.prepare(
    `SELECT status, latency_ms, prompt_tokens, completion_tokens, cost_usd, cache_status, cache_saved_usd, key_name${expressions.map((expression) => `, ${expression}`).join('')}
     FROM logs WHERE time_ms >= ?1 AND time_ms < ?2${query.keys === undefined ? '' : ' AND key_id IN (SELECT value FROM json_each(?3))'}`,
  );
  statement.setReturnArrays(true);
  const maps = query.groupBys.map(() => new Map<string, Accumulating>());
  const parameters: SQLInputValue[] = query.keys === undefined ? [query.from, query.to] : [query.from, query.to, JSON.stringify(query.keys)];
  for (const row of statement.iterate(...parameters) as Iterable<SQLInputValue[]>) {
    const [status, latency, prompt, completion, cost, cacheStatus, saved, keyName] = row;
    for (let index = 0; index < maps.length; index++) {
      const group = String(row[8 + index]);
      let cell = maps[index].get(group);
      if (!cell) {
        cell = { ...emptyCell(group, query.from), latencies: [] };
        maps[index].set(group, cell);
      }
      if (keyName !== null && query.groupBys[index] === 'key') cell.label = String(keyName);
      countRow(cell, status, latency, prompt, completion, cost, cacheStatus, saved);
    }
  }
  return maps.map((cells) => finished(cells.values()));
}
