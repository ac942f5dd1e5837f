import { type StreamTiming, type Target, timeStream } from './client.js';
import { mean, percentile } from './stats.js';

/** The streaming figures of one target over all measured runs (ms). */
export interface StreamSummary {
  label: string;
  runs: number;
  headersMedianMs: number;
  firstByteMedianMs: number;
  firstByteP90Ms: number;
  /** Gaps between consecutive content events as the client saw them, over every run. */
  meanGapMs: number;
  p99GapMs: number;
  maxGapMs: number;
  /** Runs that were not a 200 with every content chunk, `[DONE]` and no error event. */
  problems: string[];
}

/** Streams sent and discarded before measuring, per target (connection set-up, JIT). */
const WARM_UP_RUNS = 2;

/** Why a streamed answer is not whole (status, an error event, a missing chunk or `[DONE]`); undefined when it is. */
export function streamProblem(timing: StreamTiming, expectedChunks: number): string | undefined {
  if (timing.status !== 200) return `status ${timing.status}`;
  if (timing.sawError) return 'an error event in the stream';
  if (!timing.sawDone) return 'no [DONE]';
  if (timing.contentEvents !== expectedChunks) return `${timing.contentEvents} content events instead of ${expectedChunks}`;
  return undefined;
}

function summarise(label: string, timings: StreamTiming[], expectedChunks: number): StreamSummary {
  const gaps = timings.flatMap((timing) => timing.gapsMs);
  const problems = timings.map((timing) => streamProblem(timing, expectedChunks)).filter((problem): problem is string => problem !== undefined);
  const firstBytes = timings.map((timing) => timing.firstByteMs);
  return {
    label,
    runs: timings.length,
    headersMedianMs: percentile(timings.map((timing) => timing.headersMs), 0.5),
    firstByteMedianMs: percentile(firstBytes, 0.5),
    firstByteP90Ms: percentile(firstBytes, 0.9),
    meanGapMs: mean(gaps),
    p99GapMs: percentile(gaps, 0.99),
    maxGapMs: percentile(gaps, 1),
    problems,
  };
}

/**
 * Streams `runs` times from each target, one request at a time, taking them in turn so that
 * drift on the machine affects all alike; a few unmeasured runs go first. Each request is bounded
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
