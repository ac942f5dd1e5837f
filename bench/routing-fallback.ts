// `npm run build && node dist/bench/routing-fallback.js`: the client's latency of a 2-target fallback
// route whose first target answers 503 at once, through a real gateway process and two loopback mock
// upstreams (one answering 503, one answering the chat fixture), against the sum of a direct
// request to the 503 mock (the failed attempt) and a plain gateway request to the good mock.
// Requests are sequential and interleaved (routed, direct 503, plain), each kind on its own
// keep-alive connection; medians of one run. The gateway's breakers are held closed, so every
// routed request makes its failed attempt (with breakers on, the 503 target is skipped after 5
// failures and costs nothing). Prints figures and PASS/MISS; a MISS does not fail the run.
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { killAllServers, startServer, stopAllServers } from './children.js';
import { CHILD_ENVIRONMENT } from './protocol.js';
import { median } from './stats.js';

const REQUESTS = Number(process.env.BENCH_ROUTING_REQUESTS ?? 1000);
const WARM_UP = 100;
const LIMIT_MS = 10_000;
/** The goal: the failed attempt plus at most this much. */
const ALLOWED_MS = 1;
const BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] });

interface Endpoint {
  url: string;
  headers: Record<string, string>;
  agent: Agent;
  /** The status and `x-gateway-attempts` every answer must have (a wrong one stops the bench). */
  expect: { status: number; attempts?: string };
}

interface Timed {
  ms: number;
  status: number;
  attempts: string | undefined;
}

/** Sends one request, reads the whole answer, and returns the time from send to its end. */
function timed(endpoint: Endpoint): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const sentAt = performance.now();
    const request = httpRequest(`${endpoint.url}/v1/chat/completions`, {
      method: 'POST',
      agent: endpoint.agent,
      headers: { ...endpoint.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BODY)) },
      signal: AbortSignal.timeout(LIMIT_MS),
    });
    request.once('response', (response) => {
      response.resume();
      response.once('end', () => resolve({ ms: performance.now() - sentAt, status: response.statusCode ?? 0, attempts: response.headers['x-gateway-attempts'] as string | undefined }));
      response.once('error', reject);
    });
    request.once('error', reject);
    request.end(BODY);
  });
}

async function timedChecked(endpoint: Endpoint, label: string): Promise<number> {
  const answer = await timed(endpoint);
  if (answer.status !== endpoint.expect.status || (endpoint.expect.attempts !== undefined && answer.attempts !== endpoint.expect.attempts)) {
    throw new Error(`${label}: expected ${endpoint.expect.status} (attempts ${endpoint.expect.attempts ?? 'any'}), got ${answer.status} (attempts ${answer.attempts})`);
  }
  return answer.ms;
}

const agent = (): Agent => new Agent({ keepAlive: true, maxSockets: 1 });

async function main(): Promise<void> {
  const apiKey = `bench-${randomBytes(16).toString('hex')}`;
  const [failing, good, gateway] = await Promise.all([
    startServer('mock', { [CHILD_ENVIRONMENT.mockStatus]: '503' }),
    startServer('mock', { [CHILD_ENVIRONMENT.streamChunks]: '1', [CHILD_ENVIRONMENT.streamGapMs]: '0' }),
    startServer('gateway', { [CHILD_ENVIRONMENT.gatewayApiKey]: apiKey, [CHILD_ENVIRONMENT.gatewayBreakersClosed]: '1' }),
  ]);
  const route = {
    strategy: { mode: 'fallback' },
    targets: [
      { name: 'down', provider: 'openai', custom_host: `${failing.url}/v1` },
      { name: 'up', provider: 'openai', custom_host: `${good.url}/v1` },
    ],
  };
  const callerHeaders = { authorization: 'Bearer sk-bench', 'x-gateway-api-key': apiKey };
  const routed: Endpoint = { url: gateway.url, headers: { ...callerHeaders, 'x-gateway-config': JSON.stringify(route) }, agent: agent(), expect: { status: 200, attempts: '2' } };
  const direct503: Endpoint = { url: failing.url, headers: { authorization: 'Bearer sk-bench' }, agent: agent(), expect: { status: 503 } };
  const plain: Endpoint = {
    url: gateway.url,
    headers: { ...callerHeaders, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${good.url}/v1` },
    agent: agent(),
    expect: { status: 200 },
  };
  const times = { routed: [] as number[], direct503: [] as number[], plain: [] as number[] };
  for (let index = 0; index < WARM_UP + REQUESTS; index++) {
    const routedMs = await timedChecked(routed, 'routed');
    const directMs = await timedChecked(direct503, 'direct 503');
    const plainMs = await timedChecked(plain, 'plain');
    if (index < WARM_UP) continue;
    times.routed.push(routedMs);
    times.direct503.push(directMs);
    times.plain.push(plainMs);
  }
  const routedMs = median(times.routed);
  const failedAttemptMs = median(times.direct503);
  const plainMs = median(times.plain);
  const addedMs = routedMs - plainMs - failedAttemptMs;
  console.log(`2-target fallback route, first target answers 503 at once (${REQUESTS} requests each, medians, one run):`);
  console.log(`  routed through the gateway: ${routedMs.toFixed(3)} ms; direct request to the 503 mock: ${failedAttemptMs.toFixed(3)} ms; plain gateway request to the good mock: ${plainMs.toFixed(3)} ms`);
  const verdict = addedMs <= ALLOWED_MS ? 'PASS' : 'MISS';
  console.log(`  added latency: routed − (failed attempt + plain) = ${addedMs.toFixed(3)} ms (goal ≤ ${ALLOWED_MS} ms) ${verdict}`);
}

process.on('exit', killAllServers);
try {
  await main();
} finally {
  await stopAllServers();
}
