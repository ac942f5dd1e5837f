// `npm run bench:redis-cluster` (bench/redis-cluster.ts): what a Redis Cluster costs the gateway
// against one Redis server (issue 39: at most 10 % more CPU per request). Two gateways run in this
// process, one on a private `redis-server`, one on a private six-node cluster (three primaries, three
// replicas; test/redis-cluster-harness.ts), both on a loopback mock of OpenAI, each with two virtual
// keys: a plain one, and one with a budget and per-minute limit (admission and settlement are one
// EVAL each either way). The same chat request is sent one at a time over keep-alive, in
// alternating rounds, and compared (median of the rounds): the main thread's CPU per request
// (gateway, client and mock share it; the log store's worker is left out), the whole process's, the
// Redis servers' own (utime + stime of every redis-server, from /proc, summed over the rounds), and
// wall time per request. Prints figures and PASS/MISS against the 10 % (a MISS does not fail the run).
//   npm run build && npx node dist/bench/redis-cluster.js
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';
import { startRedisCluster } from '../test/redis-cluster-harness.js';
import { cli, type RedisProcess, startRedis, stopAll } from '../test/redis-processes.js';
import { median } from './stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const GOAL_PERCENT = 10;
const ACCOUNT_KEY = 'gw-bench-redis-cluster-0123456789';
const answer = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Dear customer, your order arrives next Tuesday.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 41, completion_tokens: 12, total_tokens: 53 },
});
const BODY = JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Please draft a short reply to the customer who wrote about order 4471.' }] });

/** CPU ticks (1/100 s, user + system) of the processes `pids`, from /proc. */
function ticksOf(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += Number(fields[11]) + Number(fields[12]);
    } catch {
      // no /proc: the Redis figure is not reported
    }
  }
  return total;
}

interface Subject {
  readonly label: string;
  readonly url: string;
  readonly keys: { plain: string; limited: string };
  readonly redisPids: number[];
  close(): Promise<void>;
}

