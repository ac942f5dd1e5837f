// `npm run bench`: the gateway against a do-nothing proxy (the floor), both in front of a mock
// upstream, all on loopback in separate processes; autocannon runs here. Prints figures only:
// exits non-zero when the harness failed (including any non-2xx answer), never on a slow result.
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { killAllServers, type ServerChild, startServer, stopAllServers } from './children.js';
import { postOnce, type Target } from './client.js';
import { type LoadFigures, type LoadRequest, measureLoad } from './load.js';
import { CHILD_ENVIRONMENT } from './protocol.js';
import { comparisonLine, loadProblems, loadTable, streamTable } from './report.js';
import { compareStreams } from './stream-test.js';

interface Settings {
  durationSeconds: number;
  warmUpSeconds: number;
  connections: number;
  rate: number;
  rateConnections: number;
  streamRuns: number;
  streamChunks: number;
  streamGapMs: number;
}

const CHAT_PATH = '/v1/chat/completions';
const REQUEST_LIMIT_MS = 10_000;

function integerSetting(name: string, fallback: number, minimum: number, maximum: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < minimum || value > maximum) {
    throw new Error(`${name} must be an integer from ${minimum} to ${maximum}, got ${raw}`);
  }
  return value;
}

function readSettings(): Settings {
  return {
    durationSeconds: integerSetting('BENCH_DURATION', 10, 1, 120),
    warmUpSeconds: integerSetting('BENCH_WARMUP', 5, 0, 60),
    connections: integerSetting('BENCH_CONNECTIONS', 50, 1, 500),
    rate: integerSetting('BENCH_RATE', 1000, 1, 50_000),
    rateConnections: integerSetting('BENCH_RATE_CONNECTIONS', 10, 1, 500),
    streamRuns: integerSetting('BENCH_STREAM_RUNS', 20, 1, 200),
    streamChunks: integerSetting('BENCH_STREAM_CHUNKS', 50, 1, 1000),
    streamGapMs: integerSetting('BENCH_STREAM_GAP_MS', 20, 0, 1000),
  };
}

/** An upper bound on the whole run, after which it is abandoned as hung. */
function runBudgetMs(settings: Settings): number {
  const loads = 5 * (settings.durationSeconds + settings.warmUpSeconds) * 1000;
  const oneStream = settings.streamChunks * settings.streamGapMs + 1000;
  const streams = 3 * (settings.streamRuns + 2) * oneStream;
  return loads + streams + 120_000;
}

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

function chatHeaders(apiKey: string, mockUrl: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    authorization: 'Bearer sk-bench',
    'x-gateway-api-key': apiKey,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': `${mockUrl}/v1`,
  };
}

function chatBody(stream: boolean): string {
  const body: Record<string, unknown> = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] };
  if (stream) body.stream = true;
  return JSON.stringify(body);
}

async function startServers(settings: Settings, apiKey: string): Promise<{ mock: ServerChild; floor: ServerChild; gateway: ServerChild }> {
  const mock = await startServer('mock', {
    [CHILD_ENVIRONMENT.streamChunks]: String(settings.streamChunks),
    [CHILD_ENVIRONMENT.streamGapMs]: String(settings.streamGapMs),
  });
  const floor = await startServer('floor', { [CHILD_ENVIRONMENT.upstreamUrl]: mock.url });
  const gateway = await startServer('gateway', { [CHILD_ENVIRONMENT.gatewayApiKey]: apiKey });
  return { mock, floor, gateway };
}

/** One plain request through each target must come back 200 with a chat completion before loading. */
async function preflight(targets: ReadonlyArray<{ label: string; target: Target }>): Promise<void> {
  for (const { label, target } of targets) {
    const answer = await postOnce(target, REQUEST_LIMIT_MS);
    const looksRight = answer.status === 200 && Array.isArray((JSON.parse(answer.body) as { choices?: unknown }).choices);
    if (!looksRight) throw new Error(`pre-flight request to ${label} answered ${answer.status}: ${answer.body.slice(0, 500)}`);
  }
}

async function runLoads(settings: Settings, servers: { mock: ServerChild; floor: ServerChild; gateway: ServerChild }, request: LoadRequest) {
  const common = { durationSeconds: settings.durationSeconds, warmUpSeconds: settings.warmUpSeconds };
  const maximum = { ...common, connections: settings.connections };
  const fixed = { ...common, connections: settings.rateConnections, overallRate: settings.rate };
  const rateLabel = `${settings.rate} req/s, c=${settings.rateConnections}`;
  const plans = [
    { plan: { ...maximum, label: `direct to mock, c=${settings.connections}`, baseUrl: servers.mock.url }, proxy: undefined },
    { plan: { ...maximum, label: `floor, c=${settings.connections}`, baseUrl: servers.floor.url }, proxy: servers.floor },
    { plan: { ...maximum, label: `gateway, c=${settings.connections}`, baseUrl: servers.gateway.url }, proxy: servers.gateway },
    { plan: { ...fixed, label: `floor, ${rateLabel}`, baseUrl: servers.floor.url }, proxy: servers.floor },
    { plan: { ...fixed, label: `gateway, ${rateLabel}`, baseUrl: servers.gateway.url }, proxy: servers.gateway },
  ];
  const figures: LoadFigures[] = [];
  for (const { plan, proxy } of plans) {
    progress(`${plan.label}: ${plan.warmUpSeconds} s warm-up + ${plan.durationSeconds} s`);
    figures.push(await measureLoad(plan, request, proxy));
  }
  return { direct: figures[0], floorMaximum: figures[1], gatewayMaximum: figures[2], floorFixed: figures[3], gatewayFixed: figures[4], all: figures };
}

