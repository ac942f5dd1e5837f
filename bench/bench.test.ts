// The bench's pure parts: percentiles, the paced schedule's latency accounting, the PASS/MISS
// evaluation. No timing: every clock value is given by the test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { GATEWAY_NODE_FLAGS } from './children.js';
import { pacedComparison, roundOrder, splitInterleaved, throughputComparison } from './compare.js';
import { type LoadFigures, mergeLoadSlices, type PacedFigures, roundShares, shareOfFloor } from './load.js';
import { type Dispatch, latencyStart, mergePacedResults, PacedSchedule, type PacedResult } from './paced-load.js';
import { readSettings } from './settings.js';
import { maxOverlap, mean, median, percentile } from './stats.js';
import { slowIn, soakGrowth } from './soak.js';
import { harnessProblems, report } from './summary.js';
import { evaluateTargets, growthPercent, type TargetFigures, type TargetRow } from './targets.js';

test('percentile is nearest-rank over unsorted values, NaN when empty', (t) => {
  const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
  t.is(percentile(values, 0.5), 5);
  t.is(percentile(values, 0.9), 9);
  t.is(percentile(values, 0.99), 10);
  t.is(percentile(values, 1), 10);
  t.is(percentile(values, 0), 1);
  t.is(percentile([0.25], 0.99), 0.25);
  t.true(Number.isNaN(percentile([], 0.5)));
  t.deepEqual(values, [5, 1, 4, 2, 3, 10, 9, 8, 7, 6], 'the input is not reordered');
});

test('p99 of 1000 values is the 990th smallest', (t) => {
  const values = Array.from({ length: 1000 }, (_, index) => 1000 - index);
  t.is(percentile(values, 0.99), 990);
  t.is(percentile(values, 0.5), 500);
});

test('mean and median', (t) => {
  t.is(mean([1, 2, 3, 6]), 3);
  t.true(Number.isNaN(mean([])));
  t.is(median([300, 100, 200]), 200);
});

test('latencyStart: a request whose connection was free when due counts from when it was sent', (t) => {
  t.is(latencyStart(10, Number.NEGATIVE_INFINITY, 10), 10);
  // The load tool's timer fired 0.8 ms late: that lateness is not the server's.
  t.is(latencyStart(10, 5, 10.8), 10.8);
});

test('latencyStart: a request that waited for a busy connection counts from when it was due', (t) => {
  // Due at 10, every connection busy until 14, sent at once when one freed.
  t.is(latencyStart(10, 14, 14), 10);
  // Its connection freed at 12 but the tool only sent at 12.5: the 2 ms wait counts, the 0.5 ms does not.
  t.is(latencyStart(10, 12, 12.5), 10.5);
});

/** Drives a schedule by hand: `take` at given times, `finish` given dispatches at given times. */
function schedule(ratePerSecond: number, connections: number, durationSeconds: number): PacedSchedule {
  return new PacedSchedule({ ratePerSecond, connections, durationSeconds, startAt: 0 });
}

test('the schedule is open-loop: requests fall due every 1000/rate ms whatever the answers do', (t) => {
  const paced = schedule(1000, 2, 0.005);
  t.is(paced.total, 5);
  t.deepEqual([0, 1, 2, 3, 4].map((index) => paced.dueAt(index)), [0, 1, 2, 3, 4]);
  const first = paced.take(0);
  t.deepEqual(first.map((dispatch) => dispatch.index), [0]);
  t.is(paced.nextDueAt(), 1);
  // Late timer: at 2.5 the requests due at 1 and 2 are both taken; one connection is left for them.
  const second = paced.take(2.5);
  t.deepEqual(second.map((dispatch) => [dispatch.index, dispatch.connection, dispatch.countFrom]), [[1, 1, 2.5]]);
  t.is(paced.result().maxQueued, 1, 'request 2 waits: both connections are busy');
});

