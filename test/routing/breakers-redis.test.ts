import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import test from 'ava';
import type { GatewayConfig } from '../../config/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { SharedRoutingState } from '../../core/routing/state-redis.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { clearRedisPrefix, FIXED_MESSAGES, fixedUsageHandler, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';

// Two gateway instances over one Redis share their circuit breakers: a breaker opened by failures
// seen on A is open on B, which skips that target without having seen a failure itself; an
// instance started later starts with it open.

let failing: Fake;
let healthy: Fake;
let a: TestGateway;
let b: TestGateway;
let late: TestGateway | undefined;
const clocked: TestGateway[] = [];
const prefix = `test-breakers-${process.pid}-${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');
const BREAKER = 'route:shared/targets[0]';
let available = false;

const fail503 = (_request: unknown, response: ServerResponse) => {
  response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down","type":"server_error","code":null}}');
};

const config = (): Partial<GatewayConfig> => ({
  providers: [openai()],
  routing: { breaker: { failures: 2, cooldownMs: 60_000 } },
  routes: {
    shared: {
      strategy: { mode: 'fallback' },
      targets: [
        { name: 'failing', provider: 'openai', custom_host: failing.baseUrl },
        { name: 'healthy', provider: 'openai', custom_host: healthy.baseUrl },
      ],
    },
  },
});
const environment = () => ({ REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });

test.before(async () => {
  available = await redisAvailable(); // throws under CI=true when Redis is unreachable
  if (!available) return;
  failing = await startFake();
  healthy = await startFake();
  failing.handle(fail503);
  healthy.handle(fixedUsageHandler(0));
  a = await startGateway(config(), environment());
  b = await startGateway(config(), environment());
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await late?.close();
  for (const gateway of clocked) await gateway.close();
  await failing?.close();
  await healthy?.close();
  if (available) await clearRedisPrefix(prefix);
});

async function chat(gateway: TestGateway, route = 'shared') {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-config': route },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10 }),
  });
  await response.text();
  return { status: response.status, target: response.headers.get('x-gateway-route-target'), attempts: response.headers.get('x-gateway-attempts') };
}

/** The breaker's state in an instance's /metrics (0 closed, 1 half-open, 2 open), or undefined when it has none. */
async function breakerGauge(gateway: TestGateway, breaker = BREAKER): Promise<number | undefined> {
  const text = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  const line = text.split('\n').find((row) => row.startsWith(`gateway_route_breaker_state{target="${breaker}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

test.serial('a breaker opened by failures on A is open on B within 2 s; B skips the target without a failure of its own; a new instance starts with it open', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  t.is(await breakerGauge(b), undefined, 'B has seen nothing of this target');
  for (let index = 0; index < 2; index++) t.like(await chat(a), { status: 200, target: 'healthy', attempts: '2' });
  t.is(failing.requests.length, 2);
  t.is(await breakerGauge(a), 2, 'open on A');
  const opened = performance.now();
  let seenMs = Number.POSITIVE_INFINITY;
  while (performance.now() - opened < 2500) {
    if ((await breakerGauge(b)) === 2) {
      seenMs = performance.now() - opened;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  t.log(`breaker opened on A was seen open on B ${seenMs.toFixed(1)} ms later`);
  t.true(seenMs < 2000, `took ${seenMs} ms`);

  const before = { failing: failing.requests.length, healthy: healthy.requests.length };
  t.like(await chat(b), { status: 200, target: 'healthy', attempts: '1' });
  t.is(failing.requests.length, before.failing, 'B sent nothing to the failing target');
  t.is(healthy.requests.length, before.healthy + 1);

  late = await startGateway(config(), environment());
  t.is(await breakerGauge(late), 2, 'an instance started now reads the open breaker from Redis');
  t.like(await chat(late), { status: 200, target: 'healthy', attempts: '1' });
  t.is(failing.requests.length, before.failing);
});

/** Polls until `check` holds (every 2 ms, up to 2.5 s); the milliseconds it took, or Infinity. */
async function within(check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 2500) {
    if (await check()) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return Number.POSITIVE_INFINITY;
}

test.serial('after the cooldown a successful probe on A closes the breaker on B too, and removes it from Redis', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  let now = 5_000_000;
  const settings = { failures: 2, failureRatio: 1, minRequests: 1000, windowMs: 60_000, cooldownMs: 10_000 };
  const probeConfig = (): Partial<GatewayConfig> => ({
    providers: [openai()],
    routes: { probe: { strategy: { mode: 'single' }, targets: [{ name: 'flaky', provider: 'openai', custom_host: failing.baseUrl }] } },
  });
  const start = async () => {
    const gateway = await startGateway(probeConfig(), environment(), { routing: { state: new SharedRoutingState(settings, () => now) } });
    clocked.push(gateway);
    return gateway;
  };
  const [first, second] = [await start(), await start()];
  const breaker = 'route:probe/targets[0]';
  failing.handle(fail503);
  for (let index = 0; index < 2; index++) t.is((await chat(first, 'probe')).status, 503);
  t.true((await within(async () => (await breakerGauge(second, breaker)) === 2)) < 2000, 'open on B');

  now += 10_000;
  failing.handle(fixedUsageHandler(0));
  t.is((await chat(first, 'probe')).status, 200, 'the probe on A succeeds and closes its breaker');
  const closedMs = await within(async () => (await breakerGauge(second, breaker)) === 0);
  t.log(`breaker closed on A was seen closed on B ${closedMs.toFixed(1)} ms later`);
  t.true(closedMs < 2000, `took ${closedMs} ms`);
  const third = await start();
  t.is(await breakerGauge(third, breaker), undefined, 'a new instance finds no open breaker in Redis');
  failing.handle(fail503);
});
