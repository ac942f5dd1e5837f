import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import test from 'ava';
import type { GatewayConfig } from '../../config/index.js';
import type { RedisState } from '../../core/store/redis-state.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, openAIHandler, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, eventually, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { clearRedisPrefix, FIXED_MESSAGES, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';

// Active health checks with two gateway instances over one Redis: a loopback fake that goes down
// opens the route target's breaker from probes alone (no user request failed), on both instances;
// traffic goes to the other target; when the fake comes back, probes close the breaker again.

let flaky: Fake;
let backup: Fake;
let a: TestGateway;
let b: TestGateway;
const prefix = `test-health-${process.pid}-${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');
let available = false;
let startedAt = 0;

const down = (_request: RecordedRequest, response: ServerResponse) => {
  response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down","type":"server_error","code":null}}');
};

const config = (): Partial<GatewayConfig> => ({
  providers: [openai()],
  // A cooldown of 10 minutes: whatever closes the breaker in this test is a probe, not the cooldown.
  routing: { breaker: { failures: 5, cooldownMs: 600_000 } },
  routes: {
    probed: {
      strategy: { mode: 'fallback' },
      targets: [
        { name: 'flaky', provider: 'openai', custom_host: flaky.baseUrl, health_check: { interval_ms: 1000, request: 'models', unhealthy_threshold: 2, healthy_threshold: 2 } },
        { name: 'backup', provider: 'openai', custom_host: backup.baseUrl },
      ],
    },
  },
});
const environment = () => ({ REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });

test.before(async () => {
  available = await redisAvailable(); // throws under CI=true when Redis is unreachable
  if (!available) return;
  flaky = await startFake(openAIHandler);
  backup = await startFake(openAIHandler);
  startedAt = Date.now();
  a = await startGateway(config(), environment());
  b = await startGateway(config(), environment());
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await flaky?.close();
  await backup?.close();
  if (available) await clearRedisPrefix(prefix);
});

interface Listed {
  name: string;
  state: string;
  tried: boolean;
  health_check: { status: string; last_status: number | null; last_error: string | null; consecutive_failures: number; last_probe_at: string | null } | null;
}

/** The route's targets as an instance's admin API shows them (`GET /admin/config-routes`). */
async function targets(gateway: TestGateway): Promise<Listed[]> {
  const answer = (await (await fetch(`${gateway.url}/admin/config-routes`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json()) as { data: Array<{ name: string; targets: Listed[] }> };
  return answer.data.find((route) => route.name === 'probed')!.targets;
}

const flakyOn = async (gateway: TestGateway) => (await targets(gateway))[0];

async function chat(gateway: TestGateway) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-config': 'probed' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10 }),
  });
  await response.text();
  return { status: response.status, target: response.headers.get('x-gateway-route-target'), attempts: response.headers.get('x-gateway-attempts') };
}

const userRequests = (fake: Fake) => fake.requests.filter((request) => request.method === 'POST').length;

test.serial('probes open the shared breaker before any user request fails, traffic moves to the other target, and probes close it again', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  t.true(await eventually(async () => (await flakyOn(a)).health_check?.status === 'healthy' && (await flakyOn(b)).health_check?.status === 'healthy'), 'both instances show the probe result');
  const probe = flaky.requests.find((request) => request.method === 'GET');

  t.is(probe?.url, '/v1/models', 'the probe is the models list');
  t.like(await flakyOn(b), { state: 'closed', health_check: { last_status: 200 } });

  flaky.handle(down);
  const wentDown = Date.now();
  t.true(await eventually(async () => (await flakyOn(a)).state === 'open' && (await flakyOn(b)).state === 'open'), 'the breaker opened on both instances');
  t.log(`open on both instances ${Date.now() - wentDown} ms after the target went down (interval 1 s, unhealthy_threshold 2)`);
  t.is(userRequests(flaky), 0, 'no user request was sent to the failing target: the probes alone opened its breaker');
  const shown = await flakyOn(b);
  t.like(shown, { health_check: { status: 'unhealthy', last_status: 503, last_error: 'status_503' } });
  t.true(shown.health_check!.consecutive_failures >= 2);

  for (const gateway of [a, b]) t.like(await chat(gateway), { status: 200, target: 'backup', attempts: '1' });
  t.is(userRequests(flaky), 0, 'traffic went to the other target');
  t.is(userRequests(backup), 2);

  flaky.handle(openAIHandler);
  const cameBack = Date.now();
  t.true(await eventually(async () => (await flakyOn(a)).state === 'closed' && (await flakyOn(b)).state === 'closed'), 'the probes closed the breaker on both instances');
  t.log(`closed on both ${Date.now() - cameBack} ms after it came back (healthy_threshold 2)`);
  t.is((await flakyOn(a)).health_check?.status, 'healthy');
  t.like(await chat(b), { status: 200, target: 'flaky', attempts: '1' });
  t.is(userRequests(flaky), 1);
  const probes = flaky.requests.filter((request) => request.method === 'GET').length;
  t.log(`${probes} probes reached the target in ${Date.now() - startedAt} ms from two instances probing every 1 s (one lease holder)`);
});

test.serial('the probe lease: one holder at a time, extended by its holder, taken over once it expires', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const state = a.gateway.vault.parts.state as RedisState;
  const channel = await state.openChannel(`lease-test-${randomBytes(4).toString('hex')}`, () => {});
  t.true(await channel.lease('target', 'one', 300));
  t.false(await channel.lease('target', 'two', 300), 'held by another');
  t.true(await channel.lease('target', 'one', 300), 'its holder extends it');
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.true(await channel.lease('target', 'two', 300), 'expired: another takes it');
});