test('the schedule counts a queued request from its due time (no coordinated omission)', (t) => {
  const paced = schedule(1000, 1, 0.003);
  const [first] = paced.take(0);
  t.deepEqual(paced.take(2), [], 'requests 1 and 2 are due but the only connection is busy');
  // The server answers request 0 after 5 ms: request 1 goes out at once on the freed connection.
  const second = paced.finish(first, 5, { status: 200 }) as Dispatch;
  t.is(second.index, 1);
  t.is(second.sentAt, 5);
  t.is(second.countFrom, 1, 'counted from its due time, not from 5');
  const third = paced.finish(second, 5.5, { status: 200 }) as Dispatch;
  t.is(third.countFrom, 2);
  t.is(paced.finish(third, 6, { status: 200 }), undefined);
  t.true(paced.done());
  const result = paced.result();
  t.is(result.completed, 3);
  // Latencies: 5 - 0, 5.5 - 1, 6 - 2.
  t.is(result.maxMs, 5);
  t.is(result.p50Ms, 4.5);
  t.is(result.maxQueued, 2);
  t.is(result.sendLagP99Ms, 0);
});

test('the schedule reports send lag and keeps it out of latency', (t) => {
  const paced = schedule(1000, 1, 0.001);
  const [only] = paced.take(0.75); // due at 0, sent at 0.75
  paced.finish(only, 1.25, { status: 200 });
  const result = paced.result();
  t.is(result.p50Ms, 0.5);
  t.is(result.sendLagP99Ms, 0.75);
});

test('the schedule counts non-2xx answers and errors apart', (t) => {
  const paced = schedule(1000, 3, 0.003);
  const dispatches = paced.take(2);
  t.is(dispatches.length, 3);
  paced.finish(dispatches[0], 3, { status: 200 });
  paced.finish(dispatches[1], 3, { status: 429 });
  paced.finish(dispatches[2], 3, { error: 'socket hang up' });
  const result = paced.result();
  t.true(paced.done());
  t.is(result.completed, 2, 'an error has no latency');
  t.is(result.non2xx, 1);
  t.is(result.errors, 1);
  t.is(result.firstError, 'socket hang up');
  t.deepEqual(result.statusCodes, { 200: 1, 429: 1 });
});

test('a run cut off counts what was still queued or in flight as unfinished, with the wait so far', (t) => {
  const paced = schedule(1000, 1, 0.004);
  const [first] = paced.take(1.5); // request 0 in flight, request 1 queued
  paced.abandon(10);
  t.true(paced.done());
  t.is(paced.nextDueAt(), undefined, 'requests 2 and 3 are never sent');
  t.is(paced.finish(first, 12, { status: 200 }), undefined, 'a late answer changes nothing');
  const result = paced.result();
  t.is(result.completed, 0);
  t.is(result.unfinished, 2);
  // Lower bounds: request 0 counted from its send at 1.5, request 1 from its due time 1.
  t.is(result.maxMs, 9);
  t.is(result.p50Ms, 8.5);
});

const MB = 1024 * 1024;

/** Every target met with room to spare. */
const MET: Required<TargetFigures> = {
  vkShareOfFloorPercent: 61,
  guardedShareOfFloorPercent: 52,
  routedShareOfFloorPercent: 56,
  pacedP99DeltaMs: 1.9,
  pacedP999DeltaMs: 4.5,
  vkCpuMicrosecondsAtMaximum: 195,
  vkCpuMicrosecondsAtFixedRate: 140,
  streamFirstByteP50DeltaMs: 0.8,
  streamGaps: { gatewayMeanMs: 20.3, directMeanMs: 20.2, gatewayP99Ms: 23, directP99Ms: 22 },
  openStreams: { requested: 1000, completeOk: 1000, maxOpenAtOnce: 1000, peakRssBytes: 200 * MB },
  vkRssMaxAtMaximumBytes: 190 * MB,
  soakGrowthPercent: 3,
  soakLongestPauseMs: 9,
  startupMs: 390,
};

function verdicts(rows: TargetRow[]): string[] {
  return rows.map((row) => row.verdict);
}

test('every target met: one PASS row per target of issue 21 measured here, then issue 9\'s stream targets', (t) => {
  const rows = evaluateTargets(MET);
  t.is(rows.length, 13);
  t.deepEqual(new Set(verdicts(rows)), new Set(['PASS']));
  t.true(rows.every((row) => row.goal.length > 0 && row.measured.length > 0));
});

