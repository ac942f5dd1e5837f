import test from 'ava';
import type { LogRecord } from '../../core/logs/record.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, SECRETS, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

async function admin(path: string, key: string | null = ACCOUNT_KEY): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${gateway.url}${path}`, { headers: key ? { 'x-gateway-api-key': key } : {} });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

const assertNoSecrets = (t: import('ava').ExecutionContext, text: string) => {
  for (const secret of SECRETS) t.false(text.includes(secret), 'a secret leaked into an admin answer');
};

test('requests made through the SDK are listed newest first, filterable, and their detail holds redacted bodies', async (t) => {
  const trace = traceId('admin-logs');
  const model = `model-${trace}`;
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-metadata': JSON.stringify({ team: trace }) });
  // The provider key also sits in the message text: the stored body must not hold it.
  await client.chat.completions.create({ model, messages: [{ role: 'user', content: `my key is ${PROVIDER_KEY}, say hi` }] });
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'stream please' }], stream: true });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
  await gateway.gateway.flushLogs();

  const byTrace = await admin(`/admin/logs?trace_id=${encodeURIComponent(trace)}`);
  t.is(byTrace.status, 200);
  t.is(byTrace.body.data.length, 2);
  t.is(byTrace.body.next_cursor, null);
  const [newest, oldest] = byTrace.body.data as LogRecord[];
  t.true(newest.time >= oldest.time);
  t.like(newest, { trace_id: trace, model: 'gpt-4o-mini', streaming: true, status: 200, caller_type: 'account', provider: 'openai', operation: 'chat' });
  t.like(oldest, { streaming: false, prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, metadata: { team: trace } });
  t.false('request_body' in oldest, 'lists carry no bodies');
  t.is(typeof oldest.latency_ms, 'number');
  t.is(typeof oldest.gateway_ms, 'number');
  t.is(typeof oldest.upstream_ms, 'number');
  t.is(typeof newest.ttft_ms, 'number');

  const byMetadata = await admin(`/admin/logs?metadata_key=team&metadata_value=${encodeURIComponent(trace)}`);
  t.deepEqual(
    byMetadata.body.data.map((row: LogRecord) => row.id),
    [newest.id, oldest.id],
  );
  const byModel = await admin(`/admin/logs?model=gpt-4o-mini&trace_id=${encodeURIComponent(trace)}&status_class=2xx&key=account&provider=openai`);
  t.deepEqual(
    byModel.body.data.map((row: LogRecord) => row.id),
    [newest.id],
  );

  const detail = await admin(`/admin/logs/${oldest.id}`);
  t.is(detail.status, 200);
  const request = JSON.parse(detail.body.request_body);
  t.is(request.model, model);
  t.is(request.messages[0].content, 'my key is [REDACTED], say hi');
  t.is(JSON.parse(detail.body.response_body).choices[0].message.content, 'Hello! How can I assist you today?');
  const streamedDetail = await admin(`/admin/logs/${newest.id}`);
  t.is(JSON.parse(streamedDetail.body.response_body).content, streamed, 'the stream is assembled into its text');
  t.true(streamed.length > 0);
  for (const answer of [byTrace, byMetadata, byModel, detail, streamedDetail]) assertNoSecrets(t, answer.text);
});

test('pagination walks every row once with next_cursor', async (t) => {
  const trace = traceId('pages');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace });
  for (let index = 0; index < 7; index++) await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: `n${index}` }] });
  await gateway.gateway.flushLogs();
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: { body: { data: LogRecord[]; next_cursor: string | null } } = await admin(
      `/admin/logs?trace_id=${trace}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    seen.push(...page.body.data.map((row) => row.id));
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor);
  t.is(pages, 3);
  t.is(seen.length, 7);
  t.is(new Set(seen).size, 7);
});

test('x-gateway-log-bodies: false keeps that request\'s bodies out of the log', async (t) => {
  const trace = traceId('no-bodies');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-log-bodies': 'false' });
  await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'private' }] });
  await gateway.gateway.flushLogs();
  const list = await admin(`/admin/logs?trace_id=${trace}`);
  const detail = await admin(`/admin/logs/${list.body.data[0].id}`);
  t.is(detail.body.request_body, null);
  t.is(detail.body.response_body, null);
});

test('rejected requests are logged too, with the error and the rejected body', async (t) => {
  const trace = traceId('rejected');
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': 'gw-wrong-key-value-123456', 'x-gateway-trace-id': trace, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(response.status, 401);
  await gateway.gateway.flushLogs();
  const list = await admin(`/admin/logs?trace_id=${trace}&status_class=4xx`);
  t.is(list.body.data.length, 1);
  t.like(list.body.data[0], { status: 401, outcome: 'error', error_type: 'authentication_error', caller_type: null });
  const detail = await admin(`/admin/logs/${list.body.data[0].id}`);
  t.is(JSON.parse(detail.body.response_body).error.type, 'authentication_error');
  t.false(detail.text.includes('gw-wrong-key-value-123456'));
});

