import { type StreamTiming, type Target, timeStream } from './client.js';

/** The streaming figures of one target over all measured runs (ms). */
export interface StreamSummary {
  label: string;
  runs: number;
  headersMedianMs: number;
  firstByteMedianMs: number;
  firstByteP90Ms: number;
  firstContentMedianMs: number;
  firstContentP90Ms: number;
  meanGapMs: number;
  maxGapMs: number;
  /** Runs that were not a 200 with every content chunk, `[DONE]` and no error event. */
  problems: string[];
}

/** Streams sent and discarded before measuring, per target (connection set-up, JIT). */
const WARM_UP_RUNS = 2;

/** Nearest-rank percentile of `values` (`fraction` in 0..1); NaN when empty. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(fraction * sorted.length)));
  return sorted[rank - 1];
}

function problemOf(timing: StreamTiming, expectedChunks: number): string | undefined {
  if (timing.status !== 200) return `status ${timing.status}`;
  if (timing.sawError) return 'an error event in the stream';
  if (!timing.sawDone) return 'no [DONE]';
  if (timing.contentEvents !== expectedChunks) return `${timing.contentEvents} content events instead of ${expectedChunks}`;
  return undefined;
}

function summarise(label: string, timings: StreamTiming[], expectedChunks: number): StreamSummary {
  const gaps = timings.flatMap((timing) => timing.gapsMs);
  const problems = timings.map((timing) => problemOf(timing, expectedChunks)).filter((problem): problem is string => problem !== undefined);
  const values = (pick: (timing: StreamTiming) => number): number[] => timings.map(pick);
  return {
    label,
    runs: timings.length,
    headersMedianMs: percentile(values((timing) => timing.headersMs), 0.5),
    firstByteMedianMs: percentile(values((timing) => timing.firstByteMs), 0.5),
    firstByteP90Ms: percentile(values((timing) => timing.firstByteMs), 0.9),
    firstContentMedianMs: percentile(values((timing) => timing.firstContentMs), 0.5),
    firstContentP90Ms: percentile(values((timing) => timing.firstContentMs), 0.9),
    meanGapMs: gaps.length === 0 ? Number.NaN : gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length,
    maxGapMs: gaps.length === 0 ? Number.NaN : Math.max(...gaps),
    problems,
  };
}

/**
 * Streams `runs` times from each target, one request at a time, taking them in turn so that
 * drift on the machine affects both alike; a few unmeasured runs go first. Each request is bounded
 * by `limitMs`.
 */
export async function compareStreams(
  targets: ReadonlyArray<{ label: string; target: Target }>,
  options: { runs: number; expectedChunks: number; limitMs: number },
): Promise<StreamSummary[]> {
  const timings = targets.map((): StreamTiming[] => []);
  for (let round = 0; round < WARM_UP_RUNS + options.runs; round++) {
    for (const [index, { target }] of targets.entries()) {
      const timing = await timeStream(target, options.limitMs);
      if (round >= WARM_UP_RUNS) timings[index].push(timing);
    }
  }
  return targets.map(({ label }, index) => summarise(label, timings[index], options.expectedChunks));
}
