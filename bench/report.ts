import { type LoadFigures, type PacedFigures, roundShares, shareOfFloor } from './load.js';
import type { OpenStreamsFigures } from './open-streams.js';
import type { SoakFigures } from './soak.js';
import type { StartupRun } from './startup.js';
import type { StreamSummary } from './stream-test.js';
import type { TargetRow } from './targets.js';

const MB = 1024 * 1024;

/** Formats a number with `digits` decimals and thousands separators; NaN and undefined become "-". */
export function formatNumber(value: number | undefined, digits = 0): string {
  if (value === undefined || Number.isNaN(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function signed(value: number, digits: number): string {
  if (Number.isNaN(value)) return '-';
  return `${value >= 0 ? '+' : ''}${formatNumber(value, digits)}`;
}

function megabytes(bytes: number | undefined): string {
  return formatNumber(bytes === undefined ? undefined : bytes / MB);
}

/** Lays rows out in columns: the first column left-aligned, the others right-aligned (or all left with `leftAligned`). */
export function table(rows: readonly string[][], leftAligned = false): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [column, cell] of row.entries()) widths[column] = Math.max(widths[column] ?? 0, cell.length);
  }
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 || leftAligned ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The c=50 table: one row per load, share of the floor's req/s, the proxy's CPU and memory. */
export function throughputTable(loads: readonly LoadFigures[], floor: LoadFigures | undefined): string {
  const rounds = loads.some((load) => load.rounds !== undefined);
  const header = ['load', 'req/s', 'share of floor', ...(rounds ? ['share by round'] : []), 'p50 ms', 'p99 ms', 'completed', 'non-2xx', 'errors', 'CPU µs/req', 'CPU %', 'RSS max MB', 'machine busy %'];
  const rows = loads.map((load) => [
    load.label,
    formatNumber(load.requestsPerSecond),
    floor ? `${formatNumber(shareOfFloor(load, floor), 1)} %` : '-',
    ...(rounds ? [floor ? roundShares(load, floor).map((share) => formatNumber(share, 1)).join(' / ') || '-' : '-'] : []),
    formatNumber(load.p50Ms),
    formatNumber(load.p99Ms),
    formatNumber(load.completed),
    formatNumber(load.non2xx),
    formatNumber(load.errors + load.timeouts),
    formatNumber(load.proxy?.cpuMicrosecondsPerRequest),
    formatNumber(load.proxy?.cpuPercent),
    megabytes(load.proxy?.rssMaxBytes),
    formatNumber(load.machineBusyPercent),
  ]);
  return table([header, ...rows]);
}

/** The fixed-rate table (paced load tool, latencies with 3 decimals). */
export function pacedTable(loads: readonly PacedFigures[]): string {
  const header = ['load', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'completed', 'unfinished', 'non-2xx', 'errors', 'CPU µs/req', 'CPU %', 'RSS max MB', 'send lag p99 ms', 'max queued', 'machine busy %'];
  const rows = loads.map(({ label, result, proxy, machineBusyPercent }) => [
    label,
    formatNumber(result.requestsPerSecond),
    formatNumber(result.p50Ms, 3),
    formatNumber(result.p90Ms, 3),
    formatNumber(result.p99Ms, 3),
    formatNumber(result.p999Ms, 3),
    formatNumber(result.maxMs, 3),
    formatNumber(result.completed),
    formatNumber(result.unfinished),
    formatNumber(result.non2xx),
    formatNumber(result.errors),
    formatNumber(proxy.cpuMicrosecondsPerRequest),
    formatNumber(proxy.cpuPercent),
    megabytes(proxy.rssMaxBytes),
    formatNumber(result.sendLagP99Ms, 3),
    formatNumber(result.maxQueued),
    formatNumber(machineBusyPercent),
  ]);
  return table([header, ...rows]);
}

/** `<gateway> - floor: p50 +x ms, p99 +y ms` at the fixed rate. */
export function pacedDifference(gateway: PacedFigures, floor: PacedFigures): string {
  return (
    `${gateway.label} - floor: p50 ${signed(gateway.result.p50Ms - floor.result.p50Ms, 3)} ms, ` +
    `p99 ${signed(gateway.result.p99Ms - floor.result.p99Ms, 3)} ms, ` +
    `p99.9 ${signed(gateway.result.p999Ms - floor.result.p999Ms, 3)} ms, ` +
    `CPU ${signed(gateway.proxy.cpuMicrosecondsPerRequest - floor.proxy.cpuMicrosecondsPerRequest, 0)} µs/req`
  );
}

const STREAM_COLUMNS: ReadonlyArray<[title: string, pick: (summary: StreamSummary) => number]> = [
  ['headers p50', (summary) => summary.headersMedianMs],
  ['first byte p50', (summary) => summary.firstByteMedianMs],
  ['first byte p90', (summary) => summary.firstByteP90Ms],
  ['mean gap', (summary) => summary.meanGapMs],
  ['p99 gap', (summary) => summary.p99GapMs],
  ['max gap', (summary) => summary.maxGapMs],
];

/** The stream table: one row per target, then one row per `[minuend, subtrahend]` difference. */
export function streamTable(summaries: readonly StreamSummary[], differences: ReadonlyArray<[StreamSummary, StreamSummary]>): string {
  const header = ['stream (ms)', ...STREAM_COLUMNS.map(([title]) => title)];
  const rows = summaries.map((summary) => [`${summary.label} (n=${summary.runs})`, ...STREAM_COLUMNS.map(([, pick]) => formatNumber(pick(summary), 2))]);
  const differenceRows = differences.map(([minuend, subtrahend]) => [
    `${minuend.label} - ${subtrahend.label}`,
    ...STREAM_COLUMNS.map(([, pick]) => signed(pick(minuend) - pick(subtrahend), 2)),
  ]);
  return table([header, ...rows, ...differenceRows]);
}

/** The concurrent-streams result in a few lines. */
export function openStreamsLines(figures: OpenStreamsFigures, shape: { chunks: number; gapMs: number }): string[] {
  const lines = [
    `${formatNumber(figures.requested)} concurrent streams through the gateway (virtual key; ${shape.chunks} chunks ${shape.gapMs} ms apart each), opened at once:`,
    `  complete (200, every chunk, [DONE], no error event): ${formatNumber(figures.completeOk)} of ${formatNumber(figures.requested)}`,
    `  most open at once: ${formatNumber(figures.maxOpenAtClient)} at the client, ${formatNumber(figures.peakOpenAtMock)} at the mock upstream`,
    `  gateway RSS: ${megabytes(figures.rssBeforeBytes)} MB before, ${megabytes(figures.peakRssBytes)} MB peak while open`,
    `  first byte p50 ${formatNumber(figures.firstByteP50Ms, 1)} ms, max ${formatNumber(figures.firstByteMaxMs, 1)} ms; all done in ${formatNumber(figures.durationMs / 1000, 1)} s`,
  ];
  if (figures.problems.length > 0) lines.push(`  problems: ${figures.problems.join('; ')}`);
  return lines;
}

/** The start-up runs and their median. */
export function startupLines(runs: readonly StartupRun[], medianReadyMs: number, medianFirstAnswerMs: number): string[] {
  return [
    `Start-up of a fresh gateway child (fresh data directory, embedded stores), ${runs.length} run(s), ms from the spawn:`,
    `  to its ready message:         ${runs.map((run) => formatNumber(run.readyMs)).join(', ')} (median ${formatNumber(medianReadyMs)})`,
    `  to the first 200 chat answer: ${runs.map((run) => formatNumber(run.firstAnswerMs)).join(', ')} (median ${formatNumber(medianFirstAnswerMs)}; ${runs.map((run) => run.attempts).join('/')} attempts)`,
    `  for reference, a bare \`node -e ''\` from spawn to exit: ${runs.map((run) => formatNumber(run.bareNodeMs)).join(', ')}`,
  ];
}

/** The soak result in a few lines. */
export function soakLines(soak: SoakFigures, rate: number, sampleSeconds: number): string[] {
  const { result } = soak;
  return [
    `Soak: ${soak.minutes} min at ${formatNumber(rate)} req/s through a fresh gateway (virtual key), RSS read every ${sampleSeconds} s:`,
    `  RSS at minute 1 ${megabytes(soak.rssAtMinuteOneBytes)} MB, at the end ${megabytes(soak.rssAtEndBytes)} MB: growth ${signed(soak.growthPercent, 1)} %`,
    `  RSS samples (MB): ${soak.samples.map((sample) => megabytes(sample.bytes)).join(' ')}`,
    `  ${formatNumber(result.completed)} completed, ${result.unfinished} unfinished (cut off), ${result.non2xx} non-2xx, ${result.errors} errors; p50 ${formatNumber(result.p50Ms, 3)} ms, p99 ${formatNumber(result.p99Ms, 3)} ms, max ${formatNumber(result.maxMs, 3)} ms`,
    `  gateway pauses over the whole soak: longest event-loop delay ${formatNumber(Math.max(...soak.intervals.map((interval) => interval.loopDelayMaxMs)), 1)} ms, longest GC pause ${formatNumber(Math.max(...soak.intervals.map((interval) => interval.gcMaxMs)), 1)} ms, ${soak.intervals.reduce((sum, interval) => sum + interval.gcOver10Ms, 0)} GC pauses over 10 ms`,
    '  Per interval (slow: answers over 20 ms; loop delay and GC: the gateway\'s own longest pauses; machine busy: all cores, all processes):',
    ...table(
      [
        ['until s', 'machine busy %', 'gateway CPU %', 'loop delay max ms', 'GC max ms', 'GC > 10 ms', 'slow answers', 'slowest ms'],
        ...soak.intervals.map((interval) => [
          formatNumber(interval.atSeconds),
          formatNumber(interval.machineBusyPercent),
          formatNumber(interval.gatewayCpuPercent),
          formatNumber(interval.loopDelayMaxMs, 1),
          formatNumber(interval.gcMaxMs, 1),
          String(interval.gcOver10Ms),
          String(interval.slowAnswers),
          formatNumber(interval.slowestMs, 1),
        ]),
      ],
      true,
    )
      .split('\n')
      .map((line) => `    ${line}`),
  ];
}

/** The targets table: `target | goal | measured | PASS/MISS`. */
export function targetsTable(rows: readonly TargetRow[]): string {
  return table([['target', 'goal', 'measured', 'PASS/MISS'], ...rows.map((row) => [row.target, row.goal, row.measured, row.verdict])], true);
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

/** Every paced load that had non-2xx answers or errors. */
export function pacedProblems(loads: ReadonlyArray<Pick<PacedFigures, 'label' | 'result'>>): string[] {
  return loads
    .filter(({ result }) => result.non2xx > 0 || result.errors > 0 || result.completed === 0)
    .map(
      ({ label, result }) =>
        `${label}: ${result.completed} completed of ${result.scheduled}, ${result.non2xx} non-2xx, ${result.errors} errors` +
        `${result.firstError ? ` (first: ${result.firstError})` : ''}; status codes ${JSON.stringify(result.statusCodes)}`,
    );
}
