import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startCluster, stop, type Cluster } from '../cluster-harness.js';
import { gatewayHeaders, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import type { LogEntry } from '../../core/logs/entry.js';
import { echoUpstream, sseEvents } from './cache-harness.js';

// Single flight (issue 39): identical concurrent misses make one upstream call, in one process and
// across the workers of GATEWAY_WORKERS (leases in the shared cache.sqlite). The upstream holds each
// answer 400 ms, so the requests are all in flight together: without single flight every one of
// them would miss and go upstream. cache.timeoutMs is raised: on a loaded machine a store call past
// the default 250 ms makes a plain miss (as documented), which is not what these tests are about.
const HOLD_MS = 400;
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  const echo = echoUpstream();
  fake = await startFake((request, response) => void setTimeout(() => echo.handler(request, response), HOLD_MS));
  gateway = await startGateway({ cache: { default: { mode: 'simple', max_age: 600 }, timeoutMs: 5000 } });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const upstreamCalls = (text: string) => fake.requests.filter((request) => request.url.startsWith('/v1/chat') && request.json().messages?.at(-1)?.content === text).length;
const chat = (url: string, headers: Record<string, string>, text: string, stream = false) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...(stream ? { stream: true } : {}) }),
  });
const together = <T>(count: number, ask: (index: number) => Promise<T>) => Promise.all(Array.from({ length: count }, (_, index) => ask(index)));
const statuses = (responses: Response[]) => responses.map((response) => response.headers.get('x-gateway-cache')).sort();

/** The log entries of these traces, once every one is written. */
async function entriesOf(traces: readonly string[]): Promise<LogEntry[]> {
  const wanted = new Set(traces);
  for (let attempt = 0; attempt < 300; attempt++) {
    const found = gateway.entries().filter((entry) => wanted.has(entry.traceId));
    if (found.length >= wanted.size) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('log entries missing');
}

test('100 identical concurrent misses: one upstream call, 100 identical answers; the leader is the MISS charged, the followers HITs charged nothing', async (t) => {
  const text = 'single flight, plain';
  const traces = Array.from({ length: 100 }, () => traceId('single-flight'));
  const responses = await together(100, (index) => chat(gateway.url, gatewayHeaders(fake.baseUrl, { 'x-gateway-trace-id': traces[index]! }), text));
  const bodies: any[] = await Promise.all(responses.map((response) => response.json()));
  t.is(upstreamCalls(text), 1);
  t.true(responses.every((response) => response.status === 200));
  for (const body of bodies) t.deepEqual(body, bodies[0]);
  t.deepEqual(statuses(responses), [...Array<string>(99).fill('HIT'), 'MISS']);
  const entries = await entriesOf(traces);
  const leader = entries.filter((entry) => entry.cache?.status === 'MISS');
  const followers = entries.filter((entry) => entry.cache?.status === 'HIT');
  t.is(leader.length, 1);
  t.is(followers.length, 99);
  t.true((leader[0]!.costUsd ?? 0) > 0, 'the leader is charged the upstream call');
  t.truthy(leader[0]!.usage);
  for (const follower of followers) {
    t.is(follower.costUsd, undefined, 'a follower is charged nothing');
    t.is(follower.usage, undefined);
    t.is(follower.cache?.savedUsd, leader[0]!.costUsd, 'and saved what the answer cost');
  }
});

test('100 identical concurrent streamed misses: one upstream call, 100 identical streams', async (t) => {
  const text = 'single flight, streamed';
  const responses = await together(100, () => chat(gateway.url, gatewayHeaders(fake.baseUrl), text, true));
  const contents = await Promise.all(
    responses.map(async (response) => {
      const events = sseEvents(await response.text());
      t.is(events.at(-1), '[DONE]');
      return events.map((event) => (event === '[DONE]' ? '' : (event.choices[0]?.delta?.content ?? ''))).join('');
    }),
  );
  t.is(upstreamCalls(text), 1);
  t.regex(contents[0]!, /^Answer \d+ to: single flight, streamed$/);
  for (const content of contents) t.is(content, contents[0]);
  t.deepEqual(statuses(responses), [...Array<string>(99).fill('HIT'), 'MISS']);
});

test('a leader that fails (upstream 500) frees its followers: each asks upstream itself and gets its own error', async (t) => {
  const text = 'single flight fail-500';
  const responses = await together(10, () => chat(gateway.url, gatewayHeaders(fake.baseUrl), text));
  t.true(responses.every((response) => response.status === 500));
  t.deepEqual(statuses(responses), Array<string>(10).fill('MISS'));
  t.is(upstreamCalls(text), 10);
  await Promise.all(responses.map((response) => response.arrayBuffer()));
});

test('different concurrent requests are not coalesced: each its own upstream call and its own answer', async (t) => {
  const responses = await together(20, (index) => chat(gateway.url, gatewayHeaders(fake.baseUrl), `single flight, different ${index}`));
  const bodies: any[] = await Promise.all(responses.map((response) => response.json()));
  bodies.forEach((body, index) => t.regex(body.choices[0].message.content, new RegExp(`to: single flight, different ${index}$`)));
  for (let index = 0; index < 20; index++) t.is(upstreamCalls(`single flight, different ${index}`), 1);
  t.deepEqual(statuses(responses), Array<string>(20).fill('MISS'));
});

test('across the workers of GATEWAY_WORKERS: 100 identical concurrent misses, one upstream call', async (t) => {
  let cluster: Cluster | undefined;
  try {
    cluster = await startCluster();
    const admin = (path: string, body: unknown) =>
      fetch(`${cluster!.url}${path}`, { method: 'POST', headers: { 'x-gateway-api-key': cluster!.key, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) });
    const credential = (await (await admin('/admin/credentials', { name: 'single flight', provider: 'openai', api_key: PROVIDER_KEY })).json()) as { id: string };
    const route = await admin('/admin/routes', {
      name: 'single-flight',
      route: { strategy: { mode: 'single' }, cache: { mode: 'simple', max_age: 600 }, targets: [{ provider: 'openai', credential: credential.id, custom_host: fake.baseUrl }] },
    });
    t.is(route.status, 201);
    const text = 'single flight across workers';
    // A connection each, so that the primary hands them to both workers.
    const responses = await together(100, () => chat(cluster!.url, { 'x-gateway-api-key': cluster!.key, 'x-gateway-config': 'single-flight', connection: 'close' }, text));
    const bodies: any[] = await Promise.all(responses.map((response) => response.json()));
        t.is(upstreamCalls(text), 1);
    for (const body of bodies) t.deepEqual(body, bodies[0]);
    t.deepEqual(statuses(responses), [...Array<string>(99).fill('HIT'), 'MISS']);
  } finally {
    if (cluster?.child.exitCode === null) await stop(cluster.child);
  }
});
