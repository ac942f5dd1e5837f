import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { APIError } from 'openai';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, openAIChatHandler, startFake } from '../fakes/openai-fake.js';
import { PROVIDER_KEY, SECRETS, gatewayClient, loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { admin } from '../vault/vault-harness.js';

// Issue 31, items 6, 7 and 12: `$regex` conditions cannot stall the process, one request cannot
// multiply an outage (floor, per-request cap, per-target retry budget), and the log says why each
// attempt failed, which targets were passed over, and how much time the routing took.

let good: Fake;
let failing: Fake;
let gateway: TestGateway;
/** Every wait the executor asked for between attempts (the injected sleep returns at once: no test waits on a clock). */
const waits: number[] = [];

const messages = [{ role: 'user' as const, content: 'hi' }];
const target = (name: string, fake: Fake, model = `model-${name}`) => ({ name, provider: 'openai', custom_host: fake.baseUrl, override_params: { model } });

/** The failing fake's answer: 503, `Retry-After: 0`, and a long message quoting the provider key (as some providers echo a key back). */
const LONG_MESSAGE = `Service unavailable for key ${PROVIDER_KEY}: ${'overloaded '.repeat(60)}`;

test.before(async () => {
  good = await startFake(openAIChatHandler);
  failing = await startFake((_request, response) => {
    response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end(JSON.stringify({ error: { message: LONG_MESSAGE, type: 'server_error', code: 'overloaded' } }));
  });
  gateway = await startGateway(
    {
      providers: [openai()],
      // Breakers that never open, so that only the retry limits bound the attempts.
      routing: { breaker: { failures: 100_000, minRequests: 100_000 }, retry: { budgetMinRetries: 3, budgetRatio: 0.2, budgetWindowMs: 600_000 } },
      routes: {
        // 32 targets × 11 attempts: 352 upstream calls on main for one request.
        storm: { strategy: { mode: 'fallback' }, retry: { attempts: 10 }, targets: Array.from({ length: 32 }, (_, index) => target(`t${index}`, failing)) },
        lone: { strategy: { mode: 'single' }, retry: { attempts: 10 }, targets: [target('lone', failing)] },
        pair: { strategy: { mode: 'fallback' }, targets: [target('down', failing), target('up', good)] },
      },
    },
    {},
    {
      routing: {
        sleep: async (ms) => {
          waits.push(ms);
        },
      },
    },
  );
});

test.after.always(async () => {
  await gateway?.close();
  await good?.close();
  await failing?.close();
});

async function chat(route: string, headers: Record<string, string> = {}, body: Record<string, unknown> = {}) {
  const trace = traceId('hardening');
  const client = gatewayClient(gateway.url, { 'x-gateway-config': route, 'x-gateway-trace-id': trace, ...headers });
  try {
    const { data, response } = await client.chat.completions.create({ model: 'ignored', messages, ...body } as never).withResponse();
    return { status: response.status, headers: response.headers, data: data as any, trace };
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    return { status: error.status ?? 0, headers: error.headers as unknown as Headers, data: error.error as any, trace };
  }
}

/** Classic catastrophic patterns for a backtracking engine, each with a value that makes it backtrack. */
const CATASTROPHIC: ReadonlyArray<readonly [string, string]> = [
  ['(a+)+$', `${'a'.repeat(500)}!`],
  ['^([a-z]+-?)+$', 'abcdefghijklmnopqrstuvwxyz!'],
  ['^([a-z]+-?)+$', `${'abcdefgh'.repeat(60)}!`],
  ['(a|aa)+$', `${'a'.repeat(500)}!`],
  ['(.*a){12}', `${'a'.repeat(11)}${'b'.repeat(300)}`],
  ['^(\\w+\\s?)*$', `${'word '.repeat(100)}!`],
  ['(x+x+)+y', 'x'.repeat(500)],
];

test.serial('$regex: catastrophic patterns are stored and matched in linear time; a request with an adversarial value answers', async (t) => {
  for (const [pattern, value] of CATASTROPHIC) {
    const stored = await admin(gateway, 'POST', '/admin/routes', {
      route: { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tag': { $regex: pattern } }, then: 'matched' }], default: 'other' }, targets: [target('matched', good), target('other', good)] },
    });
    t.is(stored.status, 201, stored.text);
    const started = performance.now();
    const result = await chat(stored.json.id, { 'x-gateway-metadata': JSON.stringify({ tag: value }) });
    t.log(`${pattern} against ${value.length} characters: ${(performance.now() - started).toFixed(1)} ms`);
    t.is(result.status, 200);
    t.is(result.headers.get('x-gateway-route-target'), 'other', pattern);
  }
  // The engine still matches what it should.
  const route = { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tag': { $regex: '^([a-z]+-?)+$' } }, then: 'matched' }], default: 'other' }, targets: [target('matched', good), target('other', good)] };
  const matching = await chat(JSON.stringify(route), { 'x-gateway-metadata': JSON.stringify({ tag: 'gold-tier-eu' }) });
  t.is(matching.headers.get('x-gateway-route-target'), 'matched');
});

test.serial('$regex: a value past the input bound never matches, and the request answers at once', async (t) => {
  const route = { strategy: { mode: 'conditional', conditions: [{ query: { user: { $regex: '(a|aa)+$' } }, then: 'matched' }], default: 'other' }, targets: [target('matched', good), target('other', good)] };
  const started = performance.now();
  const long = await chat(JSON.stringify(route), {}, { user: `${'a'.repeat(20_000)}!` });
  t.log(`a 20,001-character user against (a|aa)+$: ${(performance.now() - started).toFixed(1)} ms`);
  t.is(long.status, 200);
  t.is(long.headers.get('x-gateway-route-target'), 'other');
  t.is((await chat(JSON.stringify(route), {}, { user: 'aaaa' })).headers.get('x-gateway-route-target'), 'matched');
});

test.serial('$regex: lookarounds and backreferences (which need backtracking) are refused at store: 400 invalid_route naming the $regex', async (t) => {
  for (const pattern of ['^(?=a)a+$', '(a)\\1', '(?<!x)y', '(?<name>a)\\k<name>']) {
    const refused = await admin(gateway, 'POST', '/admin/routes', {
      route: { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tag': { $regex: pattern } }, then: 'a' }] }, targets: [target('a', good)] },
    });
    t.is(refused.status, 400, pattern);
    t.like(refused.json.error, { code: 'invalid_route', param: 'route.strategy.conditions[0].query.metadata.tag.$regex', type: 'invalid_request_error' });
  }
});

test.serial('retry storm: 32 targets × 11 attempts answering 503 with Retry-After: 0 make at most 32 upstream calls, each retry waiting at least the floor', async (t) => {
  failing.requests.length = 0;
  waits.length = 0;
  const result = await chat('storm');
  t.is(result.status, 503);
  t.log(`upstream calls: ${failing.requests.length} (352 before the cap), waits asked: ${waits.map((ms) => ms.toFixed(0)).join(', ')}`);
  t.is(failing.requests.length, 32);
  t.true(waits.length > 0);
  for (const ms of waits) t.true(ms >= 50, `a retry waited ${ms} ms, under the 50 ms floor`);
  const entry = await loggedOnce(gateway, result.trace);
  t.is(entry.attempts?.length, 32);
  t.true(entry.skipped?.some((skip) => skip.reason === 'attempt_cap'));
  // Each target got its first attempt and the 3 retries its budget allows (budgetMinRetries), then the next took over.
  t.deepEqual(entry.skipped?.filter((skip) => skip.reason === 'retry_budget').map((skip) => skip.target), ['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
});

test.serial('retry budget: retries of a failing target stay within the budget across requests', async (t) => {
  failing.requests.length = 0;
  const first = await chat('lone');
  t.is(first.status, 503);
  // One first attempt and budgetMinRetries (3) retries, not 1 + 10.
  t.is(failing.requests.length, 4);
  for (let index = 0; index < 10; index++) t.is((await chat('lone')).status, 503);
  // 11 first attempts allow max(3, 0.2 × 11) retries, all spent by the first request: 14 calls, not 121.
  t.is(failing.requests.length, 14);
  const entry = gateway.entries().at(-1)!;
  t.deepEqual(entry.skipped, [{ target: 'lone', reason: 'retry_budget' }]);
});

test.serial('attempt log: each failed attempt has its error code and the upstream message (capped, no secret); routing time is apart from gateway time', async (t) => {
  const result = await chat('pair');
  t.is(result.status, 200);
  t.is(result.headers.get('x-gateway-route-target'), 'up');
  const timing = result.headers.get('server-timing') ?? '';
  t.regex(timing, /^gateway;dur=[\d.]+, routing;dur=[\d.]+, upstream;dur=[\d.]+$/);
  const entry = await loggedOnce(gateway, result.trace);
  const [down, up] = entry.attempts!;
  t.like(down, { target: 'down', status: 503, errorCode: 'overloaded' });
  t.true(down.message!.startsWith('Service unavailable for key [REDACTED]: overloaded'));
  t.true(down.message!.length <= 256);
  t.is(up.errorCode, undefined);
  t.is(up.message, undefined);
  // Routing time holds the failed attempt; the gateway's time is what is left of the duration.
  t.true(entry.routingMs! >= down.latencyMs);
  t.true(Math.abs(entry.gatewayMs - (entry.durationMs - entry.upstreamMs! - entry.routingMs!)) < 0.01);
  for (const secret of SECRETS) t.false(JSON.stringify(entry).includes(secret));

  // The durable log's detail carries the same.
  let detail: any;
  for (let tries = 0; tries < 100 && detail === undefined; tries++) {
    const list = await admin(gateway, 'GET', `/admin/logs?trace_id=${encodeURIComponent(result.trace)}`);
    if (list.json?.data?.length) detail = (await admin(gateway, 'GET', `/admin/logs/${list.json.data[0].id}`)).json;
    else await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.like(detail?.routing?.attempts?.[0], { target: 'down', status: 503, errorCode: 'overloaded' });
  t.is(typeof detail.routing.routing_ms, 'number');
});

test.serial('attempt log: the last failed attempt (the answer the client got) has its code and message too', async (t) => {
  const result = await chat('lone');
  t.is(result.status, 503);
  const entry = await loggedOnce(gateway, result.trace);
  const last = entry.attempts!.at(-1)!;
  t.like(last, { target: 'lone', status: 503 });
  t.truthy(last.errorCode);
  t.true(last.message!.includes('overloaded'));
  t.false(last.message!.includes(PROVIDER_KEY));
  t.true(last.message!.length <= 256);
});

test.serial('attempt log: a target skipped by an open breaker is recorded', async (t) => {
  const breaking = await startGateway({
    providers: [openai()],
    routing: { breaker: { failures: 1, minRequests: 1000, cooldownMs: 600_000 } },
    routes: { pair: { strategy: { mode: 'fallback' }, targets: [target('down', failing), target('up', good)] } },
  });
  t.teardown(() => breaking.close());
  const client = (trace: string) => gatewayClient(breaking.url, { 'x-gateway-config': 'pair', 'x-gateway-trace-id': trace });
  await client(traceId('breaker')).chat.completions.create({ model: 'ignored', messages });
  const trace = traceId('breaker');
  await client(trace).chat.completions.create({ model: 'ignored', messages });
  const entry = await loggedOnce(breaking, trace);
  t.deepEqual(entry.attempts?.map((attempt) => attempt.target), ['up']);
  t.deepEqual(entry.skipped, [{ target: 'down', reason: 'breaker_open' }]);
});

test.serial('$regex: a route stored before the check with a lookaround is named in a warning at start; its condition never matches, the route still answers', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-regex-'));
  const first = await startGateway({ providers: [openai()] }, { GATEWAY_DATA_DIR: dataDir });
  // Written straight into the store, as an older gateway (which accepted any JavaScript pattern) did.
  const old = await first.gateway.vault.parts.routes.create(
    {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tag': { $regex: '^(?=a)a+$' } }, then: 'matched' }], default: 'other' },
      targets: [target('matched', good), target('other', good)],
    } as never,
    'old-lookahead',
  );
  await first.close();
  const second = await startGateway({ providers: [openai()] }, { GATEWAY_DATA_DIR: dataDir });
  t.teardown(() => second.close());
  let warning: Record<string, any> | undefined;
  for (let tries = 0; tries < 100 && warning === undefined; tries++) {
    warning = second.lines.find((line) => line.level === 40 && typeof line.msg === 'string' && line.msg.includes('old-lookahead'));
    if (warning === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.truthy(warning, 'a warning names the route');
  t.is(warning?.param, 'strategy.conditions[0].query.metadata.tag.$regex');
  const client = gatewayClient(second.url, { 'x-gateway-config': old.id, 'x-gateway-metadata': JSON.stringify({ tag: 'aaa' }) });
  const { response } = await client.chat.completions.create({ model: 'ignored', messages }).withResponse();
  t.is(response.headers.get('x-gateway-route-target'), 'other');
});
