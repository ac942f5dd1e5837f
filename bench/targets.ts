// The targets of issue 21 (with issue 9's stream targets after them) and their PASS/MISS evaluation from one run's figures. Pure: the run
// gathers `TargetFigures`, `evaluateTargets` turns them into rows (unit-tested in bench.test.ts).
// A MISS is a result, never a harness failure: it does not change the exit code.

export type Verdict = 'PASS' | 'MISS' | 'not run';

export interface TargetRow {
  target: string;
  goal: string;
  measured: string;
  verdict: Verdict;
}

/**
 * What the run measured. A section that was not run leaves its figures undefined (verdict
 * `not run`); a figure that could not be computed is NaN (verdict MISS: nothing shows it met).
 */
export interface TargetFigures {
  /** Virtual-key gateway req/s at c=50 as a percentage of the floor's. */
  vkShareOfFloorPercent?: number;
  /** The same with the three-guardrail policy on the key. */
  guardedShareOfFloorPercent?: number;
  /** A 2-target fallback route whose first target answers, at c=50, as a percentage of the floor's. */
  routedShareOfFloorPercent?: number;
  /** At the fixed rate: virtual-key gateway p99 − floor p99, and p99.9 − p99.9 (ms). */
  pacedP99DeltaMs?: number;
  pacedP999DeltaMs?: number;
  /** CPU µs per request of the virtual-key gateway at c=50, and at the fixed rate. */
  vkCpuMicrosecondsAtMaximum?: number;
  vkCpuMicrosecondsAtFixedRate?: number;
  /** Stream time to first byte p50, gateway − direct (ms). */
  streamFirstByteP50DeltaMs?: number;
  /** Chunk spacing (ms): mean and p99 gap between content events, gateway and direct. */
  streamGaps?: { gatewayMeanMs: number; directMeanMs: number; gatewayP99Ms: number; directP99Ms: number };
  /** The concurrent-streams test: how many were opened, completed whole, were open at one time (the fewer of client's and mock's count), peak RSS. */
  openStreams?: { requested: number; completeOk: number; maxOpenAtOnce: number; peakRssBytes: number };
  /** Largest RSS sampled in the virtual-key gateway during its c=50 load (bytes). */
  vkRssMaxAtMaximumBytes?: number;
  /** Soak: RSS growth after the first minute (%); undefined when no soak was asked for. */
  soakGrowthPercent?: number;
  /** Soak: the gateway's longest event-loop delay (ms, the request thread's longest pause). */
  soakLongestPauseMs?: number;
  /** Start-up: spawn to the first 200 chat answer (ms, median of the runs). */
  startupMs?: number;
}

/** The goals, in one place (issue 21; the stream goals are issue 9's). */
export const GOALS = {
  vkShareOfFloorPercent: 60,
  guardedShareOfFloorPercent: 50,
  routedShareOfFloorPercent: 55,
  pacedP99DeltaMs: 2,
  pacedP999DeltaMs: 5,
  cpuMicrosecondsPerRequest: 200,
  soakLongestPauseMs: 10,
  rssAtMaximumBytes: 200 * 1024 * 1024,
  soakGrowthPercent: 10,
  startupMs: 400,
  streamFirstByteDeltaMs: 1,
  streamMeanGapDeltaMs: 1,
  streamP99GapAllowanceMs: 2,
  openStreamsRssBytes: 300 * 1024 * 1024,
} as const;

const MB = 1024 * 1024;

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

