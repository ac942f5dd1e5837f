// `npm run bench`: the gateway against a do-nothing proxy (the floor), both in front of a mock
// upstream, all on loopback in separate processes; the load tools run here. Prints one report
// ending with the issue-9 targets table (PASS/MISS). Exits non-zero only when the harness failed
// (a non-2xx answer, a broken stream, a crash), never on a missed target. Settings: bench/settings.ts.
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import { createVirtualKey, waitForLogEntry } from './admin.js';
import { killAllServers, SERVERS_SCRIPT, type ServerChild, startServer, stopAllServers } from './children.js';
import { postOnce, type Target } from './client.js';
import { BASELINE_SUFFIX, type BaselineMeasured, type Pair, roundOrder, splitInterleaved } from './compare.js';
import { type LoadFigures, type LoadRequest, measureLoad, measurePacedInterleaved, mergeLoadSlices, type PacedFigures } from './load.js';
import { holdOpenStreams, type OpenStreamsFigures } from './open-streams.js';
import { PacedLoader } from './paced-load.js';
import { CHILD_ENVIRONMENT } from './protocol.js';
import { pacedProblems } from './report.js';
import { readSettings, runBudgetMs, type Settings } from './settings.js';
import { runSoak, type SoakFigures } from './soak.js';
import { measureStartup, type StartupRun } from './startup.js';
import { watchStalls } from './stalls.js';
import { compareStreams, type StreamSummary } from './stream-test.js';
import { harnessProblems, type Measured, report } from './summary.js';

const CHAT_PATH = '/v1/chat/completions';
const REQUEST_LIMIT_MS = 10_000;
const STARTUP_LIMIT_MS = 15_000;

/** About 200 characters of an ordinary request with one e-mail address (so PII redaction has work). */
const USER_MESSAGE =
  'Please draft a short, friendly reply to the customer who wrote to jordan.miles@example.com about order 4471: ' +
  'apologise for the delay, confirm delivery next Tuesday and offer a 10% discount. Thank you.';

const LABELS = {
  direct: 'direct to mock',
  floor: 'floor',
  gatewayDefault: 'gateway (default config)',
  gatewayVk: 'gateway (virtual key + limits + log store)',
  gatewayGuarded: 'gateway (virtual key + 3 guardrails)',
  gatewayRouted: 'gateway (2-target fallback route, first answers)',
} as const;

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

function chatBody(stream: boolean): string {
  const body: Record<string, unknown> = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: USER_MESSAGE }] };
  if (stream) body.stream = true;
  return JSON.stringify(body);
}

/** The account key with the provider's headers, as a caller without a virtual key sends them. */
function accountHeaders(apiKey: string, mockUrl: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    authorization: 'Bearer sk-bench',
    'x-gateway-api-key': apiKey,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': `${mockUrl}/v1`,
  };
}

/** A virtual key alone: no Authorization, no provider header. */
function virtualKeyHeaders(virtualKey: string): Record<string, string> {
  return { 'content-type': 'application/json', 'x-gateway-api-key': virtualKey };
}

/** The account key and an inline fallback route of two targets, both the mock: the first one answers. */
function routedHeaders(apiKey: string, mockUrl: string): Record<string, string> {
  const target = (name: string) => ({ name, provider: 'openai', custom_host: `${mockUrl}/v1` });
  const route = { strategy: { mode: 'fallback' }, targets: [target('first'), target('second')] };
  return { 'content-type': 'application/json', 'x-gateway-api-key': apiKey, authorization: 'Bearer sk-bench', 'x-gateway-config': JSON.stringify(route) };
}

/** A target the loads hit: where, with which headers, and its server process (undefined: the mock itself). */
interface Endpoint {
  label: string;
  url: string;
  headers: Record<string, string>;
  process?: ServerChild;
  /** Served by the baseline checkout (BENCH_BASELINE). */
  baseline?: boolean;
}

function target(endpoint: Endpoint, stream: boolean, agent: Agent): Target {
  return { url: `${endpoint.url}${CHAT_PATH}`, headers: endpoint.headers, body: chatBody(stream), agent };
}

function request(endpoint: Endpoint): LoadRequest {
  return { path: CHAT_PATH, headers: endpoint.headers, body: chatBody(false) };
}