test('each target misses on its own when its figure is on the wrong side', (t) => {
  const misses: Array<[Partial<TargetFigures>, number]> = [
    [{ vkShareOfFloorPercent: 59.9 }, 0],
    [{ guardedShareOfFloorPercent: 49 }, 1],
    [{ routedShareOfFloorPercent: 54.9 }, 2],
    [{ pacedP99DeltaMs: 2.001 }, 3],
    [{ pacedP999DeltaMs: 5.1 }, 4],
    [{ vkCpuMicrosecondsAtMaximum: 201 }, 5],
    [{ soakLongestPauseMs: 10.5 }, 6],
    [{ vkRssMaxAtMaximumBytes: 201 * MB }, 7],
    [{ soakGrowthPercent: 10 }, 8],
    [{ startupMs: 401 }, 9],
    [{ streamFirstByteP50DeltaMs: 1.2 }, 10],
    [{ streamGaps: { ...MET.streamGaps, gatewayMeanMs: 21.3 } }, 11],
    [{ streamGaps: { ...MET.streamGaps, gatewayP99Ms: 24.5 } }, 11],
    [{ openStreams: { ...MET.openStreams, completeOk: 999 } }, 12],
    [{ openStreams: { ...MET.openStreams, maxOpenAtOnce: 990 } }, 12],
    [{ openStreams: { ...MET.openStreams, peakRssBytes: 300 * MB } }, 12],
  ];
  for (const [change, row] of misses) {
    const result = verdicts(evaluateTargets({ ...MET, ...change }));
    t.is(result[row], 'MISS', JSON.stringify(change));
    t.is(result.filter((verdict) => verdict === 'MISS').length, 1, `only row ${row} misses for ${JSON.stringify(change)}`);
  }
});

test('goals are inclusive where the issue says "at least" / "within" / "≤" and strict where it says "under"', (t) => {
  const edge = verdicts(
    evaluateTargets({
      ...MET,
      vkShareOfFloorPercent: 60,
      guardedShareOfFloorPercent: 50,
      routedShareOfFloorPercent: 55,
      pacedP99DeltaMs: 2,
      pacedP999DeltaMs: 5,
      vkCpuMicrosecondsAtMaximum: 200,
      soakLongestPauseMs: 10,
      vkRssMaxAtMaximumBytes: 200 * MB,
      startupMs: 400,
    }),
  );
  t.deepEqual(new Set(edge), new Set(['PASS']));
  t.is(verdicts(evaluateTargets({ ...MET, streamGaps: { gatewayMeanMs: 21, directMeanMs: 20, gatewayP99Ms: 24, directP99Ms: 22 } }))[11], 'PASS');
});

test('a section not run is "not run"; a figure that could not be computed is a MISS', (t) => {
  const { soakGrowthPercent: _soak, soakLongestPauseMs: _pause, openStreams: _open, ...withoutSoak } = MET;
  const rows = evaluateTargets(withoutSoak);
  t.is(rows[8].verdict, 'not run');
  t.is(rows[8].measured, '-');
  t.is(rows[6].verdict, 'not run');
  t.is(rows[12].verdict, 'not run');
  t.is(evaluateTargets({ ...MET, vkShareOfFloorPercent: Number.NaN })[0].verdict, 'MISS');
  t.is(evaluateTargets({})[0].verdict, 'not run');
});

test('the CPU row shows the fixed-rate figure too', (t) => {
  t.is(evaluateTargets(MET)[5].measured, '195 µs (fixed rate: 140 µs)');
});

test('growthPercent', (t) => {
  t.is(growthPercent(100, 105), 5);
  t.is(growthPercent(200, 190), -5);
  t.true(Number.isNaN(growthPercent(0, 10)));
});

test('maxOverlap counts intervals open at the same time; touching ones do not overlap', (t) => {
  t.is(maxOverlap([]), 0);
  t.is(
    maxOverlap([
      [0, 10],
      [1, 5],
      [2, 3],
      [6, 8],
    ]),
    3,
  );
  t.is(
    maxOverlap([
      [0, 1],
      [1, 2],
      [2, 3],
    ]),
    1,
  );
});

test('soak growth: from the first sample at or after minute one to the last', (t) => {
  const MB = 1024 * 1024;
  const samples = [10, 20, 30, 40, 50, 60, 70, 600].map((atSeconds, index) => ({ atSeconds, bytes: (100 + index) * MB }));
  const growth = soakGrowth(samples);
  t.is(growth.atMinuteOne, 105 * MB);
  t.is(growth.atEnd, 107 * MB);
  t.is(Math.round(growth.growthPercent * 100) / 100, 1.9);
  t.true(Number.isNaN(soakGrowth(samples.slice(0, 3)).atMinuteOne));
});

