// Child-process entry of the bench: `node dist/bench/servers.js <mock|floor|gateway>`.
// Listens on a free loopback port, reports its URL over IPC, answers usage queries, and exits when
// the parent goes away (IPC disconnect) or sends SIGTERM.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import type { StreamGauge } from './mock-upstream.js';
import { watchStalls } from './stalls.js';
import { CHILD_ENVIRONMENT, type ChildMessage, isServerRole, type ServerRole, type UsageQuery, type UsageReport } from './protocol.js';

interface RunningServer {
  url: string;
  close(): Promise<void>;
  /** Extra figures for usage reports (the mock's stream gauge). */
  usage?(): Partial<UsageReport>;
}

const LOOPBACK = '127.0.0.1';
const SHUTDOWN_LIMIT_MS = 3_000;
/** Accept queue length: the concurrent-streams test opens ~1000 connections at once (Node's default is 511). */
const LISTEN_BACKLOG = 4096;

function send(message: ChildMessage): void {
  process.send?.(message);
}

function requiredEnvironment(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The port asked for with BENCH_PORT, or 0 (any free one). */
function requestedPort(): number {
  return Number(process.env[CHILD_ENVIRONMENT.port] ?? 0);
}

async function listenOnLoopback(server: Server): Promise<string> {
  server.listen({ port: requestedPort(), host: LOOPBACK, backlog: LISTEN_BACKLOG });
  await once(server, 'listening');
  return `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function startMock(): Promise<RunningServer> {
  // Each role imports only what it runs: the gateway child's start-up is measured from the spawn.
  const { createFailingUpstream, createMockUpstream } = await import('./mock-upstream.js');
  const failingStatus = process.env[CHILD_ENVIRONMENT.mockStatus];
  if (failingStatus !== undefined) {
    const failing = createFailingUpstream(Number(failingStatus));
    return { url: await listenOnLoopback(failing), close: () => closeServer(failing) };
  }
  const gauge: StreamGauge = { open: 0, peak: 0 };
  const server = createMockUpstream(
    {
      chunks: Number(requiredEnvironment(CHILD_ENVIRONMENT.streamChunks)),
      gapMs: Number(requiredEnvironment(CHILD_ENVIRONMENT.streamGapMs)),
    },
    gauge,
  );
  return {
    url: await listenOnLoopback(server),
    close: () => closeServer(server),
    usage: () => ({ openStreams: gauge.open, peakOpenStreams: gauge.peak }),
  };
}

async function startFloor(): Promise<RunningServer> {
  const { createFloorProxy } = await import('./floor-proxy.js');
  const floor = createFloorProxy(requiredEnvironment(CHILD_ENVIRONMENT.upstreamUrl));
  const url = await listenOnLoopback(floor.server);
  return {
    url,
    async close() {
      await closeServer(floor.server);
      await floor.close();
    },
  };
}

/**
 * The real gateway, production settings, its pino log writing to /dev/null asynchronously, the
 * durable log store (embedded SQLite) in a fresh data directory. `{ providers: [openai()] }` is its
 * whole configuration, plus the bench's guardrail policy, a larger upstream pool, the response cache or breakers held closed when asked for.
 */
async function startGateway(): Promise<RunningServer> {
  enableCompileCache(); // as core/main.ts does before it loads the gateway
  const [{ createGateway }, { openai }, { pino }, { benchPolicies }] = await Promise.all([
    import('../core/app.js'),
    import('../plugins/providers/openai/index.js'),
    import('pino'),
    import('./policies.js'),
  ]);
  const dataDirectory = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  const policies = process.env[CHILD_ENVIRONMENT.gatewayPolicies];
  if (policies !== undefined && policies !== 'three') throw new Error(`${CHILD_ENVIRONMENT.gatewayPolicies} must be "three", got ${policies}`);
  const upstreamConnections = process.env[CHILD_ENVIRONMENT.gatewayUpstreamConnections];
  const maxAnswerBytes = process.env[CHILD_ENVIRONMENT.gatewayMaxAnswerBytes];
  const memoryBudgetMb = process.env[CHILD_ENVIRONMENT.gatewayMemoryBudgetMb];
  const cache = process.env[CHILD_ENVIRONMENT.gatewayCache];
  if (cache !== undefined && cache !== 'simple') throw new Error(`${CHILD_ENVIRONMENT.gatewayCache} must be "simple", got ${cache}`);
  const gateway = createGateway(
    {
      providers: [openai()],
      ...(policies === 'three' ? { policies: benchPolicies() } : {}),
      ...(cache === 'simple' ? { cache: { default: { mode: 'simple' as const, max_age: 3600 } } } : {}),
      ...(process.env[CHILD_ENVIRONMENT.gatewayBreakersClosed] === '1' ? { routing: { breaker: { failures: Number.MAX_SAFE_INTEGER, minRequests: Number.MAX_SAFE_INTEGER } } } : {}),
      upstream: {
        ...(upstreamConnections ? { connectionsPerOrigin: Number(upstreamConnections) } : {}),
        ...(maxAnswerBytes ? { maxAnswerBytes: Number(maxAnswerBytes) } : {}),
      },
    },
    {
      environment: {
        NODE_ENV: 'production',
        GATEWAY_API_KEY: requiredEnvironment(CHILD_ENVIRONMENT.gatewayApiKey),
        GATEWAY_DATA_DIR: dataDirectory,
        LOG_LEVEL: 'info',
        ...(memoryBudgetMb ? { GATEWAY_MEMORY_BUDGET_MB: memoryBudgetMb } : {}),
        // The log's body search index (on by default): `GATEWAY_LOG_SEARCH=false npm run bench` measures without it.
        ...(process.env.GATEWAY_LOG_SEARCH ? { GATEWAY_LOG_SEARCH: process.env.GATEWAY_LOG_SEARCH } : {}),
        // The log's size cap (1024 by default, reached after ~7.5 minutes at 1,000 req/s): a smaller
        // `GATEWAY_LOG_MAX_MB` makes a soak measure retention at work sooner.
        ...(process.env.GATEWAY_LOG_MAX_MB ? { GATEWAY_LOG_MAX_MB: process.env.GATEWAY_LOG_MAX_MB } : {}),
      },
      logDestination: pino.destination({ dest: '/dev/null', sync: false }),
    },
  );
  const { url } = await gateway.listen(requestedPort(), LOOPBACK);
  return {
    url,
    async close() {
      await gateway.close();
      rmSync(dataDirectory, { recursive: true, force: true });
    },
  };
}

const STARTERS: Record<ServerRole, () => Promise<RunningServer>> = { mock: startMock, floor: startFloor, gateway: startGateway };

/** This process's pauses since the last usage report: event-loop delay (how late a 10 ms timer ran at most) and GC. */
function watchPauses(): () => Pick<UsageReport, 'loopDelayMaxMs' | 'gcMaxMs' | 'gcOver10Ms'> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let gcMaxMs = 0;
  let gcOver10Ms = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMaxMs = Math.max(gcMaxMs, entry.duration);
      if (entry.duration > 10) gcOver10Ms++;
    }
  }).observe({ entryTypes: ['gc'] });
  return () => {
    // The histogram records the time between the timer's runs, the 10 ms interval included.
    const pauses = { loopDelayMaxMs: Math.max(0, loop.max / 1e6 - 10), gcMaxMs, gcOver10Ms };
    loop.reset();
    [gcMaxMs, gcOver10Ms] = [0, 0];
    return pauses;
  };
}

function answerUsageQueries(running: RunningServer): void {
  const pauses = watchPauses();
  process.on('message', (message: UsageQuery) => {
    if (message?.type !== 'usage') return;
    const cpu = process.cpuUsage();
    send({ type: 'usage', id: message.id, cpuMicroseconds: cpu.user + cpu.system, rssBytes: process.memoryUsage.rss(), ...pauses(), ...running.usage?.() });
  });
}

function exitOnParentLeaving(running: RunningServer): void {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), SHUTDOWN_LIMIT_MS).unref();
    running.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.once('disconnect', stop);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

async function main(): Promise<void> {
  const role = process.argv[2];
  if (!isServerRole(role)) throw new Error(`usage: servers.js <mock|floor|gateway>, got ${String(role)}`);
  if (!process.send) throw new Error('servers.js must be started by bench/run.js with an IPC channel');
  try {
    const running = await STARTERS[role]();
    watchStalls(role);
    answerUsageQueries(running);
    exitOnParentLeaving(running);
    send({ type: 'ready', role, url: running.url });
  } catch (error) {
    const failure: ChildMessage = { type: 'failed', role, message: (error as Error)?.stack ?? String(error) };
    process.send(failure, undefined, {}, () => process.exit(1));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
