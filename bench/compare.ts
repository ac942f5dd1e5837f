// BENCH_BASELINE: the gateway variants of this checkout against the same variants of another one,
// measured in the same alternating rounds (each baseline slice next to its current twin's, after it
// or, in odd rounds, before it), so that both sides see the same floor and the same moments of
// the shared machine.
import { type LoadFigures, type PacedFigures, shareOfFloor } from './load.js';
import { formatNumber, signed, table } from './report.js';

/** Appended to a variant's label when it runs from the baseline checkout. */
export const BASELINE_SUFFIX = ' (baseline)';

/** A variant's figures from this checkout and from the baseline. */
export interface Pair<T> {
  current: T;
  baseline: T;
}

/** What the baseline comparison measured: the pairs of the throughput and paced sections. */
export interface BaselineMeasured {
  checkout: string;
  throughput?: Array<Pair<LoadFigures>>;
  paced?: Array<Pair<PacedFigures>>;
}

/**
 * Splits figures listed in interleaved order, each baseline one right after its current twin
 * (`isBaseline[i]` tells which), into the current ones, in their order, and the pairs.
 */
export function splitInterleaved<T>(figures: readonly T[], isBaseline: readonly boolean[]): { current: T[]; pairs: Array<Pair<T>> } {
  const current: T[] = [];
  const pairs: Array<Pair<T>> = [];
  for (const [index, figure] of figures.entries()) {
    if (!isBaseline[index]) current.push(figure);
    else if (index === 0 || isBaseline[index - 1]) throw new Error(`splitInterleaved: the baseline figure at ${index} does not follow a current one`);
    else pairs.push({ current: figures[index - 1], baseline: figure });
  }
  return { current, pairs };
}

/** One figure of a variant on both sides; `change` is `current ÷ baseline` (ratio) or `current − baseline` (difference). */
export interface ComparedFigure {
  name: string;
  current: number;
  baseline: number;
  digits: number;
  change: 'ratio' | 'difference';
}

function changeOf(figure: ComparedFigure): string {
  if (figure.change === 'difference') return signed(figure.current - figure.baseline, figure.digits);
  const ratio = figure.current / figure.baseline;
  return Number.isFinite(ratio) ? `×${formatNumber(ratio, 2)}` : '-';
}

/** A block per variant, its label on a line of its own, then a row per figure: current, baseline, change. */
export function comparisonTable(blocks: ReadonlyArray<{ label: string; figures: readonly ComparedFigure[] }>): string {
  const rows = blocks.flatMap(({ label, figures }) => [
    [label],
    ...figures.map((figure) => [`  ${figure.name}`, formatNumber(figure.current, figure.digits), formatNumber(figure.baseline, figure.digits), changeOf(figure)]),
  ]);
  return table([['variant / figure', 'current', 'baseline', 'change'], ...rows]);
}

const MB = 1024 * 1024;

function resources(current: LoadFigures['proxy'] | PacedFigures['proxy'], baseline: LoadFigures['proxy'] | PacedFigures['proxy']): ComparedFigure[] {
  return [
    { name: 'CPU µs/req', current: current?.cpuMicrosecondsPerRequest ?? Number.NaN, baseline: baseline?.cpuMicrosecondsPerRequest ?? Number.NaN, digits: 0, change: 'ratio' },
    { name: 'RSS max MB', current: (current?.rssMaxBytes ?? Number.NaN) / MB, baseline: (baseline?.rssMaxBytes ?? Number.NaN) / MB, digits: 0, change: 'ratio' },
  ];
}

/** The c=50 pairs: share of the floor (median of the rounds' shares; difference in points), CPU per request, peak RSS. */
export function throughputComparison(pairs: ReadonlyArray<Pair<LoadFigures>>, floor: LoadFigures): string {
  return comparisonTable(
    pairs.map(({ current, baseline }) => ({
      label: current.label,
      figures: [
        { name: 'share of floor % (median of rounds)', current: shareOfFloor(current, floor), baseline: shareOfFloor(baseline, floor), digits: 1, change: 'difference' },
        ...resources(current.proxy, baseline.proxy),
      ],
    })),
  );
}

/** The fixed-rate pairs: p50, p99 and p99.9 minus the floor's (difference in ms), CPU per request, peak RSS. */
export function pacedComparison(pairs: ReadonlyArray<Pair<PacedFigures>>, floor: PacedFigures): string {
  const overFloor = (name: string, pick: (figures: PacedFigures) => number, current: PacedFigures, baseline: PacedFigures): ComparedFigure => ({
    name: `${name} - floor ms`,
    current: pick(current) - pick(floor),
    baseline: pick(baseline) - pick(floor),
    digits: 3,
    change: 'difference',
  });
  return comparisonTable(
    pairs.map(({ current, baseline }) => ({
      label: current.label,
      figures: [
        overFloor('p50', (figures) => figures.result.p50Ms, current, baseline),
        overFloor('p99', (figures) => figures.result.p99Ms, current, baseline),
        overFloor('p99.9', (figures) => figures.result.p999Ms, current, baseline),
        ...resources(current.proxy, baseline.proxy),
      ],
    })),
  );
}

/** The report's baseline part: one table per section measured, after a line naming the checkout. */
export function baselineLines(baseline: BaselineMeasured, throughputFloor: LoadFigures | undefined, pacedFloor: PacedFigures | undefined): string[] {
  const lines = [`Current vs baseline (${baseline.checkout}), measured in the same alternating rounds; change: current ÷ baseline (×) or current − baseline (±):`];
  if (baseline.throughput && throughputFloor) lines.push('', 'c=50:', throughputComparison(baseline.throughput, throughputFloor));
  if (baseline.paced && pacedFloor) lines.push('', 'Fixed rate:', pacedComparison(baseline.paced, pacedFloor));
  return [...lines, ''];
}

/** The endpoints' indexes in a round's order: on odd rounds a baseline variant goes before its current twin, so neither is always first. */
export function roundOrder(endpoints: readonly { baseline?: boolean }[], round: number): number[] {
  const order = endpoints.map((_endpoint, index) => index);
  if (round % 2 === 1) {
    for (let index = 0; index + 1 < order.length; index++) {
      if (!endpoints[index + 1].baseline || endpoints[index].baseline) continue;
      order[index] = index + 1;
      order[index + 1] = index;
      index++;
    }
  }
  return order;
}