test('slow answers of a soak are counted per interval from the per-second bins', (t) => {
  const bins = new Map([
    [0, { count: 3, maxMs: 25 }],
    [9, { count: 1, maxMs: 40 }],
    [10, { count: 2, maxMs: 90 }],
  ]);
  t.deepEqual(slowIn(bins, 0, 10), { count: 4, maxMs: 40 });
  t.deepEqual(slowIn(bins, 10, 20), { count: 2, maxMs: 90 });
  t.deepEqual(slowIn(undefined, 0, 10), { count: 0, maxMs: 0 });
});

test('mergePacedResults adds counts and takes percentiles over every slice sample', (t) => {
  const slice = (latencies: number[], completed: number, non2xx: number): PacedResult => ({
    scheduled: completed,
    completed,
    non2xx,
    statusCodes: { 200: completed - non2xx, ...(non2xx ? { 500: non2xx } : {}) },
    errors: 0,
    unfinished: 0,
    requestsPerSecond: 0,
    p50Ms: 0,
    p90Ms: 0,
    p99Ms: 0,
    p999Ms: 0,
    maxMs: 0,
    sendLagP99Ms: 0,
    maxQueued: completed,
    samples: { latencies: Float64Array.from(latencies).sort(), lags: Float64Array.from(latencies.map(() => 0.1)), elapsedMs: 1000 },
  });
  const merged = mergePacedResults([slice([1, 2, 3, 4, 5], 5, 0), slice([6, 7, 8, 9, 100], 5, 1)]);
  t.is(merged.completed, 10);
  t.is(merged.non2xx, 1);
  t.deepEqual(merged.statusCodes, { 200: 9, 500: 1 });
  t.is(merged.p50Ms, 5);
  t.is(merged.maxMs, 100);
  t.is(merged.p90Ms, 9);
  t.is(merged.p999Ms, 100);
  t.is(merged.requestsPerSecond, 5, '10 completed over 2 s of slices');
  t.is(merged.maxQueued, 5);
});

const loadSlice = (label: string, requestsPerSecond: number, cpuMicrosecondsPerRequest: number, rssMaxBytes: number, p99Ms: number): LoadFigures => ({
  label,
  requestsPerSecond,
  p50Ms: p99Ms / 4,
  p99Ms,
  completed: requestsPerSecond * 2,
  non2xx: label === 'gateway' ? 1 : 0,
  errors: 0,
  timeouts: 0,
  statusCodes: { 200: requestsPerSecond * 2 },
  machineBusyPercent: 90,
  proxy: { role: 'gateway', cpuMicrosecondsPerRequest, cpuPercent: 100, rssBytes: rssMaxBytes, rssMaxBytes },
});

test('mergeLoadSlices pools requests and CPU time over the rounds and keeps each round\'s req/s', (t) => {
  const merged = mergeLoadSlices([loadSlice('gateway', 1000, 300, 100, 20), loadSlice('gateway', 3000, 100, 250, 10), loadSlice('gateway', 2000, 200, 150, 30)]);
  t.is(merged.requestsPerSecond, 2000);
  t.is(merged.completed, 12_000);
  t.is(merged.non2xx, 3);
  t.deepEqual(merged.statusCodes, { 200: 12_000 });
  t.deepEqual(merged.rounds, [1000, 3000, 2000]);
  t.is(merged.p99Ms, 20, 'the median of the slices');
  // CPU time summed over requests summed: (2000 * 300 + 6000 * 100 + 4000 * 200) / 12000.
  t.is(merged.proxy!.cpuMicrosecondsPerRequest, 2_000_000 / 12_000);
  t.is(merged.proxy!.rssMaxBytes, 250);
  const one = loadSlice('floor', 5000, 100, 1, 1);
  t.is(mergeLoadSlices([one]), one, 'one slice is the figure itself');
});

