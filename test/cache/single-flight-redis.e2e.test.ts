import { randomBytes } from 'node:crypto';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { gatewayHeaders, startGateway, type TestGateway } from '../harness.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { echoUpstream } from './cache-harness.js';

// Single flight across instances (issue 39): two gateways sharing Redis take one lease per key
// (SET NX PX), so 100 identical concurrent misses spread over both make one upstream call; the
// instance that did not lead hears the release through pub/sub and serves the stored answer.
// cache.timeoutMs is raised: on a loaded machine a lease command past the default 250 ms makes a
// plain miss (as documented), which is not what these tests are about.
const HOLD_MS = 400;
let fake: Fake;
let a: TestGateway;
let b: TestGateway;
let available = false;
const prefix = `test-single-flight-${process.pid}-${randomBytes(4).toString('hex')}`;

test.before(async () => {
  available = await redisAvailable();
  if (!available) return;
  const echo = echoUpstream();
  fake = await startFake((request, response) => void setTimeout(() => echo.handler(request, response), HOLD_MS));
  const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
  a = await startGateway({ cache: { default: { mode: 'simple', max_age: 600 }, timeoutMs: 5000 } }, environment);
  b = await startGateway({ cache: { default: { mode: 'simple', max_age: 600 }, timeoutMs: 5000 } }, environment);
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  if (available) await clearRedisPrefix(prefix);
});

const upstreamCalls = (text: string) => fake.requests.filter((request) => request.url.startsWith('/v1/chat') && request.json().messages?.at(-1)?.content === text).length;
const chat = (gateway: TestGateway, text: string, stream = false) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...(stream ? { stream: true } : {}) }),
  });
const statuses = (responses: Response[]) => responses.map((response) => response.headers.get('x-gateway-cache')).sort();

test.serial('two instances on Redis: 100 identical concurrent misses, one upstream call, 100 identical answers', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped');
  const text = 'single flight across instances';
  const responses = await Promise.all(Array.from({ length: 100 }, (_, index) => chat(index % 2 ? b : a, text)));
  const bodies: unknown[] = await Promise.all(responses.map((response) => response.json()));
  t.is(upstreamCalls(text), 1);
  for (const body of bodies) t.deepEqual(body, bodies[0]);
  t.deepEqual(statuses(responses), [...Array<string>(99).fill('HIT'), 'MISS']);
});

test.serial('two instances on Redis: a leader that fails frees the followers on both instances', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped');
  const text = 'single flight across instances fail-500';
  const responses = await Promise.all(Array.from({ length: 10 }, (_, index) => chat(index % 2 ? b : a, text)));
  t.true(responses.every((response) => response.status === 500));
  t.is(upstreamCalls(text), 10);
  await Promise.all(responses.map((response) => response.arrayBuffer()));
});

test.serial('two instances on Redis: different requests are not coalesced', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped');
  const responses = await Promise.all(Array.from({ length: 10 }, (_, index) => chat(index % 2 ? b : a, `single flight across instances, different ${index}`)));
  t.deepEqual(statuses(responses), Array<string>(10).fill('MISS'));
  for (let index = 0; index < 10; index++) t.is(upstreamCalls(`single flight across instances, different ${index}`), 1);
  await Promise.all(responses.map((response) => response.arrayBuffer()));
});