test('usage buckets count exactly the requests made, per model, with tokens', async (t) => {
  // A gateway of its own, so that the other tests' requests do not land in its buckets.
  const own = await startGateway();
  try {
    const client = sdkClient(own.url, fake.baseUrl);
    for (let index = 0; index < 3; index++) await client.chat.completions.create({ model: 'asked', messages: [{ role: 'user', content: 'x' }] });
    await own.gateway.flushLogs();
    const response = await fetch(`${own.url}/admin/usage?range=hour&group_by=model`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
    const usage: any = await response.json();
    t.is(response.status, 200);
    t.is(usage.range, 'hour');
    t.is(usage.bucket_seconds, 60);
    // Grouped by the model the provider answered with.
    t.deepEqual(usage.series.map((entry: { group: string }) => entry.group), ['gpt-4.1-2025-04-14']);
    const points = usage.series[0].points;
    t.is(points.length, 60);
    const sum = (field: string) => points.reduce((total: number, point: Record<string, number>) => total + point[field], 0);
    t.is(sum('requests'), 3);
    t.is(sum('errors'), 0);
    t.is(sum('prompt_tokens'), 57);
    t.is(sum('completion_tokens'), 30);
    const busy = points.filter((point: { requests: number }) => point.requests > 0);
    for (const point of busy) t.true(point.p50_ms > 0 && point.p95_ms >= point.p50_ms);
    t.true(Date.parse(points.at(-1).t) <= Date.now());
    for (const point of points) t.deepEqual(Object.keys(point).sort(), ['cache_hits', 'cache_misses', 'cache_saved_usd', 'completion_tokens', 'cost_usd', 'errors', 'p50_ms', 'p95_ms', 'prompt_tokens', 'requests', 't']);
    const week: any = await (await fetch(`${own.url}/admin/usage?range=week`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json();
    t.is(week.bucket_seconds, 3600);
    t.is(week.series[0].group, 'all');
    t.is(week.series[0].points.length, 168);
  } finally {
    await own.close();
  }
});

test('admin log routes need the account key and answer bad input with a 400 naming the parameter', async (t) => {
  t.is((await admin('/admin/logs', null)).status, 401);
  t.is((await admin('/admin/usage', null)).status, 401);
  t.is((await admin('/admin/logs/x', 'gw-not-the-key-0000000000')).status, 401);
  for (const [query, param] of [
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['from=yesterday', 'from'],
    ['status_class=6xx', 'status_class'],
    ['cursor=nonsense', 'cursor'],
    ['metadata_value=x', 'metadata_value'],
    ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
  ]) {
    const answer = await admin(`/admin/logs?${query}`);
    t.is(answer.status, 400, query);
    t.like(answer.body.error, { type: 'invalid_request_error', param });
  }
  t.like((await admin('/admin/usage?range=year')).body.error, { param: 'range' });
  t.like((await admin('/admin/usage?group_by=color')).body.error, { param: 'group_by' });
  const missing = await admin('/admin/logs/no-such-entry');
  t.is(missing.status, 404);
  t.like(missing.body.error, { type: 'not_found_error', code: 'log_not_found' });
});

test('pass-through requests are logged too, without bodies', async (t) => {
  const trace = traceId('passthrough');
  // /v1/files is not a unified operation: it passes through.
  const response = await fetch(`${gateway.url}/v1/files`, {
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-trace-id': trace },
  });
  t.is(response.status, 200);
  await response.arrayBuffer();
  await gateway.gateway.flushLogs();
  const list = await admin(`/admin/logs?trace_id=${trace}`);
  t.is(list.body.data.length, 1);
  t.like(list.body.data[0], { operation: 'passthrough', method: 'GET', path: '/v1/files', status: 200, provider: 'openai', caller_type: 'account' });
  const detail = await admin(`/admin/logs/${list.body.data[0].id}`);
  t.is(detail.body.request_body, null);
  t.is(detail.body.response_body, null);
  assertNoSecrets(t, detail.text);
});

test('a body-logging rule decides per request (caller, metadata)', async (t) => {
  const own = await startGateway({ logs: { bodies: (request) => request.caller?.type === 'account' && request.metadata.tenant !== 'private' } });
  try {
    const client = (tenant: string) => sdkClient(own.url, fake.baseUrl, { 'x-gateway-metadata': JSON.stringify({ tenant }) });
    await client('public').chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'logged' }] });
    await client('private').chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'not logged' }] });
    await own.gateway.flushLogs();
    const bodies = async (tenant: string) => {
      const [row] = (await own.gateway.logStore.list({ limit: 1, metadataKey: 'tenant', metadataValue: tenant })).data;
      return own.gateway.logStore.get(row.id);
    };
    t.regex((await bodies('public'))?.request_body ?? '', /logged/);
    t.is((await bodies('private'))?.request_body, null);
    t.is((await bodies('private'))?.response_body, null);
  } finally {
    await own.close();
  }
});

test('no secret reaches the log database, its WAL, the spill files or the pino log', async (t) => {
  const own = await startGateway();
  try {
    const client = sdkClient(own.url, fake.baseUrl, { 'x-gateway-metadata': JSON.stringify({ note: 'secrets' }) });
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: `keys: ${PROVIDER_KEY} ${ACCOUNT_KEY}` }] });
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: PROVIDER_KEY }], stream: true });
    for await (const _chunk of stream) {
      // drain
    }
    await fetch(`${own.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json', authorization: `Bearer ${PROVIDER_KEY}` },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: PROVIDER_KEY }] }), // no provider header: 400
    });
    await own.gateway.flushLogs();
    t.is(await own.gateway.logStore.count(), 3);
    await own.close();
    const { readdirSync, readFileSync, statSync } = await import('node:fs');
    const { join } = await import('node:path');
    const files: string[] = [];
    const walk = (directory: string) => {
      for (const name of readdirSync(directory)) {
        const path = join(directory, name);
        if (statSync(path).isDirectory()) walk(path);
        else files.push(path);
      }
    };
    walk(own.gateway.config.dataDir);
    t.true(files.some((file) => file.endsWith('logs.db')));
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const secret of SECRETS) t.false(bytes.includes(secret), `${secret} found in ${file}`);
    }
    for (const secret of SECRETS) t.false(own.rawLog().includes(secret));
  } finally {
    await own.close();
  }
});
