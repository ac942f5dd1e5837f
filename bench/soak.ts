import type { ServerChild } from './children.js';
import type { LoadRequest } from './load.js';
import { busyPercent, readMachineCpuTimes } from './machine.js';
import { PacedLoader, type PacedResult } from './paced-load.js';
import { growthPercent } from './targets.js';

/** One RSS sample of the soak: seconds since its start, bytes. */
export interface RssPoint {
  atSeconds: number;
  bytes: number;
}

/**
 * One sampling interval of the soak: what the machine and the gateway did, and the slow answers,
 * so that a latency spike can be matched with its cause (the gateway's own pause, or the machine).
 */
export interface SoakInterval {
  /** End of the interval, seconds since the start of the measured load. */
  atSeconds: number;
  /** All cores, every process (other work on the machine included). */
  machineBusyPercent: number;
  /** The gateway process, all its threads, in % of one core. */
  gatewayCpuPercent: number;
  /** The gateway's longest event-loop delay and GC pause (ms), and its GC pauses over 10 ms. */
  loopDelayMaxMs: number;
  gcMaxMs: number;
  gcOver10Ms: number;
  /** Answers over 20 ms (`SLOW_MS`) that ended in the interval, and the slowest answer. */
  slowAnswers: number;
  slowestMs: number;
}

export interface SoakFigures {
  minutes: number;
  samples: RssPoint[];
  rssAtMinuteOneBytes: number;
  rssAtEndBytes: number;
  growthPercent: number;
  result: PacedResult;
  intervals: SoakInterval[];
}

/** RSS at minute one (the first sample at or after 60 s), at the end (the last sample), and the growth between. */
export function soakGrowth(samples: readonly RssPoint[]): { atMinuteOne: number; atEnd: number; growthPercent: number } {
  const atMinuteOne = samples.find((sample) => sample.atSeconds >= 60)?.bytes ?? Number.NaN;
  const atEnd = samples.at(-1)?.bytes ?? Number.NaN;
  return { atMinuteOne, atEnd, growthPercent: growthPercent(atMinuteOne, atEnd) };
}

/** Slow answers per interval, from the schedule's per-second bins (an interval [from, to) in seconds). */
export function slowIn(slow: ReadonlyMap<number, { count: number; maxMs: number }> | undefined, fromSeconds: number, toSeconds: number): { count: number; maxMs: number } {
  let count = 0;
  let maxMs = 0;
  for (const [second, bin] of slow ?? []) {
    if (second < fromSeconds || second >= toSeconds) continue;
    count += bin.count;
    maxMs = Math.max(maxMs, bin.maxMs);
  }
  return { count, maxMs };
}

/**
 * Paced load for `minutes` at `ratePerSecond` on `connections` connections, after `warmupSeconds`
 * of the same load (not measured: the first second of a fresh process compiles its code); the
 * gateway's RSS, CPU and pauses and the machine's load read every `sampleSeconds`.
 */
export async function runSoak(options: {
  gateway: ServerChild;
  request: LoadRequest;
  ratePerSecond: number;
  connections: number;
  minutes: number;
  sampleSeconds: number;
  warmupSeconds?: number;
}): Promise<SoakFigures> {
  const { gateway } = options;
  const loader = new PacedLoader({ origin: gateway.url, path: options.request.path, headers: options.request.headers, body: options.request.body }, options.connections);
  if ((options.warmupSeconds ?? 0) > 0) await loader.run(options.ratePerSecond, options.warmupSeconds!);
  const startedAt = performance.now();
  const samples: RssPoint[] = [];
  const readings: Array<{ atSeconds: number; machine: ReturnType<typeof readMachineCpuTimes>; cpuMicroseconds: number; loopDelayMaxMs: number; gcMaxMs: number; gcOver10Ms: number }> = [];
  const read = async (): Promise<void> => {
    const machine = readMachineCpuTimes();
    const usage = await gateway.usage().catch(() => undefined);
    const atSeconds = (performance.now() - startedAt) / 1000;
    samples.push({ atSeconds, bytes: usage?.rssBytes ?? Number.NaN });
    readings.push({ atSeconds, machine, cpuMicroseconds: usage?.cpuMicroseconds ?? Number.NaN, loopDelayMaxMs: usage?.loopDelayMaxMs ?? Number.NaN, gcMaxMs: usage?.gcMaxMs ?? Number.NaN, gcOver10Ms: usage?.gcOver10Ms ?? Number.NaN });
  };
  await read(); // the start of the first interval (resets the gateway's pause figures)
  samples.length = 0;
  const timer = setInterval(() => void read(), options.sampleSeconds * 1000);
  try {
    const result = await loader.run(options.ratePerSecond, options.minutes * 60);
    clearInterval(timer);
    await read();
    const growth = soakGrowth(samples);
    const intervals: SoakInterval[] = [];
    for (let index = 1; index < readings.length; index++) {
      const [before, after] = [readings[index - 1], readings[index]];
      const seconds = after.atSeconds - before.atSeconds;
      const slow = slowIn(result.slow, Math.round(before.atSeconds), Math.round(after.atSeconds));
      intervals.push({
        atSeconds: after.atSeconds,
        machineBusyPercent: busyPercent(before.machine, after.machine),
        gatewayCpuPercent: (after.cpuMicroseconds - before.cpuMicroseconds) / 10_000 / seconds,
        loopDelayMaxMs: after.loopDelayMaxMs,
        gcMaxMs: after.gcMaxMs,
        gcOver10Ms: after.gcOver10Ms,
        slowAnswers: slow.count,
        slowestMs: slow.maxMs,
      });
    }
    return { minutes: options.minutes, samples, rssAtMinuteOneBytes: growth.atMinuteOne, rssAtEndBytes: growth.atEnd, growthPercent: growth.growthPercent, result, intervals };
  } finally {
    clearInterval(timer);
    await loader.close();
  }
}