test('a share of the floor is the median of the rounds\' shares when both loads alternated', (t) => {
  // The host slows down in the second round: the floor and the gateway slow together.
  const floor = mergeLoadSlices([loadSlice('floor', 10_000, 100, 1, 1), loadSlice('floor', 4000, 100, 1, 1), loadSlice('floor', 8000, 100, 1, 1)]);
  const gateway = mergeLoadSlices([loadSlice('gateway', 5000, 200, 1, 1), loadSlice('gateway', 2400, 200, 1, 1), loadSlice('gateway', 4400, 200, 1, 1)]);
  t.deepEqual(roundShares(gateway, floor), [50, 60, 55]);
  t.is(shareOfFloor(gateway, floor), 55);
  // Without rounds: the ratio of the two req/s.
  t.is(shareOfFloor(loadSlice('gateway', 3000, 1, 1, 1), loadSlice('floor', 6000, 1, 1, 1)), 50);
  t.deepEqual(roundShares(loadSlice('gateway', 3000, 1, 1, 1), floor), []);
});

test('the bench starts its gateways with the Node flags of `npm start`', (t) => {
  const scripts = (JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const flags = scripts.start.split(' ').filter((word) => word.startsWith('--'));
  t.deepEqual(flags, [...GATEWAY_NODE_FLAGS]);
});

test('splitInterleaved: each baseline figure is paired with the current one measured just before it', (t) => {
  const labels = ['direct', 'floor', 'default', 'default (baseline)', 'vk', 'vk (baseline)'];
  const split = splitInterleaved(labels, [false, false, false, true, false, true]);
  t.deepEqual(split.current, ['direct', 'floor', 'default', 'vk']);
  t.deepEqual(split.pairs, [
    { current: 'default', baseline: 'default (baseline)' },
    { current: 'vk', baseline: 'vk (baseline)' },
  ]);
  t.deepEqual(splitInterleaved(['floor', 'vk'], [false, false]), { current: ['floor', 'vk'], pairs: [] }, 'no baseline: everything is current');
  t.throws(() => splitInterleaved(['a (baseline)', 'a'], [true, false]));
  t.throws(() => splitInterleaved(['a', 'a (baseline)', 'b (baseline)'], [false, true, true]));
});

/** A merged c=50 load of three rounds at these req/s (the first slice's CPU and RSS). */
const rounds = (label: string, perRound: number[], cpu: number, rssMaxBytes: number): LoadFigures =>
  mergeLoadSlices(perRound.map((requestsPerSecond) => loadSlice(label, requestsPerSecond, cpu, rssMaxBytes, 10)));

/** The row of `table` that starts (after indentation) with `name`, under the block whose label is `block`, split in cells. */
function comparisonRow(table: string, block: string, name: string): string[] {
  const lines = table.split('\n');
  const row = lines.slice(lines.findIndex((line) => line.startsWith(block))).find((line) => line.trim().startsWith(name));
  return row === undefined ? [] : row.trim().slice(name.length).trim().split(/\s+/);
}

test('throughputComparison: share of the floor (median of rounds) with the difference in points, CPU and RSS with their ratio', (t) => {
  const floor = rounds('floor', [10_000, 4000, 8000], 100, 100 * MB);
  const current = rounds('gateway (vk)', [5000, 2400, 4400], 300, 150 * MB); // shares 50 / 60 / 55
  const baseline = rounds('gateway (vk) (baseline)', [6000, 2400, 4800], 200, 120 * MB); // shares 60 / 60 / 60
  const text = throughputComparison([{ current, baseline }], floor);
  t.true(text.split('\n')[0].startsWith('variant / figure'));
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'share of floor % (median of rounds)'), ['55.0', '60.0', '-5.0']);
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'CPU µs/req'), ['300', '200', '×1.50']);
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'RSS max MB'), ['150', '120', '×1.25']);
  t.false(text.includes('gateway (vk) (baseline)'), 'one block per variant, under the current label');
});

const pacedFigures = (label: string, [p50Ms, p99Ms, p999Ms]: number[], cpuMicrosecondsPerRequest: number, rssMaxBytes: number): PacedFigures => ({
  label,
  result: {
    scheduled: 1000,
    completed: 1000,
    non2xx: label.includes('broken') ? 3 : 0,
    statusCodes: { 200: 1000 },
    errors: 0,
    unfinished: 0,
    requestsPerSecond: 1000,
    p50Ms,
    p90Ms: p50Ms,
    p99Ms,
    p999Ms,
    maxMs: p999Ms,
    sendLagP99Ms: 0,
    maxQueued: 0,
    samples: { latencies: new Float64Array(), lags: new Float64Array(), elapsedMs: 1000 },
  },
  machineBusyPercent: 50,
  proxy: { role: 'gateway', cpuMicrosecondsPerRequest, cpuPercent: 20, rssMaxBytes },
});

