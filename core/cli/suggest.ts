/** The edit distance (insertions, deletions, substitutions, adjacent swaps) between two words. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, index) => [index, ...new Array<number>(b.length).fill(0)]);
  for (let column = 1; column <= b.length; column++) rows[0][column] = column;
  for (let row = 1; row <= a.length; row++) {
    for (let column = 1; column <= b.length; column++) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      rows[row][column] = Math.min(rows[row - 1][column] + 1, rows[row][column - 1] + 1, rows[row - 1][column - 1] + cost);
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1]) rows[row][column] = Math.min(rows[row][column], rows[row - 2][column - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}

/**
 * The known word closest to what was typed, when it is close enough to be a typo (at most a third
 * of its letters wrong, and at least one right), for a "did you mean" line; otherwise undefined.
 */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  const lower = typed.toLowerCase();
  let best: { word: string; distance: number } | undefined;
  for (const word of known) {
    const candidate = word.toLowerCase();
    const found = candidate.startsWith(lower) && lower.length >= 3 ? 0.5 : distance(lower, candidate);
    if (found <= Math.max(1, Math.floor(Math.max(lower.length, candidate.length) / 3)) && (best === undefined || found < best.distance)) best = { word, distance: found };
  }
  return best?.word;
}

/** ` (did you mean "…"?)`, or nothing. */
export function didYouMean(typed: string, known: Iterable<string>): string {
  const suggestion = closest(typed, known);
  return suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
}
