// `npm run bench:workers`: throughput of `npm start` with GATEWAY_WORKERS=1 and =2 (embedded
// store), and of two single-process instances sharing Redis and PostgreSQL, against the floor
// proxy, in alternating rounds of one run. Prints figures and ratios; asserts nothing about speed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVirtualKey } from './admin.js';
import { GATEWAY_NODE_FLAGS, startServer, stopAllServers, type ServerChild } from './children.js';
import { measureLoad, type LoadFigures, type LoadRequest } from './load.js';
import { CHILD_ENVIRONMENT } from './protocol.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 50;
const ACCOUNT_KEY = 'gw-bench-workers-account-key-0123456789';
const MAIN = fileURLToPath(new URL('../core/main.js', import.meta.url));
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello in one short sentence.' }] });

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Started {
  readonly url: string;
  readonly child: ChildProcess;
  readonly dataDir: string;
}

/** `node dist/core/main.js start` as `npm start` runs it, ready once it answers /health. */
async function startGateway(environment: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-workers-'));
  const child = spawn(process.execPath, [...GATEWAY_NODE_FLAGS, MAIN, 'start'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'production', GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_DATA_DIR: dataDir, ...environment },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/health`).then((answer) => answer.ok, () => false);
    if (ok && (environment.GATEWAY_WORKERS ?? '1') === '1') break;
    // Several workers: ready once the last one answers (they start one after another).
    if (ok && (await fetch(`${url}/health`, { headers: { connection: 'close' } }).then(async (answer) => ((await answer.json()) as { worker?: number }).worker, () => 0)) === Number(environment.GATEWAY_WORKERS)) break;
    if (Date.now() > deadline) throw new Error('the gateway did not start within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, child, dataDir };
}

async function stopGateway(started: Started): Promise<void> {
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await exited;
  rmSync(started.dataDir, { recursive: true, force: true });
}

/** CPU seconds (user + system) of a process and its children, read from /proc. */
function treeCpuSeconds(pid: number): number {
  const ticks = (id: number): number => {
    try {
      const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return 0;
    }
  };
  let total = ticks(pid);
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no /proc: CPU is not reported
  }
  for (const child of children) total += ticks(child);
  return total / 100;
}

interface Case {
  readonly label: string;
  run(mockUrl: string): Promise<{ figures: LoadFigures; cpuPerRequestUs: number }>;
}

async function loadOn(targets: Array<{ url: string; key: string; pid?: number }>, label: string): Promise<{ figures: LoadFigures; cpuPerRequestUs: number }> {
  const cpuBefore = targets.reduce((sum, target) => sum + (target.pid ? treeCpuSeconds(target.pid) : 0), 0);
  const all = await Promise.all(
    targets.map((target) =>
      measureLoad(
        { label, baseUrl: target.url, connections: Math.round(CONNECTIONS / targets.length), durationSeconds: SECONDS, warmUpSeconds: 2, rssSampleMs: 1000 },
        { path: '/v1/chat/completions', headers: { 'content-type': 'application/json', 'x-gateway-api-key': target.key }, body } satisfies LoadRequest,
      ),
    ),
  );
  const cpuAfter = targets.reduce((sum, target) => sum + (target.pid ? treeCpuSeconds(target.pid) : 0), 0);
  const figures = { ...all[0], requestsPerSecond: all.reduce((sum, one) => sum + one.requestsPerSecond, 0), completed: all.reduce((sum, one) => sum + one.completed, 0), non2xx: all.reduce((sum, one) => sum + one.non2xx, 0) };
  // CPU includes the 2 s warm-up: the per-request figure divides by warm-up requests too (estimated at the measured rate).
  const requests = figures.requestsPerSecond * (SECONDS + 2);
  return { figures, cpuPerRequestUs: ((cpuAfter - cpuBefore) * 1e6) / requests };
}

function gatewayCase(label: string, instances: number, environment: Record<string, string>): Case {
  return {
    label,
    async run(mockUrl) {
      const started: Started[] = [];
      try {
        // One after another: the first creates the shared stores' tables.
        for (let index = 0; index < instances; index++) started.push(await startGateway(environment));
        const keys: string[] = [];
        for (const [index, gateway] of started.entries()) keys.push(await createVirtualKey(gateway.url, ACCOUNT_KEY, { name: `bench-workers-${Date.now()}-${index}`, mockUrl }));
        return await loadOn(started.map((gateway, index) => ({ url: gateway.url, key: keys[index], pid: gateway.child.pid })), label);
      } finally {
        await Promise.all(started.map(stopGateway));
      }
    },
  };
}

/** True when something accepts a TCP connection at the URL's host and port (Redis, PostgreSQL). */
function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

async function main(): Promise<void> {
  const mock: ServerChild = await startServer('mock', { [CHILD_ENVIRONMENT.streamChunks]: '1', [CHILD_ENVIRONMENT.streamGapMs]: '0' });
  const floor: ServerChild = await startServer('floor', { [CHILD_ENVIRONMENT.upstreamUrl]: mock.url });
  // Instances sharing Redis share the vault's master key too.
  const shared = { REDIS_URL, DATABASE_URL, GATEWAY_REDIS_PREFIX: `bench-workers-${process.pid}:`, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
  const cases: Case[] = [
    { label: 'floor proxy', run: () => loadOn([{ url: floor.url, key: 'unused', pid: floor.pid }], 'floor') },
    gatewayCase('gateway, 1 process (embedded)', 1, {}),
    gatewayCase('gateway, GATEWAY_WORKERS=2 (embedded)', 1, { GATEWAY_WORKERS: '2' }),
  ];
  if ((await reachable(REDIS_URL, 6379)) && (await reachable(DATABASE_URL, 5432))) cases.push(gatewayCase('2 instances (Redis + PostgreSQL)', 2, shared));
  else process.stderr.write(`bench: Redis (${REDIS_URL}) or PostgreSQL not reachable: the two-instance case is skipped\n`);
  const results = new Map<string, Array<{ rps: number; ratio: number; cpu: number; p99: number; non2xx: number }>>();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      let floorRps = Number.NaN;
      for (const current of cases) {
        process.stderr.write(`bench: round ${round}/${ROUNDS}: ${current.label}\n`);
        const { figures, cpuPerRequestUs } = await current.run(mock.url);
        if (current.label === 'floor proxy') floorRps = figures.requestsPerSecond;
        const list = results.get(current.label) ?? [];
        list.push({ rps: figures.requestsPerSecond, ratio: figures.requestsPerSecond / floorRps, cpu: cpuPerRequestUs, p99: figures.p99Ms, non2xx: figures.non2xx });
        results.set(current.label, list);
      }
    }
  } finally {
    await stopAllServers();
  }
  const range = (values: number[], digits = 0) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
  console.log(`\nThroughput at c=${CONNECTIONS}, ${SECONDS} s per load, ${ROUNDS} alternating rounds (virtual key with limits, durable log; the floor forwards without a key):`);
  console.log('| target | req/s | of the floor | CPU µs/request (all processes) | p99 ms | non-2xx |');
  console.log('|---|---|---|---|---|---|');
  for (const [label, list] of results) {
    console.log(`| ${label} | ${range(list.map((one) => one.rps))} | ${range(list.map((one) => one.ratio * 100), 1)} % | ${range(list.map((one) => one.cpu))} | ${range(list.map((one) => one.p99))} | ${list.reduce((sum, one) => sum + one.non2xx, 0)} |`);
  }
  const one = results.get('gateway, 1 process (embedded)')!;
  const two = results.get('gateway, GATEWAY_WORKERS=2 (embedded)')!;
  console.log(`\nscaling, 2 workers over 1 process: ${range(two.map((entry, index) => entry.rps / one[index].rps), 2)}×`);
}

await main();
