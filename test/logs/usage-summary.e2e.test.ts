import test from 'ava';
import { echoUpstream } from '../cache/cache-harness.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { waitForLogs } from '../browser/logs-api.js';
import { anthropicClient } from '../messages/helpers.js';
import { adminJson, ECHO_COST_USD, makeUsageTraffic, type UsageTraffic } from './usage-traffic.js';

// GET /admin/usage/summary (the headline figures against the previous period, top lists) and
// GET /admin/usage split by end user and by metadata key, over real traffic made with the SDK.
let fake: Fake;
let gateway: TestGateway;
let traffic: UsageTraffic;
const run = Math.random().toString(36).slice(2, 8);
const DAY = 86_400_000;

test.before(async () => {
  fake = await startFake(echoUpstream().handler);
  gateway = await startGateway();
  traffic = await makeUsageTraffic(gateway, fake.baseUrl, run);
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const period = () => `from=${new Date(traffic.boundary).toISOString()}&to=${new Date(traffic.boundary + DAY).toISOString()}`;
const micro = (value: number) => Math.round(value * 1e9);

test('the logged request carries the end user the SDK sent', async (t) => {
  const logged = await adminJson(gateway, 'GET', `/admin/logs?trace_id=usage-${run}-key-2`);
  t.like(logged.json.data[0], { end_user: 'bob', key_name: traffic.keyName, metadata: { team: 'ads', run } });
  const embedding = await adminJson(gateway, 'GET', `/admin/logs?trace_id=usage-${run}-embedding`);
  t.is(embedding.json.data[0].end_user, 'carol');
  t.true(traffic.embeddingCostUsd > 0 && traffic.embeddingCostUsd < 0.00001, `embedding cost ${traffic.embeddingCostUsd}`);
});

test('the summary gives the period’s figures against the previous period of the same length, and the top spenders', async (t) => {
  const { status, json } = await adminJson(gateway, 'GET', `/admin/usage/summary?${period()}`);
  t.is(status, 200);
  t.is(json.range, 'custom');
  t.is(json.current.from, new Date(traffic.boundary).toISOString());
  t.is(json.previous.to, new Date(traffic.boundary).toISOString());
  t.is(json.previous.from, new Date(traffic.boundary - DAY).toISOString());
  t.like(json.current, { requests: 5, errors: 1, error_rate: 0.2, cache_hits: 0, cache_misses: 0, cache_hit_rate: null, cache_saved_usd: 0 });
  t.is(micro(json.current.cost_usd), micro(3 * ECHO_COST_USD + traffic.embeddingCostUsd));
  t.true(json.current.p95_ms >= json.current.p50_ms && json.current.p50_ms > 0);
  t.like(json.previous, { requests: 2, errors: 1, error_rate: 0.5 });
  t.is(micro(json.previous.cost_usd), micro(ECHO_COST_USD));
  // Top lists: by spend, keys with their names.
  t.like(json.top.keys[0], { group: traffic.keyId, label: traffic.keyName, requests: 3 });
  t.is(micro(json.top.keys[0].cost_usd), micro(3 * ECHO_COST_USD));
  t.deepEqual(
    json.top.users.map((user: { group: string; requests: number }) => [user.group, user.requests]),
    [['alice', 2], ['bob', 2], ['carol', 1]],
  );
  t.is(micro(json.top.users[1].cost_usd), micro(ECHO_COST_USD));
  t.deepEqual(json.top.models.map((model: { group: string }) => model.group).sort(), ['gpt-4o-mini', 'text-embedding-3-small']);
  // A named range ends now: the same traffic is in its current period.
  const hour = await adminJson(gateway, 'GET', '/admin/usage/summary?range=hour');
  t.is(hour.json.range, 'hour');
  t.is(hour.json.current.requests, 7);
  t.is(Date.parse(hour.json.current.to) - Date.parse(hour.json.current.from), 3_600_000);
  t.is(hour.json.previous.to, hour.json.current.from);
});

test('usage splits by end user and by a metadata key, with totals carrying latency and error rate', async (t) => {
  const byUser = await adminJson(gateway, 'GET', `/admin/usage?${period()}&group_by=user`);
  t.is(byUser.status, 200);
  t.like(byUser.json, { range: 'custom', group_by: 'user', bucket_seconds: 300 });
  const totals = Object.fromEntries(byUser.json.totals.map((row: { group: string }) => [row.group, row]));
  t.deepEqual(Object.keys(totals).sort(), ['alice', 'bob', 'carol']);
  t.like(totals.alice, { requests: 2, errors: 0, error_rate: 0 });
  t.like(totals.bob, { requests: 2, errors: 1, error_rate: 0.5 });
  for (const row of byUser.json.totals) t.true(row.p95_ms >= row.p50_ms && row.p50_ms > 0);
  const requestsOf = (series: Array<{ group: string; points: Array<{ requests: number }> }>, group: string) =>
    series.find((line) => line.group === group)!.points.reduce((total, point) => total + point.requests, 0);
  t.is(requestsOf(byUser.json.series, 'bob'), 2);
  t.is(byUser.json.series[0].points.length, 288);

  const byTeam = await adminJson(gateway, 'GET', `/admin/usage?${period()}&group_by=metadata.team`);
  t.is(byTeam.json.group_by, 'metadata.team');
  t.deepEqual(
    byTeam.json.totals.map((row: { group: string; requests: number; errors: number }) => [row.group, row.requests, row.errors]),
    [['ads', 2, 1], ['search', 2, 0], ['(none)', 1, 0]],
  );

  const byKey = await adminJson(gateway, 'GET', `/admin/usage?${period()}&group_by=key`);
  t.like(byKey.json.series.find((line: { group: string }) => line.group === traffic.keyId), { label: traffic.keyName });
  t.like(byKey.json.totals.find((row: { group: string }) => row.group === traffic.keyId), { label: traffic.keyName, requests: 3 });
});

test('bad usage parameters get a 400 naming the parameter', async (t) => {
  for (const query of ['group_by=metadata.', `group_by=metadata.${'k'.repeat(129)}`, 'group_by=users']) {
    const answer = await adminJson(gateway, 'GET', `/admin/usage?${query}`);
    t.is(answer.status, 400, query);
    t.like(answer.json.error, { type: 'invalid_request_error', param: 'group_by' }, query);
  }
  for (const [query, param] of [
    ['from=2026-01-01T00:00:00Z', 'to'],
    ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
    ['range=hour&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z', 'range'],
    ['from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
  ]) {
    for (const path of ['/admin/usage', '/admin/usage/summary']) {
      const answer = await adminJson(gateway, 'GET', `${path}?${query}`);
      t.is(answer.status, 400, `${path}?${query}`);
      t.like(answer.json.error, { type: 'invalid_request_error', param }, `${path}?${query}`);
    }
  }
  const unauthenticated = await fetch(`${gateway.url}/admin/usage/summary`);
  t.is(unauthenticated.status, 401);
});

test('the OpenAPI document describes both usage routes', async (t) => {
  const document = await adminJson(gateway, 'GET', '/admin/openapi.json');
  t.is(document.status, 200);
  t.truthy(document.json.paths['/admin/usage/summary'].get);
  t.deepEqual(document.json.paths['/admin/usage'].get.parameters.map((parameter: { name: string }) => parameter.name), ['range', 'from', 'to', 'group_by']);
  t.truthy(document.json.components.schemas.UsageSummary.properties.previous);
});

test('a Messages request’s metadata.user_id is its end user', async (t) => {
  // A gateway of its own: the other tests count this file's traffic.
  const own = await startGateway();
  try {
    const trace = `usage-${run}-messages`;
    const client = anthropicClient(own.url, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, 'x-gateway-trace-id': trace });
    await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }], metadata: { user_id: 'dave' } });
    await waitForLogs(own, [trace]);
    const logged = await adminJson(own, 'GET', `/admin/logs?trace_id=${trace}`);
    t.like(logged.json.data[0], { operation: 'messages', end_user: 'dave' });
    const byUser = await adminJson(own, 'GET', '/admin/usage?range=hour&group_by=user');
    t.deepEqual(byUser.json.totals.map((row: { group: string; requests: number }) => [row.group, row.requests]), [['dave', 1]]);
  } finally {
    await own.close();
  }
});
