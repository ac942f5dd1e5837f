import type { ServerChild } from './children.js';
import type { LoadRequest } from './load.js';
import { PacedLoader, type PacedResult } from './paced-load.js';
import { growthPercent } from './targets.js';

/** One RSS sample of the soak: seconds since its start, bytes. */
export interface RssPoint {
  atSeconds: number;
  bytes: number;
}

export interface SoakFigures {
  minutes: number;
  samples: RssPoint[];
  rssAtMinuteOneBytes: number;
  rssAtEndBytes: number;
  growthPercent: number;
  result: PacedResult;
}

/** RSS at minute one (the first sample at or after 60 s), at the end (the last sample), and the growth between. */
export function soakGrowth(samples: readonly RssPoint[]): { atMinuteOne: number; atEnd: number; growthPercent: number } {
  const atMinuteOne = samples.find((sample) => sample.atSeconds >= 60)?.bytes ?? Number.NaN;
  const atEnd = samples.at(-1)?.bytes ?? Number.NaN;
  return { atMinuteOne, atEnd, growthPercent: growthPercent(atMinuteOne, atEnd) };
}

/** Paced load for `minutes` at `ratePerSecond` on `connections` connections, the gateway's RSS read every `sampleSeconds`. */
export async function runSoak(options: {
  gateway: ServerChild;
  request: LoadRequest;
  ratePerSecond: number;
  connections: number;
  minutes: number;
  sampleSeconds: number;
}): Promise<SoakFigures> {
  const { gateway } = options;
  const loader = new PacedLoader({ origin: gateway.url, path: options.request.path, headers: options.request.headers, body: options.request.body }, options.connections);
  const startedAt = performance.now();
  const samples: RssPoint[] = [];
  const sample = async (): Promise<void> => {
    const bytes = await gateway.rss().catch(() => Number.NaN);
    samples.push({ atSeconds: (performance.now() - startedAt) / 1000, bytes });
  };
  const timer = setInterval(() => void sample(), options.sampleSeconds * 1000);
  try {
    const result = await loader.run(options.ratePerSecond, options.minutes * 60);
    clearInterval(timer);
    await sample();
    const growth = soakGrowth(samples);
    return { minutes: options.minutes, samples, rssAtMinuteOneBytes: growth.atMinuteOne, rssAtEndBytes: growth.atEnd, growthPercent: growth.growthPercent, result };
  } finally {
    clearInterval(timer);
    await loader.close();
  }
}