/** One plain request through each endpoint must come back 200 with a chat completion before loading. */
async function preflight(endpoints: readonly Endpoint[]): Promise<void> {
  for (const endpoint of endpoints) {
    const answer = await postOnce(target(endpoint, false, new Agent({ keepAlive: false })), REQUEST_LIMIT_MS);
    const looksRight = answer.status === 200 && Array.isArray((JSON.parse(answer.body) as { choices?: unknown }).choices);
    if (!looksRight) throw new Error(`pre-flight request to ${endpoint.label} answered ${answer.status}: ${answer.body.slice(0, 500)}`);
  }
}

/** The gateway variants, one process each but the routed one (the default-config process). */
interface Variants {
  gatewayDefault: Endpoint;
  gatewayVk: Endpoint;
  gatewayGuarded: Endpoint;
  /** The default-config gateway with an inline 2-target fallback route (both targets the mock: the first answers). */
  gatewayRouted: Endpoint;
}

interface Gateways extends Variants {
  mock: ServerChild;
  direct: Endpoint;
  floor: Endpoint;
  /** The same variants served by the baseline checkout (BENCH_BASELINE). */
  baseline?: Variants;
}

/**
 * One gateway process per variant (so that each one's CPU and RSS are its own), from `script`
 * (this checkout's servers.js or the baseline's): the default config called with the account key, a
 * virtual key with limits, and a virtual key whose policy runs three guardrails. The keys are
 * created through the admin HTTP API.
 */
async function startVariants(apiKey: string, mockUrl: string, script: string, baseline: boolean): Promise<Variants> {
  const accountKey = { [CHILD_ENVIRONMENT.gatewayApiKey]: apiKey };
  const [gatewayDefault, gatewayVk, gatewayGuarded] = await Promise.all([
    startServer('gateway', accountKey, script),
    startServer('gateway', accountKey, script),
    startServer('gateway', { ...accountKey, [CHILD_ENVIRONMENT.gatewayPolicies]: 'three' }, script),
  ]);
  const vk = await createVirtualKey(gatewayVk.url, apiKey, { name: 'bench', mockUrl });
  const guardedVk = await createVirtualKey(gatewayGuarded.url, apiKey, { name: 'bench-guarded', mockUrl, guardrailPolicy: 'three' });
  const headers = accountHeaders(apiKey, mockUrl);
  const label = (name: keyof Variants): string => `${LABELS[name]}${baseline ? BASELINE_SUFFIX : ''}`;
  return {
    gatewayDefault: { label: label('gatewayDefault'), url: gatewayDefault.url, headers, process: gatewayDefault, baseline },
    gatewayVk: { label: label('gatewayVk'), url: gatewayVk.url, headers: virtualKeyHeaders(vk), process: gatewayVk, baseline },
    gatewayGuarded: { label: label('gatewayGuarded'), url: gatewayGuarded.url, headers: virtualKeyHeaders(guardedVk), process: gatewayGuarded, baseline },
    gatewayRouted: { label: label('gatewayRouted'), url: gatewayDefault.url, headers: routedHeaders(apiKey, mockUrl), process: gatewayDefault, baseline },
  };
}

/** The mock, the floor, the gateway variants, and with BENCH_BASELINE the baseline checkout's variants too. */
async function startGateways(settings: Settings, apiKey: string): Promise<Gateways> {
  const mock = await startServer('mock', {
    [CHILD_ENVIRONMENT.streamChunks]: String(settings.streamChunks),
    [CHILD_ENVIRONMENT.streamGapMs]: String(settings.streamGapMs),
  });
  const [floor, variants, baseline] = await Promise.all([
    startServer('floor', { [CHILD_ENVIRONMENT.upstreamUrl]: mock.url }),
    startVariants(apiKey, mock.url, SERVERS_SCRIPT, false),
    settings.baseline ? startVariants(apiKey, mock.url, settings.baseline.serversScript, true) : undefined,
  ]);
  const headers = accountHeaders(apiKey, mock.url);
  return {
    mock,
    direct: { label: LABELS.direct, url: mock.url, headers },
    floor: { label: LABELS.floor, url: floor.url, headers, process: floor },
    ...variants,
    ...(baseline ? { baseline } : {}),
  };
}

/** The variants named, each followed by its baseline twin when there is a baseline. */
function withBaselines(gateways: Gateways, names: ReadonlyArray<keyof Variants>): Endpoint[] {
  return names.flatMap((name) => (gateways.baseline ? [gateways[name], gateways.baseline[name]] : [gateways[name]]));
}

/**
 * The virtual-key endpoint with a key of its own for one section: a key's per-minute window holds
 * its requests of the last 60 s, and each section should start from the same (empty) state rather
 * than inherit the one before's.
 */
