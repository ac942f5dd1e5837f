/**
 * Where the full pipeline's CPU and memory go: an in-process gateway (default config, or a virtual
 * key with limits, or that plus the bench's three-guardrail policy; the embedded log store on) in
 * front of the bench's mock upstream in a child process, loaded by autocannon in another child
 * process. Prints req/s, the process's and the main thread's CPU µs per request, CPU per thread
 * (from /proc), peak RSS and event-loop delay.
 *
 *   npm run build && npx node dist/bench/pipeline-profile.js [account|vk|guard|route|floor]
 *   (route: the account key and an inline 2-target fallback route whose first target answers, as bench/run.ts loads it;
 *   floor: the bench's bare proxy instead of the gateway, in the same harness, for its allocation and CPU per request)
 *   Run with the flags `npm start` gives the gateway (bench/children.ts GATEWAY_NODE_FLAGS) to measure what it runs with.
 *   npx node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/pipeline-profile.js vk   (then bench/stage-breakdown.ts)
 *
 * Settings: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, 3), BENCH_CONNECTIONS (50), BENCH_RATE
 * (req/s; default as fast as possible), BENCH_MEMORY_EVERY (s: print memory periodically),
 * BENCH_HEAP_SNAPSHOTS (a directory: snapshots after the warm-up and after the load),
 * BENCH_ALLOCATIONS (a file: a sampling allocation profile of the load; with BENCH_PROMOTED=1 only what
 * survived the young generation; the allocated KB per request is printed), LOG_LEVEL, GATEWAY_LOG_BODIES,
 * GATEWAY_LOG_MAX_MB (a small log cap puts retention to work within the run).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';
import { createVirtualKey } from './admin.js';
import { startServer, stopAllServers } from './children.js';
import { createFloorProxy } from './floor-proxy.js';
import { benchPolicies } from './policies.js';

const mode = process.argv[2] ?? 'vk';

/** Bytes a sampling heap profile attributes to a node and every node under it. */
function sampledBytes(node: { selfSize: number; children: Array<{ selfSize: number; children: unknown[] }> }): number {
  let total = node.selfSize;
  for (const child of node.children) total += sampledBytes(child as typeof node);
  return total;
}

/** CPU time (ms) of each thread of this process by thread name, from /proc (Linux; empty elsewhere). */
function threadCpu(): Map<string, number> {
  const byName = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return byName;
  }
  for (const task of tasks) {
    try {
      const name = readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim();
      // Fields after the parenthesised name: utime and stime are the 12th and 13th (clock ticks, 100 Hz).
      const fields = readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1].split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}
const seconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** A fixed overall rate (req/s) instead of as fast as possible. */
const rate = process.env.BENCH_RATE;
const accountKey = 'gw-bench-key-0123456789abcdef';
const mock = await startServer('mock', { BENCH_STREAM_CHUNKS: '5', BENCH_STREAM_GAP_MS: '1' });
const dataDir = mkdtempSync(join(tmpdir(), 'pipeline-profile-'));
/** What is loaded: the gateway, or (mode `floor`) the bare proxy the bench compares it with. */
interface Served {
  url: string;
  /** Log entries stored (after `flush`), or `-` for the floor. */
  logged(): Promise<number | string>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

async function serveGateway(): Promise<Served> {
  const gateway = createGateway(
    {
      providers: [openai()],
      policies: benchPolicies(),
    },
    {
      environment: { NODE_ENV: 'production', GATEWAY_API_KEY: accountKey, GATEWAY_DATA_DIR: dataDir, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', GATEWAY_LOG_BODIES: process.env.GATEWAY_LOG_BODIES, GATEWAY_LOG_SEARCH: process.env.GATEWAY_LOG_SEARCH, GATEWAY_LOG_WRITER_NICE: process.env.GATEWAY_LOG_WRITER_NICE, GATEWAY_LOG_MAX_MB: process.env.GATEWAY_LOG_MAX_MB },
      logDestination: pino.destination({ dest: '/dev/null', sync: false }),
    },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  return { url, logged: () => gateway.logStore.count(), flush: () => gateway.flushLogs(), close: () => gateway.close() };
}

async function serveFloor(): Promise<Served> {
  const floor = createFloorProxy(mock.url);
  await new Promise<void>((resolve) => floor.server.listen(0, '127.0.0.1', resolve));
  const { port } = floor.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    logged: async () => '-',
    flush: async () => {},
    close: async () => {
      floor.server.closeAllConnections();
      await new Promise<void>((resolve) => floor.server.close(() => resolve()));
      await floor.close();
    },
  };
}

const served = mode === 'floor' ? await serveFloor() : await serveGateway();
const { url } = served;

const inlineTarget = (name: string) => ({ name, provider: 'openai', custom_host: `${mock.url}/v1` });
const headers: Record<string, string> =
  mode === 'account'
    ? { 'x-gateway-api-key': accountKey, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1`, authorization: 'Bearer sk-bench' }
    : mode === 'floor'
      ? { authorization: 'Bearer sk-bench' }
      : mode === 'route'
      ? { 'x-gateway-api-key': accountKey, authorization: 'Bearer sk-bench', 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: process.env.BENCH_ROUTE_TARGETS === '1' ? [inlineTarget('first')] : [inlineTarget('first'), inlineTarget('second')] }) }
      : { 'x-gateway-api-key': await createVirtualKey(url, accountKey, { name: `bench-${mode}`, mockUrl: mock.url, ...(mode === 'guard' ? { guardrailPolicy: 'three' } : {}) }) };
headers['content-type'] = 'application/json';
const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Please summarise the notes from the weekly planning meeting and send them to ana.lopez@example.com, keeping the action items and owners in a short list at the end.' }],
});

const autocannonBin = join(createRequire(import.meta.url).resolve('autocannon'), '..', 'autocannon.js');
function load(durationSeconds: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const args = [autocannonBin, '-j', '-c', String(connections), '-d', String(durationSeconds), '-m', 'POST', '-b', body, ...(rate ? ['-R', rate] : [])];
    for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
    const child = spawn(process.execPath, [...args, `${url}/v1/chat/completions`], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    child.stdout.on('data', (part: Buffer) => (text += part));
    child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`autocannon exited ${code}`))));
  });
}
await load(Number(process.env.BENCH_WARMUP ?? 3));
// BENCH_HEAP_SNAPSHOTS=<dir>: heap snapshots after the warm-up and after the load, to compare.
const snapshots = process.env.BENCH_HEAP_SNAPSHOTS;
if (snapshots) writeHeapSnapshot(join(snapshots, 'before.heapsnapshot'));
// BENCH_ALLOCATIONS=<file>: a sampling profile of every allocation during the load (objects the
// young-generation GC collected included), to see what the request path allocates.
const allocations = process.env.BENCH_ALLOCATIONS ? new Session() : undefined;
if (allocations) {
  allocations.connect();
  // BENCH_PROMOTED=1: leave out what the young-generation GC collected, keeping what was promoted.
  const promotedOnly = process.env.BENCH_PROMOTED === '1';
  await allocations.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !promotedOnly });
}
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const cpu = process.cpuUsage();
const mainCpu = process.threadCpuUsage();
const threadsBefore = threadCpu();
let peakRss = 0;
let peakUsage: NodeJS.MemoryUsage | undefined;
// BENCH_MEMORY_EVERY=<s>: print the process's memory every so many seconds (what grows: heap or native).
const memoryEvery = Number(process.env.BENCH_MEMORY_EVERY ?? 0);
const memoryPrinter =
  memoryEvery > 0
    ? setInterval(() => {
        const usage = process.memoryUsage();
        const mb = (bytes: number) => Math.round(bytes / 1048576);
        process.stdout.write(`memory: rss ${mb(usage.rss)} MB, heap total ${mb(usage.heapTotal)}, used ${mb(usage.heapUsed)}, external ${mb(usage.external)}, array buffers ${mb(usage.arrayBuffers)}\n`);
      }, memoryEvery * 1000)
    : undefined;
const rssSampler = setInterval(() => {
  const usage = process.memoryUsage();
  if (usage.rss > peakRss) [peakRss, peakUsage] = [usage.rss, usage];
}, 100);
const started = performance.now();
const output = await load(seconds);
clearInterval(rssSampler);
clearInterval(memoryPrinter);
const used = process.cpuUsage(cpu);
const mainUsed = process.threadCpuUsage(mainCpu);
const threadsAfter = threadCpu();
const wall = performance.now() - started;
loopDelay.disable();
let allocatedBytes: number | undefined;
if (allocations) {
  const { profile } = await allocations.post('HeapProfiler.stopSampling');
  writeFileSync(process.env.BENCH_ALLOCATIONS!, JSON.stringify(profile));
  allocatedBytes = sampledBytes(profile.head);
  allocations.disconnect();
}
const result = JSON.parse(output) as { requests: { average: number; total: number }; non2xx: number; latency: { p50: number; p99: number } };
await served.flush();
if (snapshots) writeHeapSnapshot(join(snapshots, 'after.heapsnapshot'));
process.stdout.write(
  `${mode}: ${Math.round(result.requests.average)} req/s, ${result.requests.total} requests, non-2xx ${result.non2xx}, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
    `gateway CPU ${Math.round((used.user + used.system) / result.requests.total)} µs/request, main thread ${Math.round((mainUsed.user + mainUsed.system) / result.requests.total)} µs (${Math.round((100 * (used.user + used.system)) / 1000 / wall)} %), logged ${await served.logged()}; peak RSS ${Math.round(peakRss / 1048576)} MB (heap total ${Math.round((peakUsage?.heapTotal ?? 0) / 1048576)}, used ${Math.round((peakUsage?.heapUsed ?? 0) / 1048576)}, external ${Math.round((peakUsage?.external ?? 0) / 1048576)} MB); event-loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(2)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(2)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms\n`,
);
const perThread = [...threadsAfter]
  .map(([name, ms]) => [name, ms - (threadsBefore.get(name) ?? 0)] as const)
  .filter(([, ms]) => ms > 0)
  .map(([name, ms]) => `${name} ${Math.round((ms * 1000) / result.requests.total)}`);
if (allocatedBytes !== undefined) process.stdout.write(`allocated (sampled) ${(allocatedBytes / result.requests.total / 1024).toFixed(1)} KB per request\n`);
process.stdout.write(`CPU µs per request by thread (from /proc, 10 ms ticks): ${perThread.join(', ')}\n`);
await served.close();
await stopAllServers();
rmSync(dataDir, { recursive: true, force: true });
