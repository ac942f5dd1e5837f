import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ServerRole, UsageQuery } from './protocol.js';
import { readRssBytes } from './rss.js';

/** CPU time (µs, user + system) and resident memory (bytes) of one server process. */
export interface ProcessUsage {
  cpuMicroseconds: number;
  rssBytes: number;
  /** The mock only: streams open now and the most ever open at once. */
  openStreams?: number;
  peakOpenStreams?: number;
  /** Since the previous report: longest event-loop delay and GC pause (ms), GC pauses over 10 ms. */
  loopDelayMaxMs?: number;
  gcMaxMs?: number;
  gcOver10Ms?: number;
}

/** A server child process, listening on loopback. */
export interface ServerChild {
  readonly role: ServerRole;
  readonly url: string;
  readonly pid: number;
  /** performance.now() just before the spawn, and when its `ready` message arrived. */
  readonly spawnedAt: number;
  readonly readyAt: number;
  /** Asks the child for its usage so far. */
  usage(): Promise<ProcessUsage>;
  /** Its RSS now, read from /proc without involving the child (over IPC where /proc is missing). */
  rss(): Promise<number>;
  /** SIGTERM (the child cleans up, e.g. removes its data directory), SIGKILL after a few seconds. */
  stop(): Promise<void>;
}

/** A child just spawned: `ready` resolves once it listens. */
export interface SpawnedServer {
  readonly spawnedAt: number;
  readonly ready: Promise<ServerChild>;
}

/** This checkout's `dist/bench/servers.js`; a baseline checkout's is passed to `spawnServer` instead (BENCH_BASELINE). */
export const SERVERS_SCRIPT = fileURLToPath(new URL('./servers.js', import.meta.url));
const READY_LIMIT_MS = 15_000;
const USAGE_LIMIT_MS = 5_000;
const STOP_LIMIT_MS = 4_000;

const started = new Set<ChildProcess>();
let nextQueryId = 1;

function withTimeLimit<T>(promise: Promise<T>, limitMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${limitMs} ms`)), limitMs);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

function waitForReady(child: ChildProcess, role: ServerRole): Promise<{ url: string; readyAt: number }> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ChildMessage): void => {
      if (message.type === 'ready') resolve({ url: message.url, readyAt: performance.now() });
      if (message.type === 'failed') reject(new Error(`the ${role} server failed to start:\n${message.message}`));
    };
    child.on('message', onMessage);
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`the ${role} server exited before it was ready (${signal ?? code})`)));
  });
}

function queryUsage(child: ChildProcess, role: ServerRole): Promise<ProcessUsage> {
  const id = nextQueryId++;
  const reply = new Promise<ProcessUsage>((resolve, reject) => {
    const onMessage = (message: ChildMessage): void => {
      if (message.type !== 'usage' || message.id !== id) return;
      child.off('message', onMessage);
      const { type: _type, id: _id, ...usage } = message;
      resolve(usage);
    };
    child.on('message', onMessage);
    const query: UsageQuery = { type: 'usage', id };
    if (!child.connected) reject(new Error(`the ${role} server is no longer connected`));
    else child.send(query);
  });
  return withTimeLimit(reply, USAGE_LIMIT_MS, `the ${role} server's usage report`);
}

/**
 * The Node flags `npm start` runs the gateway with (package.json; a unit test keeps the two equal),
 * so that the bench measures the gateway as it is started: a young generation capped at 16 MB per
 * semi-space (V8's default let it grow to 32 MB under load: ~60 MB more RSS for no measurable CPU),
 * collected by the main thread alone (`--no-parallel-scavenge`: with few survivors a scavenge is
 * short on one thread, and it never waits for helper threads that the machine has not scheduled;
 * docs/performance.md, "Fourth pass").
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16', '--no-parallel-scavenge'];

/**
 * Spawns `servers.js <role>` under this same Node binary with an IPC channel; `ready` resolves once
 * it listens. `environment` is added to this process's environment (NODE_ENV is production).
 * `script` is this checkout's servers.js unless another checkout's (speaking the same protocol) is given.
 */
export function spawnServer(role: ServerRole, environment: Record<string, string> = {}, script = SERVERS_SCRIPT): SpawnedServer {
  // BENCH_CPU_PROF=<dir>: profile the gateway children (`node --cpu-prof`), for finding where time goes.
  const profile = role === 'gateway' && process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  const flags = role === 'gateway' ? GATEWAY_NODE_FLAGS : [];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...flags, ...profile, script, role], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...environment, NODE_ENV: 'production' },
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  const ready = withTimeLimit(waitForReady(child, role), READY_LIMIT_MS, `starting the ${role} server`).then(({ url, readyAt }): ServerChild => {
    const pid = child.pid ?? -1;
    const usage = () => queryUsage(child, role);
    return {
      role,
      url,
      pid,
      spawnedAt,
      readyAt,
      usage,
      rss: async () => readRssBytes(pid) ?? (await usage()).rssBytes,
      stop: () => stopOne(child),
    };
  });
  return { spawnedAt, ready };
}

/** Spawns `servers.js <role>` (see `spawnServer`) and resolves once it listens. */
export function startServer(role: ServerRole, environment: Record<string, string> = {}, script = SERVERS_SCRIPT): Promise<ServerChild> {
  return spawnServer(role, environment, script).ready;
}

function stopOne(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, STOP_LIMIT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Stops every server this process started: SIGTERM, then SIGKILL after a few seconds. */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...started].map(stopOne));
}

/** Last resort for `process.on('exit')`: kills whatever is still running, synchronously. */
export function killAllServers(): void {
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