function describeMachine(settings: Settings, loadBefore: number): string {
  const model = cpus()[0]?.model ?? 'unknown CPU';
  const load = `1-minute load average ${loadBefore.toFixed(2)} before the run, ${loadavg()[0].toFixed(2)} after`;
  return (
    `Node ${process.version}, ${availableParallelism()} cores (${model}), ${load}\n` +
    `loads: ${settings.warmUpSeconds} s warm-up + ${settings.durationSeconds} s each; ` +
    `streams: ${settings.streamChunks} chunks ${settings.streamGapMs} ms apart, ${settings.streamRuns} runs per target`
  );
}

async function main(): Promise<number> {
  process.exitCode = 1; // should the run ever stop without reaching the end, it failed
  const settings = readSettings();
  const loadBefore = loadavg()[0];
  const budget = setTimeout(() => {
    progress(`the run took longer than its ${runBudgetMs(settings)} ms budget: abandoned`);
    void stopAllServers().finally(() => process.exit(1));
  }, runBudgetMs(settings));
  budget.unref();

  const apiKey = `gw-bench-${randomBytes(18).toString('base64url')}`;
  progress('starting the mock upstream, the floor proxy and the gateway');
  const servers = await startServers(settings, apiKey);
  const headers = chatHeaders(apiKey, servers.mock.url);
  const plainTarget = (url: string): Target => ({ url: `${url}${CHAT_PATH}`, headers, body: chatBody(false), agent: new Agent({ keepAlive: true }) });
  await preflight([
    { label: 'the mock', target: plainTarget(servers.mock.url) },
    { label: 'the floor', target: plainTarget(servers.floor.url) },
    { label: 'the gateway', target: plainTarget(servers.gateway.url) },
  ]);

  const loads = await runLoads(settings, servers, { path: CHAT_PATH, headers, body: chatBody(false) });

  progress(`streams: ${settings.streamRuns} runs each, direct, through the floor and through the gateway, in turn`);
  const streamTarget = (url: string): Target => ({ url: `${url}${CHAT_PATH}`, headers, body: chatBody(true), agent: new Agent({ keepAlive: true, maxSockets: 1 }) });
  const [directStream, floorStream, gatewayStream] = await compareStreams(
    [
      { label: 'direct', target: streamTarget(servers.mock.url) },
      { label: 'floor', target: streamTarget(servers.floor.url) },
      { label: 'gateway', target: streamTarget(servers.gateway.url) },
    ],
    { runs: settings.streamRuns, expectedChunks: settings.streamChunks, limitMs: settings.streamChunks * settings.streamGapMs + REQUEST_LIMIT_MS },
  );
  const streams = [directStream, floorStream, gatewayStream];

  const lines = [
    '',
    describeMachine(settings, loadBefore),
    '',
    loadTable(loads.all),
    '',
    comparisonLine(`Max throughput, c=${settings.connections}`, loads.floorMaximum, loads.gatewayMaximum),
    comparisonLine(`Fixed ${settings.rate} req/s, c=${settings.rateConnections}`, loads.floorFixed, loads.gatewayFixed),
    '',
    `Stream timings in ms, measured by the client from sending the request (${settings.streamChunks} chunks, ${settings.streamGapMs} ms apart):`,
    streamTable(streams, [
      [gatewayStream, directStream],
      [gatewayStream, floorStream],
    ]),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  const problems = [
    ...loadProblems(loads.all),
    ...streams.flatMap((summary) => summary.problems.map((problem) => `${summary.label} stream: ${problem}`)),
  ];
  if (problems.length === 0) return 0;
  process.stdout.write(`HARNESS PROBLEM: some figures above are not valid:\n${problems.map((problem) => `  ${problem}`).join('\n')}\n`);
  return 1;
}

process.on('exit', killAllServers);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // SIGTERM first so that the children clean up (the gateway removes its data directory).
    void stopAllServers().finally(() => process.exit(130));
  });
}

main()
  .then(
    (code) => code,
    (error: unknown) => {
      process.stderr.write(`bench: harness failed: ${(error as Error)?.stack ?? String(error)}\n`);
      return 1;
    },
  )
  .then(async (code) => {
    await stopAllServers();
    process.exit(code);
  });
