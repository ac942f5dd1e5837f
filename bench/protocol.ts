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
  /** The mock only: streams open now, and the most ever open at once. */
  openStreams?: number;
  peakOpenStreams?: number;
  /**
   * Since the previous usage report: the longest event-loop delay (ms, from a 10 ms
   * `monitorEventLoopDelay`), the longest garbage-collection pause (ms) and the pauses over 10 ms.
   */
  loopDelayMaxMs?: number;
  gcMaxMs?: number;
  gcOver10Ms?: number;
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
  /** Gateway: `three` adds the bench's three-guardrail policy (bench/policies.ts) to its config. */
  gatewayPolicies: 'BENCH_GATEWAY_POLICIES',
  /** Gateway: `upstream.connectionsPerOrigin` (default: the gateway's own default). */
  gatewayUpstreamConnections: 'BENCH_GATEWAY_UPSTREAM_CONNECTIONS',
  /** Gateway: its memory budget in MiB (`GATEWAY_MEMORY_BUDGET_MB`; default: the gateway's own). */
  gatewayMemoryBudgetMb: 'BENCH_GATEWAY_MEMORY_BUDGET_MB',
  /** Gateway: `upstream.maxAnswerBytes` (default: the gateway's own). */
  gatewayMaxAnswerBytes: 'BENCH_GATEWAY_MAX_ANSWER_BYTES',
  /** Mock: answer every request with this status (an OpenAI error body) as soon as its body is read. */
  mockStatus: 'BENCH_MOCK_STATUS',
  /** Gateway: `simple` turns on the response cache for every request (`cache.default`, max_age 3600 s). */
  gatewayCache: 'BENCH_GATEWAY_CACHE',
  /** Gateway: `1` holds its circuit breakers closed, so a failing target is tried on every request. */
  gatewayBreakersClosed: 'BENCH_GATEWAY_BREAKERS_CLOSED',
  /** Any server: the loopback port to listen on (default: a free one). The start-up test polls it before `ready`. */
  port: 'BENCH_PORT',
} as const;