function signed(value: number, digits: number): string {
  return Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(digits)}` : '-';
}

/** PASS when every figure is a number and `holds`; MISS otherwise (NaN included). */
function judge(figures: readonly number[], holds: boolean): Verdict {
  return figures.every((figure) => Number.isFinite(figure)) && holds ? 'PASS' : 'MISS';
}

function notRun(target: string, goal: string): TargetRow {
  return { target, goal, measured: '-', verdict: 'not run' };
}

/** One row per target of issue 21 measured here, in the issue's order, then issue 9's stream targets. */
export function evaluateTargets(figures: TargetFigures): TargetRow[] {
  const rows: TargetRow[] = [];
  const add = (target: string, goal: string, row: Omit<TargetRow, 'target' | 'goal'> | undefined): void => {
    rows.push(row === undefined ? notRun(target, goal) : { target, goal, ...row });
  };

  const share = figures.vkShareOfFloorPercent;
  add('virtual-key gateway, c=50: share of the floor', `>= ${GOALS.vkShareOfFloorPercent} %`, share === undefined ? undefined : {
    measured: `${fixed(share, 1)} %`,
    verdict: judge([share], share >= GOALS.vkShareOfFloorPercent),
  });

  const guarded = figures.guardedShareOfFloorPercent;
  add('virtual key + 3 guardrails, c=50: share of the floor', `>= ${GOALS.guardedShareOfFloorPercent} %`, guarded === undefined ? undefined : {
    measured: `${fixed(guarded, 1)} %`,
    verdict: judge([guarded], guarded >= GOALS.guardedShareOfFloorPercent),
  });

  const routed = figures.routedShareOfFloorPercent;
  add('2-target fallback route (first answers), c=50: share of the floor', `>= ${GOALS.routedShareOfFloorPercent} %`, routed === undefined ? undefined : {
    measured: `${fixed(routed, 1)} %`,
    verdict: judge([routed], routed >= GOALS.routedShareOfFloorPercent),
  });

  const p99 = figures.pacedP99DeltaMs;
  add('1000 req/s c=10: vk gateway p99 - floor p99', `<= ${GOALS.pacedP99DeltaMs} ms`, p99 === undefined ? undefined : {
    measured: `${signed(p99, 3)} ms`,
    verdict: judge([p99], p99 <= GOALS.pacedP99DeltaMs),
  });

  const p999 = figures.pacedP999DeltaMs;
  add('1000 req/s c=10: vk gateway p99.9 - floor p99.9', `<= ${GOALS.pacedP999DeltaMs} ms`, p999 === undefined ? undefined : {
    measured: `${signed(p999, 3)} ms`,
    verdict: judge([p999], p999 <= GOALS.pacedP999DeltaMs),
  });

  const cpu = figures.vkCpuMicrosecondsAtMaximum;
  const cpuAtRate = figures.vkCpuMicrosecondsAtFixedRate;
  add('CPU per request, vk gateway, all threads (c=50)', `<= ${GOALS.cpuMicrosecondsPerRequest} µs`, cpu === undefined ? undefined : {
    measured: `${fixed(cpu, 0)} µs${cpuAtRate === undefined ? '' : ` (fixed rate: ${fixed(cpuAtRate, 0)} µs)`}`,
    verdict: judge([cpu], cpu <= GOALS.cpuMicrosecondsPerRequest),
  });

  const pause = figures.soakLongestPauseMs;
  add('soak: longest request-thread pause (event-loop delay)', `<= ${GOALS.soakLongestPauseMs} ms`, pause === undefined ? undefined : {
    measured: `${fixed(pause, 1)} ms`,
    verdict: judge([pause], pause <= GOALS.soakLongestPauseMs),
  });

  const rss = figures.vkRssMaxAtMaximumBytes;
  add('RSS under c=50 load (vk gateway, max sampled)', `<= ${GOALS.rssAtMaximumBytes / MB} MB`, rss === undefined ? undefined : {
    measured: `${fixed(rss / MB, 0)} MB`,
    verdict: judge([rss], rss <= GOALS.rssAtMaximumBytes),
  });

  const soak = figures.soakGrowthPercent;
  add('soak: RSS growth after the first minute', `< ${GOALS.soakGrowthPercent} %`, soak === undefined ? undefined : {
    measured: `${signed(soak, 1)} %`,
    verdict: judge([soak], soak < GOALS.soakGrowthPercent),
  });

  const startup = figures.startupMs;
  add('start-up to first served request', `<= ${GOALS.startupMs} ms`, startup === undefined ? undefined : {
    measured: `${fixed(startup, 0)} ms`,
    verdict: judge([startup], startup <= GOALS.startupMs),
  });

  const firstByte = figures.streamFirstByteP50DeltaMs;
  add('stream first byte p50 - direct p50', `<= ${GOALS.streamFirstByteDeltaMs} ms`, firstByte === undefined ? undefined : {
    measured: `${signed(firstByte, 2)} ms`,
    verdict: judge([firstByte], firstByte <= GOALS.streamFirstByteDeltaMs),
  });

  const gaps = figures.streamGaps;
  add(
    'stream spacing kept (mean gap; p99 gap)',
    `|mean - direct| <= ${GOALS.streamMeanGapDeltaMs} ms; p99 <= direct + ${GOALS.streamP99GapAllowanceMs} ms`,
    gaps === undefined
      ? undefined
      : {
          measured: `mean ${signed(gaps.gatewayMeanMs - gaps.directMeanMs, 2)} ms; p99 ${fixed(gaps.gatewayP99Ms, 2)} vs ${fixed(gaps.directP99Ms, 2)} ms`,
          verdict: judge(
            [gaps.gatewayMeanMs, gaps.directMeanMs, gaps.gatewayP99Ms, gaps.directP99Ms],
            Math.abs(gaps.gatewayMeanMs - gaps.directMeanMs) <= GOALS.streamMeanGapDeltaMs && gaps.gatewayP99Ms <= gaps.directP99Ms + GOALS.streamP99GapAllowanceMs,
          ),
        },
  );

  const open = figures.openStreams;
  add('concurrent open streams: peak RSS, all open at once and complete', `< ${GOALS.openStreamsRssBytes / MB} MB, all complete`, open === undefined ? undefined : {
    measured: `${fixed(open.peakRssBytes / MB, 0)} MB, ${open.maxOpenAtOnce} open at once, ${open.completeOk}/${open.requested} complete`,
    verdict: judge(
      [open.peakRssBytes],
      open.requested > 0 && open.completeOk === open.requested && open.maxOpenAtOnce === open.requested && open.peakRssBytes < GOALS.openStreamsRssBytes,
    ),
  });

  return rows;
}

/** RSS growth in percent from `atMinuteOne` to `atEnd`. */
export function growthPercent(atMinuteOne: number, atEnd: number): number {
  return atMinuteOne > 0 ? (100 * (atEnd - atMinuteOne)) / atMinuteOne : Number.NaN;
}
