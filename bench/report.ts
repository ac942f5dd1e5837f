import type { LoadFigures } from './load.js';
import type { StreamSummary } from './stream-test.js';

/** Formats a number with `digits` decimals and thousands separators; NaN and undefined become "-". */
export function formatNumber(value: number | undefined, digits = 0): string {
  if (value === undefined || Number.isNaN(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function signed(value: number, digits: number): string {
  if (Number.isNaN(value)) return '-';
  return `${value >= 0 ? '+' : ''}${formatNumber(value, digits)}`;
}

/** Lays rows out in columns: the first column left-aligned, the others right-aligned. */
export function table(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [column, cell] of row.entries()) widths[column] = Math.max(widths[column] ?? 0, cell.length);
  }
  return rows
    .map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  '))
    .join('\n');
}

/** The load table: one row per load, with the proxy process's CPU and memory where measured. */
export function loadTable(loads: readonly LoadFigures[]): string {
  const header = ['load', 'req/s', 'p50 ms', 'p99 ms', 'completed', 'non-2xx', 'errors', 'proxy CPU µs/req', 'proxy CPU %', 'proxy RSS MB', 'machine busy %'];
  const rows = loads.map((load) => [
    load.label,
    formatNumber(load.requestsPerSecond),
    formatNumber(load.p50Ms),
    formatNumber(load.p99Ms),
    formatNumber(load.completed),
    formatNumber(load.non2xx),
    formatNumber(load.errors + load.timeouts),
    formatNumber(load.proxy?.cpuMicrosecondsPerRequest),
    formatNumber(load.proxy?.cpuPercent),
    formatNumber(load.proxy === undefined ? undefined : load.proxy.rssBytes / 1024 / 1024),
    formatNumber(load.machineBusyPercent),
  ]);
  return table([header, ...rows]);
}

/** One line comparing the gateway with the floor under the same load. */
export function comparisonLine(title: string, floor: LoadFigures, gateway: LoadFigures): string {
  const share = (100 * gateway.requestsPerSecond) / floor.requestsPerSecond;
  const floorCpu = floor.proxy?.cpuMicrosecondsPerRequest ?? Number.NaN;
  const gatewayCpu = gateway.proxy?.cpuMicrosecondsPerRequest ?? Number.NaN;
  return (
    `${title}: gateway ${formatNumber(gateway.requestsPerSecond)} req/s = ${formatNumber(share, 1)} % of the floor's ` +
    `${formatNumber(floor.requestsPerSecond)}; p99 ${signed(gateway.p99Ms - floor.p99Ms, 0)} ms ` +
    `(${formatNumber(gateway.p99Ms)} vs ${formatNumber(floor.p99Ms)}); CPU per request ${formatNumber(gatewayCpu)} µs vs ` +
    `${formatNumber(floorCpu)} µs (${signed(gatewayCpu - floorCpu, 0)} µs)`
  );
}

const STREAM_COLUMNS: ReadonlyArray<[title: string, pick: (summary: StreamSummary) => number]> = [
  ['headers p50', (summary) => summary.headersMedianMs],
  ['first byte p50', (summary) => summary.firstByteMedianMs],
  ['first byte p90', (summary) => summary.firstByteP90Ms],
  ['first content p50', (summary) => summary.firstContentMedianMs],
  ['first content p90', (summary) => summary.firstContentP90Ms],
  ['mean gap', (summary) => summary.meanGapMs],
  ['max gap', (summary) => summary.maxGapMs],
];

/** The stream table: one row per target, then one row per `[minuend, subtrahend]` difference. */
export function streamTable(summaries: readonly StreamSummary[], differences: ReadonlyArray<[StreamSummary, StreamSummary]>): string {
  const header = ['stream', ...STREAM_COLUMNS.map(([title]) => title)];
  const rows = summaries.map((summary) => [`${summary.label} (n=${summary.runs})`, ...STREAM_COLUMNS.map(([, pick]) => formatNumber(pick(summary), 2))]);
  const differenceRows = differences.map(([minuend, subtrahend]) => [
    `${minuend.label} - ${subtrahend.label}`,
    ...STREAM_COLUMNS.map(([, pick]) => signed(pick(minuend) - pick(subtrahend), 2)),
  ]);
  return table([header, ...rows, ...differenceRows]);
}

/** Every load that had non-2xx answers, errors or time-outs, with its status codes. */
export function loadProblems(loads: readonly LoadFigures[]): string[] {
  return loads
    .filter((load) => load.non2xx > 0 || load.errors > 0 || load.timeouts > 0 || load.completed === 0)
    .map(
      (load) =>
        `${load.label}: ${load.completed} completed, ${load.non2xx} non-2xx, ${load.errors} errors, ${load.timeouts} time-outs; ` +
        `status codes ${JSON.stringify(load.statusCodes)}`,
    );
}
