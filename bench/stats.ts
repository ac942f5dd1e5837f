/** Small statistics the bench reports. Pure functions, unit-tested in bench.test.ts. */

/**
 * Nearest-rank percentile of `values` (`fraction` in 0..1): the smallest value with at least that
 * share of the values at or below it. NaN when there are none.
 */
export function percentile(values: ArrayLike<number>, fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return percentileOfSorted(sorted, fraction);
}

/** As `percentile`, for values already sorted ascending (several percentiles of one large sample). */
export function percentileOfSorted(sorted: ArrayLike<number>, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(fraction * sorted.length)));
  return sorted[rank - 1];
}

/** Arithmetic mean; NaN when empty. */
export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (let index = 0; index < values.length; index++) sum += values[index];
  return sum / values.length;
}

/** Median of a few values (start-up runs); NaN when empty. */
export function median(values: ArrayLike<number>): number {
  return percentile(values, 0.5);
}

/** The most intervals `[start, end)` open at one time (streams open at once). */
export function maxOverlap(intervals: ReadonlyArray<readonly [start: number, end: number]>): number {
  const events: Array<[time: number, change: number]> = [];
  for (const [start, end] of intervals) events.push([start, 1], [end, -1]);
  // At equal times an end goes before a start: touching intervals do not overlap.
  events.sort((left, right) => left[0] - right[0] || left[1] - right[1]);
  let open = 0;
  let most = 0;
  for (const [, change] of events) {
    open += change;
    most = Math.max(most, open);
  }
  return most;
}