test('pacedComparison: p50, p99 and p99.9 over the floor on both sides and their difference, CPU and RSS with their ratio', (t) => {
  const floor = pacedFigures('floor', [1, 3, 5], 100, 80 * MB);
  const current = pacedFigures('gateway (vk)', [1.5, 4, 9], 250, 200 * MB);
  const baseline = pacedFigures('gateway (vk) (baseline)', [1.25, 4.5, 7], 200, 160 * MB);
  const text = pacedComparison([{ current, baseline }], floor);
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'p50 - floor ms'), ['0.500', '0.250', '+0.250']);
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'p99 - floor ms'), ['1.000', '1.500', '-0.500']);
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'p99.9 - floor ms'), ['4.000', '2.000', '+2.000']);
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'CPU µs/req'), ['250', '200', '×1.25']);
  t.deepEqual(comparisonRow(text, 'gateway (vk)', 'RSS max MB'), ['200', '160', '×1.25']);
});

test('the report compares with the baseline only when one was measured, and judges the targets on the current figures', (t) => {
  const settings = readSettings();
  const floor = rounds('floor, c=50', [10_000, 10_000, 10_000], 100, 100 * MB);
  const throughput = [rounds('direct to mock, c=50', [20_000, 20_000, 20_000], 0, 0), floor, ...['default', 'vk', 'guarded', 'routed'].map((name) => rounds(`${name}, c=50`, [6500, 6500, 6500], 150, 150 * MB))];
  const paced = ['floor', 'default', 'vk'].map((name) => pacedFigures(name, [1, 2, 3], 100, 100 * MB));
  const without = report(settings, 0, { throughput, paced });
  t.false(without.includes('baseline'));
  const baseline = {
    checkout: '/elsewhere',
    throughput: throughput.slice(2).map((current) => ({ current, baseline: rounds(`${current.label} (baseline)`, [5000, 5000, 5000], 120, 140 * MB) })),
    paced: paced.slice(1).map((current) => ({ current, baseline: pacedFigures(`${current.label} (baseline)`, [1, 2, 3], 90, 90 * MB) })),
  };
  const withBaseline = report(settings, 0, { throughput, paced, baseline });
  t.true(withBaseline.includes('Current vs baseline (/elsewhere)'));
  t.true(withBaseline.includes('vk, c=50 (baseline)'), 'the baseline loads have rows of their own in the throughput table');
  t.deepEqual(comparisonRow(withBaseline, 'vk, c=50', 'share of floor % (median of rounds)'), ['65.0', '50.0', '+15.0']);
  const targetsOf = (text: string) => text.slice(text.indexOf('Targets'));
  t.is(targetsOf(withBaseline), targetsOf(without), 'the targets are the current figures\'');
  t.true(withBaseline.includes('vk (baseline) - floor: p50 +0.000 ms'), 'and in the fixed-rate table, with their difference to the floor');
  baseline.paced[1].baseline = pacedFigures('vk (baseline, broken)', [1, 2, 3], 90, 90 * MB);
  t.deepEqual(harnessProblems({ throughput, paced }), []);
  t.is(harnessProblems({ throughput, paced, baseline }).length, 1, 'a baseline load with non-2xx answers is a harness problem');
});

test('with a baseline, odd rounds measure each baseline variant before its current twin; without one, the order never changes', (t) => {
  const endpoints = [{}, {}, {}, { baseline: true }, {}, { baseline: true }];
  t.deepEqual(roundOrder(endpoints, 0), [0, 1, 2, 3, 4, 5]);
  t.deepEqual(roundOrder(endpoints, 1), [0, 1, 3, 2, 5, 4]);
  t.deepEqual(roundOrder(endpoints, 2), [0, 1, 2, 3, 4, 5]);
  t.deepEqual(roundOrder([{}, {}, {}], 1), [0, 1, 2]);
});
