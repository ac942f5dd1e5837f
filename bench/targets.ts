// The targets of issue 9 and their PASS/MISS evaluation from one run's figures. Pure: the run
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
  /** At the fixed rate: virtual-key gateway p99 − floor p99, and p50 − p50 (ms). */
  pacedP99DeltaMs?: number;
  pacedP50DeltaMs?: number;
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
  /** Start-up: spawn to the first 200 chat answer (ms, median of the runs). */
  startupMs?: number;
}

/** The goals, in one place. */
export const GOALS = {
  vkShareOfFloorPercent: 60,
  guardedShareOfFloorPercent: 50,
  pacedP99DeltaMs: 1,
  pacedP50DeltaMs: 0.3,
  cpuMicrosecondsPerRequest: 100,
  streamFirstByteDeltaMs: 1,
  streamMeanGapDeltaMs: 1,
  streamP99GapAllowanceMs: 2,
  openStreamsRssBytes: 300 * 1024 * 1024,
  rssAtMaximumBytes: 150 * 1024 * 1024,
  soakGrowthPercent: 10,
  startupMs: 500,
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

/** One row per target of issue 9, in the issue's order. */
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

  const p99 = figures.pacedP99DeltaMs;
  add('1000 req/s c=10: vk gateway p99 - floor p99', `<= ${GOALS.pacedP99DeltaMs} ms`, p99 === undefined ? undefined : {
    measured: `${signed(p99, 3)} ms`,
    verdict: judge([p99], p99 <= GOALS.pacedP99DeltaMs),
  });

  const p50 = figures.pacedP50DeltaMs;
  add('1000 req/s c=10: vk gateway p50 - floor p50', `<= ${GOALS.pacedP50DeltaMs} ms`, p50 === undefined ? undefined : {
    measured: `${signed(p50, 3)} ms`,
    verdict: judge([p50], p50 <= GOALS.pacedP50DeltaMs),
  });

  const cpu = figures.vkCpuMicrosecondsAtMaximum;
  const cpuAtRate = figures.vkCpuMicrosecondsAtFixedRate;
  add('CPU per request, vk gateway (c=50)', `<= ${GOALS.cpuMicrosecondsPerRequest} µs`, cpu === undefined ? undefined : {
    measured: `${fixed(cpu, 0)} µs${cpuAtRate === undefined ? '' : ` (fixed rate: ${fixed(cpuAtRate, 0)} µs)`}`,
    verdict: judge([cpu], cpu <= GOALS.cpuMicrosecondsPerRequest),
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
  add('start-up to first served request', `< ${GOALS.startupMs} ms`, startup === undefined ? undefined : {
    measured: `${fixed(startup, 0)} ms`,
    verdict: judge([startup], startup < GOALS.startupMs),
  });
  return rows;
}

/** RSS growth in percent from `atMinuteOne` to `atEnd`. */
export function growthPercent(atMinuteOne: number, atEnd: number): number {
  return atMinuteOne > 0 ? (100 * (atEnd - atMinuteOne)) / atMinuteOne : Number.NaN;
}
