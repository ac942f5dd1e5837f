import test from 'ava';
import type { LogRecord } from '../../core/logs/record.js';
import { openAIChatHandler, type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, SECRETS, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';
import { DATABASE_URL, dropSchemas, postgresReachable, uniqueSchema } from './fixtures.js';
import { parseCsv } from './csv.js';

const postgres = await postgresReachable();
if (!postgres.ok) console.log(`PostgreSQL live-tail test skipped: ${postgres.reason}`);
const schemas: string[] = [];

/** A message with a comma, quotes and a line break: CSV must quote it. */
const UPSTREAM_MESSAGE = 'Upstream said: "no", then\nstopped';
/** A model name a spreadsheet would run as a formula. */
const FORMULA_MODEL = '=HYPERLINK("http://x","y")';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake((request, response) => {
    const body = request.json();
    if (String(body.messages?.[0]?.content).includes('fail please')) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: UPSTREAM_MESSAGE, type: 'server_error', param: null, code: 'upstream_broke' } }));
      return;
    }
    return openAIChatHandler(request, response);
  });
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
  await dropSchemas(schemas);
});

const adminHeaders = { 'x-gateway-api-key': ACCOUNT_KEY };

async function get(path: string, headers: Record<string, string> = adminHeaders) {
  const response = await fetch(`${gateway.url}${path}`, { headers });
  return { response, text: await response.text() };
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta'];

/** Sends requests through the SDK, tagged with `run` in their metadata; the last one fails upstream. */
async function traffic(run: string, count: number): Promise<string[]> {
  const traces: string[] = [];
  for (let index = 0; index < count; index++) {
    const trace = traceId(`export-${index}`);
    traces.push(trace);
    const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-metadata': JSON.stringify({ run, note: 'a, "b"' }) });
    const fail = index === count - 1;
    const call = client.chat.completions.create({ model: fail ? FORMULA_MODEL : 'gpt-4o-mini', messages: [{ role: 'user', content: fail ? 'fail please' : `export walrus ${WORDS[index]}` }] });
    if (fail) await call.then(() => Promise.reject(new Error('the upstream error should reach the client')), () => undefined);
    else await call;
  }
  await gateway.gateway.flushLogs();
  return traces;
}

test.serial('CSV and JSONL exports hold exactly the filtered rows, newest first, escaped, streamed as an attachment', async (t) => {
  const run = traceId('run');
  const traces = await traffic(run, 4);
  const filter = `metadata_key=run&metadata_value=${encodeURIComponent(run)}`;
  const listed = JSON.parse((await get(`/admin/logs?${filter}`)).text).data as LogRecord[];
  t.is(listed.length, 4);

  const csv = await get(`/admin/logs/export?format=csv&${filter}`);
  t.is(csv.response.status, 200);
  t.is(csv.response.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(csv.response.headers.get('content-disposition') ?? '', /^attachment; filename="gateway-logs-[0-9TZ-]+\.csv"$/);
  t.is(csv.response.headers.get('transfer-encoding'), 'chunked', 'streamed, not sent with a length known up front');
  const [header, ...rows] = parseCsv(csv.text);
  t.is(header[0], 'id');
  t.true(header.includes('error_message') && header.includes('metadata') && header.includes('cache_status') && header.includes('route_target'));
  const column = (name: string) => header.indexOf(name);
  t.deepEqual(rows.map((row) => row[column('id')]), listed.map((row) => row.id), 'the same rows in the same order as the list');
  t.deepEqual(rows.map((row) => row[column('trace_id')]).sort(), [...traces].sort());
  const failed = rows.find((row) => row[column('status')] === '500')!;
  t.is(failed[column('error_message')], UPSTREAM_MESSAGE, 'comma, quotes and line break survive');
  t.is(failed[column('error_code')], 'upstream_broke');
  t.is(failed[column('model')], `'${FORMULA_MODEL}`, 'a formula-like text is neutralised');
  t.is(failed[column('outcome')], 'error');
  const ok = rows.find((row) => row[column('status')] === '200')!;
  t.deepEqual(JSON.parse(ok[column('metadata')]), { run, note: 'a, "b"' });
  t.is(ok[column('streaming')], 'false');
  t.is(Number(ok[column('total_tokens')]), 29);
  t.true(rows.every((row) => row.length === header.length));

  const jsonl = await get(`/admin/logs/export?format=jsonl&${filter}`);
  t.is(jsonl.response.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
  t.regex(jsonl.response.headers.get('content-disposition') ?? '', /\.jsonl"$/);
  t.true(jsonl.text.endsWith('\n'));
  const records = jsonl.text.trimEnd().split('\n').map((line) => JSON.parse(line));
  t.deepEqual(records, listed, 'each line is the list row, field for field');

  // The same filters as the list: all errors, search.
  const errors = await get(`/admin/logs/export?format=jsonl&${filter}&errors=true`);
  t.deepEqual(errors.text.trimEnd().split('\n').map((line) => JSON.parse(line).trace_id), [traces[3]]);
  const searched = await get(`/admin/logs/export?format=jsonl&${filter}&q=${encodeURIComponent('walrus bravo')}`);
  t.deepEqual(searched.text.trimEnd().split('\n').map((line) => JSON.parse(line).trace_id), [traces[1]]);
  const none = await get(`/admin/logs/export?format=csv&${filter}&q=nothinglikeit`);
  t.is(none.text, `${header.join(',')}\r\n`, 'no rows: the header alone');
  for (const text of [csv.text, jsonl.text]) for (const secret of SECRETS) t.false(text.includes(secret));
});

test.serial('an export with bodies=true carries the stored, redacted bodies of each row (CSV: two more columns)', async (t) => {
  const run = traceId('bodies');
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-metadata': JSON.stringify({ run }) });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `body one, key ${PROVIDER_KEY}` }] });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'body "two"' }] });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'not logged' }] }, { headers: { 'x-gateway-log-bodies': 'false' } });
  await gateway.gateway.flushLogs();
  const filter = `metadata_key=run&metadata_value=${encodeURIComponent(run)}`;
  const jsonl = await get(`/admin/logs/export?format=jsonl&bodies=true&${filter}`);
  const rows = jsonl.text.trimEnd().split('\n').map((line) => JSON.parse(line));
  t.is(rows.length, 3);
  const [unlogged, two, one] = rows;
  t.is(unlogged.request_body, null, 'a request whose bodies were not stored');
  t.is(unlogged.response_body, null);
  t.is(JSON.parse(two.request_body).messages[0].content, 'body "two"');
  t.is(JSON.parse(one.request_body).messages[0].content, 'body one, key [REDACTED]');
  t.is(JSON.parse(one.response_body).choices[0].message.content, 'Hello! How can I assist you today?');
  const csv = await get(`/admin/logs/export?format=csv&bodies=true&${filter}`);
  const [header, ...csvRows] = parseCsv(csv.text);
  t.deepEqual(header.slice(-2), ['request_body', 'response_body']);
  t.deepEqual(csvRows.map((row) => row[header.length - 2]), ['', two.request_body, one.request_body]);
  for (const text of [jsonl.text, csv.text]) for (const secret of SECRETS) t.false(text.includes(secret));
  // Without bodies=true, none.
  const plain = JSON.parse((await get(`/admin/logs/export?format=jsonl&${filter}`)).text.split('\n')[0]);
  t.false('request_body' in plain);
});

test.serial('an export walks every page of a set larger than one store page', async (t) => {
  const run = traceId('many');
  const total = 520;
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-metadata': JSON.stringify({ run }) });
  for (let index = 0; index < total; index += 20) {
    await Promise.all(Array.from({ length: 20 }, () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })));
  }
  await gateway.gateway.flushLogs();
  const jsonl = await get(`/admin/logs/export?format=jsonl&metadata_key=run&metadata_value=${encodeURIComponent(run)}`);
  const ids = jsonl.text.trimEnd().split('\n').map((line) => JSON.parse(line).id as string);
  t.is(ids.length, total);
  t.is(new Set(ids).size, total, 'no row twice');
  const csv = await get(`/admin/logs/export?format=csv&metadata_key=run&metadata_value=${encodeURIComponent(run)}`);
  t.is(parseCsv(csv.text).length, total + 1);
});

test.serial('bad export and tail parameters get a JSON error naming the parameter', async (t) => {
  for (const [path, param] of [
    ['/admin/logs/export', 'format'],
    ['/admin/logs/export?format=xml', 'format'],
    ['/admin/logs/export?format=csv&q=%20--%20', 'q'],
    ['/admin/logs/export?format=csv&errors=yes', 'errors'],
    ['/admin/logs/tail?to=2026-01-01T00:00:00Z', 'to'],
    ['/admin/logs?q=***', 'q'],
  ] as const) {
    const { response, text } = await get(path);
    t.is(response.status, 400, path);
    t.like(JSON.parse(text), { error: { param, code: 'invalid_query', type: 'invalid_request_error' } }, path);
  }
  t.is((await get('/admin/logs/export?format=csv', {})).response.status, 401);
  t.is((await get('/admin/logs/tail', {})).response.status, 401);
});

test.serial("the dashboard's session opens an export and a tail with the CSRF token in the query, and nothing else with it there", async (t) => {
  const signIn = await fetch(`${gateway.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: ACCOUNT_KEY }) });
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
  const { csrf_token: csrf } = (await signIn.json()) as { csrf_token: string };
  t.is((await get(`/admin/logs/export?format=csv&csrf=${csrf}`, { cookie })).response.status, 200);
  t.is((await get('/admin/logs/export?format=csv', { cookie })).response.status, 401, 'the cookie alone is not enough');
  t.is((await get(`/admin/logs/export?format=csv&csrf=${csrf}x`, { cookie })).response.status, 401);
  t.is((await get(`/admin/logs?csrf=${csrf}`, { cookie })).response.status, 401, 'other routes want the header');
  const controller = new AbortController();
  const tail = await fetch(`${gateway.url}/admin/logs/tail?csrf=${csrf}`, { headers: { cookie }, signal: controller.signal });
  t.is(tail.status, 200);
  t.is(tail.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  controller.abort();
});

type SseEvent = { event: string; data: string; id?: string };

/** Reads a response's server-sent events; `until` resolves with the events up to the first one it accepts. */
function eventReader(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return async function until(accept: (event: SseEvent) => boolean): Promise<SseEvent[]> {
    const events: SseEvent[] = [];
    for (;;) {
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith(':')) continue;
        const event: SseEvent = { event: 'message', data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event.event = line.slice(7);
          else if (line.startsWith('data: ')) event.data += line.slice(6);
          else if (line.startsWith('id: ')) event.id = line.slice(4);
        }
        events.push(event);
        if (accept(event)) return events;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`the tail ended; events so far: ${JSON.stringify(events)}`);
      buffer += value;
    }
  };
}

async function tailSees(t: import('ava').ExecutionContext, tailed: TestGateway, writer: TestGateway): Promise<void> {
  const run = traceId('tail');
  const tagged = (trace: string) => sdkClient(writer.url, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-metadata': JSON.stringify({ run }) });
  const before = traceId('before');
  await tagged(before).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'before the tail' }] });
  await writer.gateway.flushLogs();

  const controller = new AbortController();
  const tail = await fetch(`${tailed.url}/admin/logs/tail?metadata_key=run&metadata_value=${encodeURIComponent(run)}`, { headers: adminHeaders, signal: controller.signal });
  t.is(tail.status, 200);
  try {
    const until = eventReader(tail);
    const opening = await until((event) => event.event === 'ready');
    t.is(opening.at(-1)!.event, 'ready');
    // Made after the tail opened: one that the filter leaves out, then the one it wants.
    const other = traceId('other');
    await sdkClient(writer.url, fake.baseUrl, { 'x-gateway-trace-id': other, 'x-gateway-metadata': JSON.stringify({ run: 'another' }) }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'not this one' }],
    });
    const after = traceId('after');
    await tagged(after).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after the tail opened' }] });
    const events = await until((event) => event.event === 'log' && JSON.parse(event.data).trace_id === after);
    const logged = events.filter((event) => event.event === 'log').map((event) => JSON.parse(event.data) as LogRecord);
    t.deepEqual(logged.map((row) => row.trace_id), [after], 'only the new request the filter selects, not the one before the tail nor the other one');
    t.like(logged[0], { status: 200, provider: 'openai', metadata: { run } });
    t.is(events.at(-1)!.id, logged[0].id);
    t.false('request_body' in logged[0]);
  } finally {
    controller.abort();
  }
}

test.serial('a live tail receives a request made after it opened, filtered like the list', async (t) => {
  await tailSees(t, gateway, gateway);
});

test.serial('a tail reopened with Last-Event-ID resumes after that row: what was logged while it was away arrives', async (t) => {
  const run = traceId('resume');
  const ask = async (label: string) => {
    const trace = traceId(label);
    await sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-metadata': JSON.stringify({ run }) }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: label }],
    });
    return trace;
  };
  const seen = await ask('seen');
  await gateway.gateway.flushLogs();
  const [seenRow] = JSON.parse((await get(`/admin/logs?trace_id=${seen}`)).text).data as LogRecord[];
  // Logged while the client was disconnected.
  const missed = await ask('missed');
  await gateway.gateway.flushLogs();
  const controller = new AbortController();
  const tail = await fetch(`${gateway.url}/admin/logs/tail?metadata_key=run&metadata_value=${encodeURIComponent(run)}`, {
    headers: { ...adminHeaders, 'last-event-id': seenRow.id },
    signal: controller.signal,
  });
  try {
    const events = await eventReader(tail)((event) => event.event === 'log');
    const logged = events.filter((event) => event.event === 'log').map((event) => JSON.parse(event.data) as LogRecord);
    t.deepEqual(logged.map((row) => row.trace_id), [missed], 'the missed row, not the one the client had');
  } finally {
    controller.abort();
  }
});

(postgres.ok ? test.serial : test.skip)('with PostgreSQL a tail on one instance receives the requests another instance serves', async (t) => {
  const schema = uniqueSchema('tail');
  schemas.push(schema);
  const [first, second] = await Promise.all([
    startGateway({ logs: { postgresSchema: schema } }, { DATABASE_URL }),
    startGateway({ logs: { postgresSchema: schema } }, { DATABASE_URL }),
  ]);
  try {
    await tailSees(t, first, second);
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
});

test('the admin OpenAPI document describes search, the errors filter, the export and the tail', async (t) => {
  const document = (await (await fetch(`${gateway.url}/admin/openapi.json`)).json()) as any;
  const names = (path: string) => (document.paths[path].get.parameters as Array<{ name: string }>).map((parameter) => parameter.name);
  for (const path of ['/admin/logs', '/admin/logs/export', '/admin/logs/tail']) {
    t.true(names(path).includes('q'), path);
    t.true(names(path).includes('errors'), path);
  }
  t.deepEqual(document.paths['/admin/logs/export'].get.parameters[0], { name: 'format', in: 'query', required: true, schema: { enum: ['csv', 'jsonl'] } });
  t.truthy(document.paths['/admin/logs/tail'].get.responses[200].content['text/event-stream']);
  t.truthy(document.components.schemas.LogRow.properties.cache_status);
});

test('with GATEWAY_LOG_SEARCH=false a search is refused with a JSON error naming q, and the list still works', async (t) => {
  const unsearchable = await startGateway({}, { GATEWAY_LOG_SEARCH: 'false' });
  try {
    const trace = traceId('no-search');
    await sdkClient(unsearchable.url, fake.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello otter' }] });
    await unsearchable.gateway.flushLogs();
    for (const path of ['/admin/logs?q=otter', '/admin/logs/export?format=csv&q=otter', '/admin/logs/tail?q=otter']) {
      const response = await fetch(`${unsearchable.url}${path}`, { headers: adminHeaders });
      t.is(response.status, 400, path);
      t.like(await response.json(), { error: { param: 'q', code: 'invalid_query' } }, path);
    }
    const listed = await fetch(`${unsearchable.url}/admin/logs?trace_id=${trace}`, { headers: adminHeaders });
    t.is(((await listed.json()) as { data: unknown[] }).data.length, 1);
  } finally {
    await unsearchable.close();
  }
});