async function withFreshKey(endpoint: Endpoint, apiKey: string, mockUrl: string, name: string): Promise<Endpoint> {
  return { ...endpoint, headers: virtualKeyHeaders(await createVirtualKey(endpoint.url, apiKey, { name, mockUrl })) };
}

/** Shows that the variants do what their labels say: the key was used, the log store written, the guardrails ran. */
async function checkVariants(variants: Variants, apiKey: string): Promise<void> {
  await waitForLogEntry(variants.gatewayVk.url, apiKey, (entry) => entry.caller_type === 'virtual-key' && entry.status === 200);
  const guarded = await waitForLogEntry(variants.gatewayGuarded.url, apiKey, (entry) => entry.caller_type === 'virtual-key' && entry.status === 200);
  const ran = new Set(guarded.guardrails.filter((verdict) => verdict.side === 'input').map((verdict) => verdict.guardrail));
  const missing = ['pii', 'length-bounds', 'regex'].filter((id) => !ran.has(id));
  if (missing.length > 0) throw new Error(`${variants.gatewayGuarded.label}: its log entry shows no verdict of ${missing.join(', ')}: ${JSON.stringify(guarded.guardrails)}`);
}

/**
 * The c=50 loads, in alternating rounds (`BENCH_THROUGHPUT_ROUNDS`): each target is warmed up in
 * the first round, then every round gives each target in turn a slice of `durationSeconds / rounds`.
 * The host's speed moves by up to 2x within minutes, so a share of the floor is taken between slices
 * seconds apart, round by round, rather than between loads a minute apart. Figures come in the
 * order of `endpoints`.
 */
async function runThroughput(settings: Settings, endpoints: readonly Endpoint[]): Promise<LoadFigures[]> {
  const rounds = settings.throughputRounds;
  const slices: LoadFigures[][] = endpoints.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const index of roundOrder(endpoints, round)) {
      const endpoint = endpoints[index];
      const label = `${endpoint.label}, c=${settings.connections}`;
      const warmUpSeconds = round === 0 ? settings.warmUpSeconds : 0;
      const durationSeconds = settings.durationSeconds / rounds;
      progress(`${label}: ${rounds > 1 ? `round ${round + 1} of ${rounds}, ` : ''}${warmUpSeconds > 0 ? `${warmUpSeconds} s warm-up + ` : ''}${Number(durationSeconds.toFixed(2))} s`);
      const plan = { label, baseUrl: endpoint.url, connections: settings.connections, durationSeconds, warmUpSeconds, rssSampleMs: settings.rssSampleMs };
      slices[index].push(await measureLoad(plan, request(endpoint), endpoint.process));
    }
  }
  return slices.map(mergeLoadSlices);
}

async function runPaced(settings: Settings, endpoints: readonly Endpoint[]): Promise<PacedFigures[]> {
  progress(
    `${settings.rate} req/s, c=${settings.rateConnections}: ${settings.warmUpSeconds} s warm-up each, then ${settings.pacedRounds} rounds of ` +
      `${settings.durationSeconds / settings.pacedRounds} s per target in turn (${settings.durationSeconds} s each in all)`,
  );
  return measurePacedInterleaved(
    endpoints.map((endpoint) => ({
      plan: {
        label: `${endpoint.label}, ${settings.rate} req/s, c=${settings.rateConnections}`,
        baseUrl: endpoint.url,
        connections: settings.rateConnections,
        ratePerSecond: settings.rate,
        durationSeconds: settings.durationSeconds,
        warmUpSeconds: settings.warmUpSeconds,
        rssSampleMs: settings.rssSampleMs,
      },
      request: request(endpoint),
      proxy: endpoint.process!,
    })),
    settings.pacedRounds,
    (round) => roundOrder(endpoints, round),
  );
}

async function runStreams(settings: Settings, gateways: Gateways): Promise<StreamSummary[]> {
  progress(`streams: ${settings.streamRuns} runs each, direct, through the floor and through the gateway (virtual key), in turn`);
  const oneAtATime = () => new Agent({ keepAlive: true, maxSockets: 1 });
  return compareStreams(
    [
      { label: 'direct', target: target(gateways.direct, true, oneAtATime()) },
      { label: 'floor', target: target(gateways.floor, true, oneAtATime()) },
      { label: 'gateway (vk)', target: target(gateways.gatewayVk, true, oneAtATime()) },
    ],
    { runs: settings.streamRuns, expectedChunks: settings.streamChunks, limitMs: settings.streamChunks * settings.streamGapMs + REQUEST_LIMIT_MS },
  );
}

