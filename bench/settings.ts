// The bench's settings, from environment variables (documented in docs/performance.md, Method).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SECTIONS = ['throughput', 'paced', 'streams', 'open-streams', 'startup'] as const;
export type Section = (typeof SECTIONS)[number];

export interface Settings {
  durationSeconds: number;
  warmUpSeconds: number;
  connections: number;
  rate: number;
  /** The fixed-rate loads alternate between targets in this many rounds (BENCH_PACED_ROUNDS). */
  pacedRounds: number;
  /** The c=50 loads alternate between targets in this many rounds (BENCH_THROUGHPUT_ROUNDS). */
  throughputRounds: number;
  rateConnections: number;
  streamRuns: number;
  streamChunks: number;
  streamGapMs: number;
  openStreams: number;
  openStreamChunks: number;
  openStreamGapMs: number;
  startupRuns: number;
  startupPollMs: number;
  soakMinutes: number;
  soakSampleSeconds: number;
  rssSampleMs: number;
  sections: ReadonlySet<Section>;
  /**
   * Another built checkout of this project (BENCH_BASELINE): the throughput and paced sections also
   * measure its gateway variants, each next to the current one, in the same rounds.
   */
  baseline?: { checkout: string; serversScript: string };
}

function integerSetting(name: string, fallback: number, minimum: number, maximum: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < minimum || value > maximum) {
    throw new Error(`${name} must be an integer from ${minimum} to ${maximum}, got ${raw}`);
  }
  return value;
}

function sectionsSetting(): ReadonlySet<Section> {
  const raw = process.env.BENCH_SECTIONS;
  if (raw === undefined || raw.trim() === '') return new Set(SECTIONS);
  const asked = raw.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`BENCH_SECTIONS: unknown section(s) ${unknown.join(', ')}; expected some of ${SECTIONS.join(', ')}`);
  return new Set(asked as Section[]);
}

/** BENCH_BASELINE: a checkout whose `dist/bench/servers.js` exists; checked here, before any server starts. */
function baselineSetting(): Settings['baseline'] {
  const raw = process.env.BENCH_BASELINE;
  if (raw === undefined || raw.trim() === '') return undefined;
  const checkout = resolve(raw.trim());
  if (!existsSync(checkout)) throw new Error(`BENCH_BASELINE: ${checkout} does not exist`);
  const serversScript = join(checkout, 'dist', 'bench', 'servers.js');
  if (!existsSync(serversScript)) {
    throw new Error(`BENCH_BASELINE: ${serversScript} is missing; is ${checkout} a checkout of this project, built (npm run build there)?`);
  }
  return { checkout, serversScript };
}

export function readSettings(): Settings {
  return {
    durationSeconds: integerSetting('BENCH_DURATION', 10, 1, 120),
    warmUpSeconds: integerSetting('BENCH_WARMUP', 5, 0, 60),
    connections: integerSetting('BENCH_CONNECTIONS', 50, 1, 500),
    rate: integerSetting('BENCH_RATE', 1000, 1, 50_000),
    pacedRounds: integerSetting('BENCH_PACED_ROUNDS', 5, 1, 100),
    throughputRounds: integerSetting('BENCH_THROUGHPUT_ROUNDS', 3, 1, 100),
    rateConnections: integerSetting('BENCH_RATE_CONNECTIONS', 10, 1, 500),
    streamRuns: integerSetting('BENCH_STREAM_RUNS', 20, 1, 200),
    streamChunks: integerSetting('BENCH_STREAM_CHUNKS', 50, 1, 1000),
    streamGapMs: integerSetting('BENCH_STREAM_GAP_MS', 20, 0, 1000),
    openStreams: integerSetting('BENCH_OPEN_STREAMS', 1000, 1, 10_000),
    openStreamChunks: integerSetting('BENCH_OPEN_STREAM_CHUNKS', 50, 1, 1000),
    openStreamGapMs: integerSetting('BENCH_OPEN_STREAM_GAP_MS', 200, 1, 1000),
    startupRuns: integerSetting('BENCH_STARTUP_RUNS', 3, 1, 20),
    startupPollMs: integerSetting('BENCH_STARTUP_POLL_MS', 5, 1, 1000),
    soakMinutes: integerSetting('BENCH_SOAK_MINUTES', 0, 0, 24 * 60),
    soakSampleSeconds: integerSetting('BENCH_SOAK_SAMPLE_SECONDS', 10, 1, 600),
    rssSampleMs: integerSetting('BENCH_RSS_SAMPLE_MS', 100, 10, 10_000),
    sections: sectionsSetting(),
    baseline: baselineSetting(),
  };
}

/** An upper bound on the whole run, after which it is abandoned as hung. */
export function runBudgetMs(settings: Settings, startupLimitMs: number): number {
  const load = settings.durationSeconds + settings.warmUpSeconds;
  // With a baseline: four more c=50 loads and two more paced ones.
  const throughput = (settings.baseline ? 9 : 5) * load * 1000;
  const paced = (settings.baseline ? 5 : 3) * load * 1000;
  const streams = 3 * (settings.streamRuns + 2) * (settings.streamChunks * settings.streamGapMs + 1000);
  const open = settings.openStreamChunks * settings.openStreamGapMs + 60_000;
  const startup = settings.startupRuns * (startupLimitMs + 5_000);
  const soak = settings.soakMinutes * 60_000 + 60_000;
  return throughput + paced + streams + open + startup + soak + 120_000;
}
