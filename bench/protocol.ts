/** The three server processes the bench starts. */
export type ServerRole = 'mock' | 'floor' | 'gateway';

/** Child → parent: listening at `url`. */
export interface ReadyMessage {
  type: 'ready';
  role: ServerRole;
  url: string;
}

/** Parent → child: report your resource usage now. */
export interface UsageQuery {
  type: 'usage';
  id: number;
}

/** Child → parent: CPU time used so far (user + system, µs) and resident memory (bytes). */
export interface UsageReport {
  type: 'usage';
  id: number;
  cpuMicroseconds: number;
  rssBytes: number;
}

/** Child → parent: it could not start. */
export interface FailureMessage {
  type: 'failed';
  role: ServerRole;
  message: string;
}

export type ChildMessage = ReadyMessage | UsageReport | FailureMessage;

/** True when `value` is one of the three roles. */
export function isServerRole(value: unknown): value is ServerRole {
  return value === 'mock' || value === 'floor' || value === 'gateway';
}

/** Environment variables the parent passes to its children. */
export const CHILD_ENVIRONMENT = {
  upstreamUrl: 'BENCH_UPSTREAM_URL',
  gatewayApiKey: 'BENCH_GATEWAY_API_KEY',
  streamChunks: 'BENCH_STREAM_CHUNKS',
  streamGapMs: 'BENCH_STREAM_GAP_MS',
} as const;