/**
 * A mock whose streams last long enough to hold them all open together, and a fresh gateway
 * (virtual key) whose upstream pool can hold that many connections to it (its default is 128 per
 * origin, which would queue the rest inside the gateway).
 */
async function runOpenStreams(settings: Settings, apiKey: string): Promise<OpenStreamsFigures> {
  progress(`concurrent streams: ${settings.openStreams} at once through a fresh gateway (virtual key)`);
  const mock = await startServer('mock', {
    [CHILD_ENVIRONMENT.streamChunks]: String(settings.openStreamChunks),
    [CHILD_ENVIRONMENT.streamGapMs]: String(settings.openStreamGapMs),
  });
  const gateway = await startServer('gateway', {
    [CHILD_ENVIRONMENT.gatewayApiKey]: apiKey,
    // The default pool (1024 connections per origin) holds the default 1000 streams; more need a larger one.
    ...(settings.openStreams + 24 > 1024 ? { [CHILD_ENVIRONMENT.gatewayUpstreamConnections]: String(settings.openStreams + 24) } : {}),
  });
  try {
    if (settings.warmUpSeconds > 0) await warmUp(gateway, apiKey, mock.url);
    const vk = await createVirtualKey(gateway.url, apiKey, { name: 'bench-open-streams', mockUrl: mock.url });
    return await holdOpenStreams({
      gateway,
      mock,
      url: `${gateway.url}${CHAT_PATH}`,
      headers: virtualKeyHeaders(vk),
      body: chatBody(true),
      count: settings.openStreams,
      expectedChunks: settings.openStreamChunks,
      limitMs: settings.openStreamChunks * settings.openStreamGapMs + 60_000,
      rssSampleMs: settings.rssSampleMs,
    });
  } finally {
    await Promise.all([gateway.stop(), mock.stop()]);
  }
}

/** 2 s of plain chat at 500 req/s on a key of its own, so that a fresh gateway is not measured cold (JIT). */
async function warmUp(gateway: ServerChild, apiKey: string, mockUrl: string): Promise<void> {
  const vk = await createVirtualKey(gateway.url, apiKey, { name: 'bench-warm-up', mockUrl });
  const loader = new PacedLoader({ origin: gateway.url, path: CHAT_PATH, headers: virtualKeyHeaders(vk), body: chatBody(false) }, 10);
  try {
    const result = await loader.run(500, 2);
    const problems = pacedProblems([{ label: 'warm-up', result }]);
    if (problems.length > 0) throw new Error(`the warm-up of the concurrent-streams gateway failed: ${problems.join('; ')}`);
  } finally {
    await loader.close();
  }
}

async function runStartup(settings: Settings, apiKey: string, mock: ServerChild): Promise<StartupRun[]> {
  progress(`start-up: ${settings.startupRuns} fresh gateway child(ren), polled every ${settings.startupPollMs} ms`);
  const runs: StartupRun[] = [];
  for (let run = 0; run < settings.startupRuns; run++) {
    runs.push(
      await measureStartup({
        path: CHAT_PATH,
        headers: accountHeaders(apiKey, mock.url),
        body: chatBody(false),
        accountKey: apiKey,
        pollMs: settings.startupPollMs,
        limitMs: STARTUP_LIMIT_MS,
      }),
    );
  }
  return runs;
}

async function runSoakSection(settings: Settings, apiKey: string, mock: ServerChild): Promise<SoakFigures> {
  progress(`soak: ${settings.soakMinutes} min at ${settings.rate} req/s through a fresh gateway (virtual key)`);
  const gateway = await startServer('gateway', { [CHILD_ENVIRONMENT.gatewayApiKey]: apiKey });
  try {
    const vk = await createVirtualKey(gateway.url, apiKey, { name: 'bench-soak', mockUrl: mock.url });
    const headers = virtualKeyHeaders(vk);
    const soak = await runSoak({
      gateway,
      request: { path: CHAT_PATH, headers, body: chatBody(false) },
      ratePerSecond: settings.rate,
      connections: settings.rateConnections,
      minutes: settings.soakMinutes,
      sampleSeconds: settings.soakSampleSeconds,
      warmupSeconds: settings.warmUpSeconds,
    });
    return soak;
  } finally {
    await gateway.stop();
  }
}

/** The figures of loads on `endpoints` (each baseline one right after its current twin): the current ones, and the pairs. */
function splitByCheckout<T>(figures: readonly T[], endpoints: readonly Endpoint[]): { current: T[]; pairs: Array<Pair<T>> } {
  return splitInterleaved(figures, endpoints.map((endpoint) => endpoint.baseline === true));
}

