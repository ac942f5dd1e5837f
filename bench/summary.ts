// The run's report: every section's table, then the targets table (PASS/MISS), and the list of
// harness problems (anything that makes a figure invalid) that decides the exit code.
import { availableParallelism, cpus, loadavg } from 'node:os';
import { type BaselineMeasured, baselineLines } from './compare.js';
import { type LoadFigures, type PacedFigures, shareOfFloor } from './load.js';
import type { OpenStreamsFigures } from './open-streams.js';
import {
  loadProblems,
  openStreamsLines,
  pacedDifference,
  pacedProblems,
  pacedTable,
  soakLines,
  startupLines,
  streamTable,
  targetsTable,
  throughputTable,
} from './report.js';
import type { Settings } from './settings.js';
import type { SoakFigures } from './soak.js';
import type { StartupRun } from './startup.js';
import { median } from './stats.js';
import type { StreamSummary } from './stream-test.js';
import { evaluateTargets, type TargetFigures } from './targets.js';

function describeMachine(settings: Settings, loadBefore: number): string {
  const model = cpus()[0]?.model ?? 'unknown CPU';
  const load = `1-minute load average ${loadBefore.toFixed(2)} before the run, ${loadavg()[0].toFixed(2)} after`;
  return (
    `Node ${process.version}, ${availableParallelism()} cores (${model}), ${load}\n` +
    `loads: ${settings.warmUpSeconds} s warm-up + ${settings.durationSeconds} s each` +
    `${settings.throughputRounds > 1 ? ` (c=50: in ${settings.throughputRounds} alternating rounds; a share is the median of the rounds')` : ''}; one process per server ` +
    `(mock, floor, and each gateway variant); the load tools run in the bench process`
  );
}

/** Everything one run measured; a section not run leaves its part undefined. */
export interface Measured {
  throughput?: LoadFigures[];
  paced?: PacedFigures[];
  streams?: StreamSummary[];
  openStreams?: OpenStreamsFigures;
  startup?: StartupRun[];
  soak?: SoakFigures;
  /** BENCH_BASELINE: the baseline checkout's variants, each paired with the current one (`throughput` and `paced` hold the current ones only). */
  baseline?: BaselineMeasured;
}

function targetFigures(measured: Measured): TargetFigures {
  const figures: TargetFigures = {};
  const [, floor, , vk, guarded, routed] = measured.throughput ?? [];
  if (floor && vk && guarded) {
    figures.vkShareOfFloorPercent = shareOfFloor(vk, floor);
    figures.guardedShareOfFloorPercent = shareOfFloor(guarded, floor);
    if (routed) figures.routedShareOfFloorPercent = shareOfFloor(routed, floor);
    figures.vkCpuMicrosecondsAtMaximum = vk.proxy?.cpuMicrosecondsPerRequest ?? Number.NaN;
    figures.vkRssMaxAtMaximumBytes = vk.proxy?.rssMaxBytes ?? Number.NaN;
  }
  const [pacedFloor, , pacedVk] = measured.paced ?? [];
  if (pacedFloor && pacedVk) {
    figures.pacedP99DeltaMs = pacedVk.result.p99Ms - pacedFloor.result.p99Ms;
    figures.pacedP999DeltaMs = pacedVk.result.p999Ms - pacedFloor.result.p999Ms;
    figures.vkCpuMicrosecondsAtFixedRate = pacedVk.proxy.cpuMicrosecondsPerRequest;
  }
  const [direct, , gatewayStream] = measured.streams ?? [];
  if (direct && gatewayStream) {
    figures.streamFirstByteP50DeltaMs = gatewayStream.firstByteMedianMs - direct.firstByteMedianMs;
    figures.streamGaps = { gatewayMeanMs: gatewayStream.meanGapMs, directMeanMs: direct.meanGapMs, gatewayP99Ms: gatewayStream.p99GapMs, directP99Ms: direct.p99GapMs };
  }
  if (measured.openStreams) {
    const open = measured.openStreams;
    const maxOpenAtOnce = Math.min(open.maxOpenAtClient, Number.isNaN(open.peakOpenAtMock) ? open.maxOpenAtClient : open.peakOpenAtMock);
    figures.openStreams = { requested: open.requested, completeOk: open.completeOk, maxOpenAtOnce, peakRssBytes: open.peakRssBytes };
  }
  if (measured.startup) figures.startupMs = median(measured.startup.map((run) => run.firstAnswerMs));
  if (measured.soak) {
    figures.soakGrowthPercent = measured.soak.growthPercent;
    figures.soakLongestPauseMs = Math.max(...measured.soak.intervals.map((interval) => interval.loopDelayMaxMs));
  }
  return figures;
}

export function report(settings: Settings, loadBefore: number, measured: Measured): string {
  const lines = ['', describeMachine(settings, loadBefore), ''];
  if (measured.throughput) {
    lines.push(`Max throughput, c=${settings.connections}, non-streaming chat (autocannon; latency in whole ms):`);
    const baselines = (measured.baseline?.throughput ?? []).map((pair) => pair.baseline);
    lines.push(throughputTable([...measured.throughput, ...baselines], measured.throughput[1]), '');
  }
  if (measured.paced) {
    const [floor, ...gateways] = [...measured.paced, ...(measured.baseline?.paced ?? []).map((pair) => pair.baseline)];
    lines.push(`Fixed ${settings.rate} req/s, c=${settings.rateConnections} (paced open-loop load, latency from the due time when queued; ms):`);
    lines.push(pacedTable([floor, ...gateways]), ...gateways.map((gateway) => pacedDifference(gateway, floor)), '');
  }
  if (measured.baseline) lines.push(...baselineLines(measured.baseline, measured.throughput?.[1], measured.paced?.[0]));
  if (measured.streams) {
    const [direct, floor, gateway] = measured.streams;
    lines.push(`Streams, one at a time (${settings.streamChunks} chunks ${settings.streamGapMs} ms apart), ms measured by the client from sending the request:`);
    lines.push(
      streamTable(measured.streams, [
        [gateway, direct],
        [floor, direct],
      ]),
      '',
    );
  }
  if (measured.openStreams) lines.push(...openStreamsLines(measured.openStreams, { chunks: settings.openStreamChunks, gapMs: settings.openStreamGapMs }), '');
  if (measured.startup) {
    lines.push(...startupLines(measured.startup, median(measured.startup.map((run) => run.readyMs)), median(measured.startup.map((run) => run.firstAnswerMs))), '');
  }
  if (measured.soak) lines.push(...soakLines(measured.soak, settings.rate, settings.soakSampleSeconds), '');
  else lines.push('Soak: not run (set BENCH_SOAK_MINUTES, e.g. 10).', '');
  lines.push(
    'Targets (issue 21; the three stream rows are issue 9\'s):',
    targetsTable(evaluateTargets(targetFigures(measured))),
    'Measured elsewhere: allocation per request <= 20 KB (`BENCH_ALLOCATIONS=<file> node dist/bench/pipeline-profile.js vk`; `... floor` for the floor proxy),',
    'a cache hit\'s added p50 <= 0.3 ms (bench/cache.ts) and routing <= 15 µs CPU (bench/routing.ts), both later in `npm run bench`.',
    '',
  );
  return lines.join('\n');
}

export function harnessProblems(measured: Measured): string[] {
  return [
    ...loadProblems([...(measured.throughput ?? []), ...(measured.baseline?.throughput ?? []).map((pair) => pair.baseline)]),
    ...pacedProblems([...(measured.paced ?? []), ...(measured.baseline?.paced ?? []).map((pair) => pair.baseline)]),
    ...(measured.streams ?? []).flatMap((summary) => summary.problems.map((problem) => `${summary.label} stream: ${problem}`)),
    ...(measured.openStreams && measured.openStreams.completeOk < measured.openStreams.requested
      ? [`concurrent streams: ${measured.openStreams.requested - measured.openStreams.completeOk} not complete (${measured.openStreams.problems.join('; ')})`]
      : []),
    ...(measured.soak ? pacedProblems([{ label: 'soak', result: measured.soak.result }]) : []),
  ];
}