async function main(): Promise<void> {
  const mock = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(answer));
  });
  await new Promise<void>((resolve) => mock.listen(0, '127.0.0.1', resolve));
  const mockUrl = `http://127.0.0.1:${(mock.address() as AddressInfo).port}/v1`;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  const singleDir = mkdtempSync(join(tmpdir(), 'bench-redis-single-'));
  const single: RedisProcess = await startRedis(singleDir, 'single', () => []);
  const cluster = await startRedisCluster();
  const masterKey = randomBytes(32).toString('hex');

  const subject = async (label: string, redisUrl: string, redisPids: number[]): Promise<Subject> => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-redis-cluster-'));
    const gateway = createGateway(
      { providers: [openai()] },
      {
        environment: { GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_DATA_DIR: dataDir, LOG_LEVEL: 'info', REDIS_URL: redisUrl, GATEWAY_REDIS_PREFIX: `bench-rc-${process.pid}`, GATEWAY_MASTER_KEY: masterKey },
        logDestination: { write() {} },
      },
    );
    const { url } = await gateway.listen(0, '127.0.0.1');
    const create = async (name: string, limits?: Record<string, number>) => {
      const response = await fetch(`${url}/admin/virtual-keys`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name, provider: 'openai', provider_key: 'sk-bench', custom_host: mockUrl, ...(limits ? { limits } : {}) }),
      });
      if (response.status !== 201) throw new Error(`${label}: creating a key answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { key: string }).key;
    };
    const keys = { plain: await create('plain'), limited: await create('limited', { budget_usd: 1_000_000, requests_per_minute: 100_000_000 }) };
    return {
      label,
      url,
      keys,
      redisPids,
      async close() {
        await gateway.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  };

  const post = (url: string, key: string) =>
    new Promise<void>((resolve, reject) => {
      const request = httpRequest(`${url}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, 'content-length': String(Buffer.byteLength(BODY)) } }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`answered ${response.statusCode}`));
        response.resume();
        response.once('end', resolve);
      });
      request.once('error', reject);
      request.end(BODY);
    });

  const subjects = [
    await subject('one Redis server', `redis://127.0.0.1:${single.port}`, [single.child.pid!]),
    await subject('Redis Cluster (3 primaries + 3 replicas)', cluster.url, cluster.nodes.map((node) => node.child.pid!)),
  ];
  // Every admission counter is in one slot (docs/deployment.md): its primary carries admission.
  const countersPrimary = await cluster.primaryOf(`{bench-rc-${process.pid}:counters}`);
  const evalStats = async () => {
    const line = (await cli(countersPrimary.port, ['INFO', 'commandstats'])).split('\n').find((text) => text.startsWith('cmdstat_eval:')) ?? '';
    return { calls: Number(/calls=(\d+)/.exec(line)?.[1] ?? 0), usec: Number(/usec=(\d+)/.exec(line)?.[1] ?? 0) };
  };
  try {
    const lines: string[] = [];
    let worst = Number.NEGATIVE_INFINITY;
    for (const variant of ['plain', 'limited'] as const) {
      for (const target of subjects) for (let index = 0; index < 1000; index++) await post(target.url, target.keys[variant]);
      const figures = subjects.map(() => ({ thread: [] as number[], process: [] as number[], wall: [] as number[], redisTicks: 0, requests: 0 }));
      let primaryTicks = 0;
      const evalsBefore = await evalStats();
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate the order so drift (GC, JIT, the log store, the host) falls on both sides.
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const index of order) {
          const target = subjects[index]!;
          const figure = figures[index]!;
          const redisBefore = ticksOf(target.redisPids);
          const primaryBefore = ticksOf([countersPrimary.child.pid!]);
          const threadBefore = process.threadCpuUsage();
          const processBefore = process.cpuUsage();
          const started = performance.now();
          for (let count = 0; count < REQUESTS; count++) await post(target.url, target.keys[variant]);
          const wall = performance.now() - started;
          const thread = process.threadCpuUsage(threadBefore);
          const all = process.cpuUsage(processBefore);
          figure.thread.push((thread.user + thread.system) / REQUESTS);
          figure.process.push((all.user + all.system) / REQUESTS);
          figure.wall.push((wall * 1000) / REQUESTS);
          figure.redisTicks += ticksOf(target.redisPids) - redisBefore;
          if (index === 1) primaryTicks += ticksOf([countersPrimary.child.pid!]) - primaryBefore;
          figure.requests += REQUESTS;
        }
      }
      const [one, many] = figures.map((figure) => ({
        thread: median(figure.thread),
        process: median(figure.process),
        wall: median(figure.wall),
        redis: (figure.redisTicks * 10_000) / figure.requests,
      }));
      const extra = ((many!.thread - one!.thread) / one!.thread) * 100;
      worst = Math.max(worst, extra);
      lines.push(`  ${variant === 'plain' ? 'plain virtual key' : 'virtual key + budget + rpm'}`);
      for (const [index, figure] of [one!, many!].entries()) {
        lines.push(
          `    ${subjects[index]!.label.padEnd(42)} main thread ${figure.thread.toFixed(1).padStart(6)} µs, process ${figure.process.toFixed(1).padStart(6)} µs, Redis servers ${figure.redis.toFixed(1).padStart(5)} µs, wall ${figure.wall.toFixed(0).padStart(5)} µs per request`,
        );
      }
      lines.push(`    cluster − one server: ${(many!.thread - one!.thread).toFixed(1)} µs main-thread CPU per request (${extra >= 0 ? '+' : ''}${extra.toFixed(1)} %)`);
      const evals = await evalStats();
      const requests = figures[1]!.requests;
      const primaryUs = (primaryTicks * 10_000) / requests;
      lines.push(
        `    the counters' primary: ${primaryUs.toFixed(1)} µs CPU per request (${((evals.calls - evalsBefore.calls) / requests).toFixed(2)} EVAL per request, ${((evals.usec - evalsBefore.usec) / Math.max(1, evals.calls - evalsBefore.calls)).toFixed(1)} µs each inside Redis): one core of that shard admits at most ~${Math.round(1e6 / primaryUs).toLocaleString('en')} requests/s`,
      );
    }
    process.stdout.write(`Redis Cluster vs one Redis server, the virtual-key chat path: CPU per request (median of ${ROUNDS} alternating rounds of ${REQUESTS}; Redis CPU summed over the rounds, 10 ms ticks)\n`);
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(`  goal: the cluster adds at most ${GOAL_PERCENT} % main-thread CPU per request: ${worst <= GOAL_PERCENT ? 'PASS' : 'MISS'} (${worst.toFixed(1)} %)\n`);
  } finally {
    agent.destroy();
    for (const target of subjects) await target.close();
    mock.close();
    await cluster.stop();
    await stopAll([single], singleDir);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/redis-cluster failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