/**
 * The sections that load the mock, the floor and the gateway variants (throughput, paced, streams),
 * with the baseline's variants in the first two when there is one. Resolves to the mock, still running.
 */
async function runLoads(settings: Settings, apiKey: string, measured: Measured): Promise<ServerChild> {
  const { sections } = settings;
  progress(`starting the mock upstream, the floor proxy and three gateways (default; virtual key; virtual key + 3 guardrails)${settings.baseline ? `, and the same three from ${settings.baseline.checkout}` : ''}`);
  const gateways = await startGateways(settings, apiKey);
  const { mock } = gateways;
  const baseline: BaselineMeasured | undefined = settings.baseline ? { checkout: settings.baseline.checkout } : undefined;
  const both = (name: keyof Variants): Array<ServerChild | undefined> => [gateways[name].process, gateways.baseline?.[name].process];
  const throughputEndpoints = [gateways.direct, gateways.floor, ...withBaselines(gateways, ['gatewayDefault', 'gatewayVk', 'gatewayGuarded', 'gatewayRouted'])];
  await preflight(throughputEndpoints);
  for (const variants of [gateways, ...(gateways.baseline ? [gateways.baseline] : [])]) await checkVariants(variants, apiKey);
  if (sections.has('throughput')) {
    const split = splitByCheckout(await runThroughput(settings, throughputEndpoints), throughputEndpoints);
    measured.throughput = split.current;
    if (baseline) baseline.throughput = split.pairs;
  }
  await Promise.all(both('gatewayGuarded').map((child) => child?.stop()));
  if (sections.has('paced')) {
    gateways.gatewayVk = await withFreshKey(gateways.gatewayVk, apiKey, mock.url, 'bench-paced');
    if (gateways.baseline) gateways.baseline.gatewayVk = await withFreshKey(gateways.baseline.gatewayVk, apiKey, mock.url, 'bench-paced');
    const endpoints = [gateways.floor, ...withBaselines(gateways, ['gatewayDefault', 'gatewayVk'])];
    const split = splitByCheckout(await runPaced(settings, endpoints), endpoints);
    measured.paced = split.current;
    if (baseline) baseline.paced = split.pairs;
  }
  await Promise.all(both('gatewayDefault').map((child) => child?.stop()));
  if (sections.has('streams')) {
    gateways.gatewayVk = await withFreshKey(gateways.gatewayVk, apiKey, mock.url, 'bench-streams');
    measured.streams = await runStreams(settings, gateways);
  }
  await Promise.all([gateways.floor.process, ...both('gatewayVk')].map((child) => child?.stop()));
  measured.baseline = baseline;
  return mock;
}

async function main(): Promise<number> {
  watchStalls('bench');
  process.exitCode = 1; // should the run ever stop without reaching the end, it failed
  const settings = readSettings();
  const loadBefore = loadavg()[0];
  const budget = setTimeout(() => {
    progress(`the run took longer than its ${runBudgetMs(settings, STARTUP_LIMIT_MS)} ms budget: abandoned`);
    void stopAllServers().finally(() => process.exit(1));
  }, runBudgetMs(settings, STARTUP_LIMIT_MS));
  budget.unref();

  const apiKey = `gw-bench-${randomBytes(18).toString('base64url')}`;
  const measured: Measured = {};
  const { sections } = settings;
  const loadsWanted = sections.has('throughput') || sections.has('paced') || sections.has('streams');
  const mock = loadsWanted
    ? await runLoads(settings, apiKey, measured)
    : await startServer('mock', { [CHILD_ENVIRONMENT.streamChunks]: String(settings.streamChunks), [CHILD_ENVIRONMENT.streamGapMs]: String(settings.streamGapMs) });
  if (sections.has('open-streams')) measured.openStreams = await runOpenStreams(settings, apiKey);
  if (sections.has('startup')) measured.startup = await runStartup(settings, apiKey, mock);
  if (settings.soakMinutes > 0) measured.soak = await runSoakSection(settings, apiKey, mock);

  process.stdout.write(report(settings, loadBefore, measured));
  const problems = harnessProblems(measured);
  if (problems.length === 0) return 0;
  process.stdout.write(`HARNESS PROBLEM: some figures above are not valid:\n${problems.map((problem) => `  ${problem}`).join('\n')}\n`);
  return 1;
}

process.on('exit', killAllServers);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // SIGTERM first so that the children clean up (the gateways remove their data directories).
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
