import { readFileSync } from 'node:fs';
import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { openAIChatHandler, startFake, type Fake } from '../fakes/openai-fake.js';
import { PROVIDER_KEY, sdkClient, startGateway, type TestGateway } from '../harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';
import { waitForLogs } from './logs-api.js';
import { parseCsv } from '../logs/csv.js';

// The logs list's second edition against real traffic made through the openai SDK: error code and
// message, stream and cache marks, trace links, the "All errors" filter, body search, CSV and JSONL
// export of the filtered set, and the Live toggle receiving a request made after it opened.
interface Context {
  gateway: TestGateway;
  fake: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  traces: Record<string, string>;
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const run = Math.random().toString(36).slice(2, 8);
const UPSTREAM_MESSAGE = 'The model is overloaded, "try later"';

test.before(async (t) => {
  if (skipReason) return;
  // The browser first: when it cannot start, nothing else is left open to keep this file's process alive.
  const browser = await openBrowser();
  t.context.browser = browser;
  const fake = await startFake((request, response) => {
    const body = request.json();
    if (String(body.messages?.[0]?.content).includes('fail please')) {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: UPSTREAM_MESSAGE, type: 'server_error', param: null, code: 'model_overloaded' } }));
      return;
    }
    return openAIChatHandler(request, response);
  });
  const gateway = await startGateway({ cache: { default: { mode: 'simple' } } });
  const traces: Record<string, string> = {};
  const client = (label: string, trace = `logs2-${run}-${label}`) => {
    traces[label] = trace;
    return sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-metadata': JSON.stringify({ run }) });
  };
  const ask = (label: string, content: string, trace?: string) => client(label, trace).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  await ask('walrus', `Tell me about the walrus. My key is ${PROVIDER_KEY}.`);
  // Asked twice: the second answer comes from the response cache.
  await ask('miss', 'What do penguins eat?');
  await ask('hit', 'What do penguins eat?');
  const stream = await client('stream').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Stream a poem about otters' }], stream: true });
  for await (const _chunk of stream) {
    // drained
  }
  await ask('fail', 'fail please, about walrus tusks').then(() => t.fail('the upstream error should reach the client'), () => undefined);
  // Two requests of one trace.
  const shared = `logs2-${run}-shared`;
  await ask('shared1', 'First step of a shared trace', shared);
  await ask('shared2', 'Second step of a shared trace', shared);
  traces.shared1 = shared;
  traces.shared2 = shared;
  await waitForLogs(gateway, [...new Set(Object.values(traces))]);
  t.context = { gateway, fake, browser, traces };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});

const rowOf = (page: Page, trace: string) => page.locator(`table.logs tbody tr[data-trace-id="${trace}"]`);
const tableTraces = (page: Page) => page.locator('table.logs tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-trace-id')));

/** The table's traces once the list shows `expected` (within 10 s): a filter applied re-renders the list after the old one's status text may still match. */
async function settledTraces(page: Page, expected: readonly string[]): Promise<Array<string | null>> {
  const deadline = Date.now() + 10_000;
  let traces = await tableTraces(page);
  while (JSON.stringify(traces) !== JSON.stringify(expected) && Date.now() < deadline) {
    await page.waitForTimeout(100);
    traces = await tableTraces(page);
  }
  return traces;
}

/** Opens the list of this run's requests (its metadata) with `extra` filters in the address. */
async function openList(t: { context: Context }, extra: Record<string, string> = {}): Promise<Page> {
  const { page } = t.context.browser;
  const query = new URLSearchParams({ metadata_key: 'run', metadata_value: run, ...extra });
  await page.goto(`${t.context.gateway.url}/dashboard#/logs?${query}`);
  await page.locator('main p', { hasText: /^Showing|^No requests/ }).waitFor();
  return page;
}

it('the list shows the error code and message, stream and cache marks, and a trace link to every request of the trace', async (t) => {
  const page = await signInAndOpen(t);
  const { traces } = t.context;
  const failed = rowOf(page, traces.fail);
  t.is(await failed.locator('.status').innerText(), '503');
  t.is(await failed.locator('.error-code').innerText(), 'model_overloaded');
  t.is(await failed.locator('.error-message').innerText(), UPSTREAM_MESSAGE);
  t.is(await rowOf(page, traces.walrus).locator('.error-note').count(), 0, 'a success has no error note');
  t.is(await rowOf(page, traces.stream).locator('td.marks .mark-stream').innerText(), 'stream');
  t.is(await rowOf(page, traces.walrus).locator('td.marks .mark-stream').count(), 0);
  t.is(await rowOf(page, traces.hit).locator('td.marks .mark-hit').innerText(), 'cache hit');
  t.is(await rowOf(page, traces.miss).locator('td.marks').innerText(), 'cache miss');
  await screenshot(page, 'dashboard-logs');

  await rowOf(page, traces.walrus).getByRole('link', { name: `Every request of trace ${traces.walrus}` }).waitFor();
  await rowOf(page, traces.shared1).first().getByRole('link', { name: `Every request of trace ${traces.shared1}` }).click();
  await page.waitForFunction((trace) => decodeURIComponent((globalThis as any).location.hash).includes(`trace_id=${trace}`), traces.shared1);
  await page.locator('main p', { hasText: 'Showing 2 requests' }).waitFor();
  t.deepEqual(await tableTraces(page), [traces.shared1, traces.shared1]);
  t.is(await page.getByLabel('Trace id', { exact: true }).inputValue(), traces.shared1, 'the filter form shows the trace filter');
});

async function signInAndOpen(t: { context: Context }): Promise<Page> {
  const { page } = t.context.browser;
  await signIn(page, t.context.gateway.url);
  return openList(t);
}

it('"All errors" and the body search narrow the table, alone and together', async (t) => {
  const { traces } = t.context;
  let page = await openList(t);
  await page.getByLabel('Status').selectOption({ label: 'All errors' });
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.locator('main p', { hasText: 'Showing 1 request.' }).waitFor();
  t.deepEqual(await tableTraces(page), [traces.fail]);

  page = await openList(t);
  const search = page.getByLabel('Search bodies');
  await search.fill('walrus');
  await search.press('Enter');
  await page.locator('main p', { hasText: 'Showing 2 requests' }).waitFor();
  t.deepEqual(await tableTraces(page), [traces.fail, traces.walrus], 'the request and the failed one both mention walrus, newest first');
  // The provider key in the walrus request's body was redacted before it was stored and indexed.
  await search.fill(PROVIDER_KEY);
  await search.press('Enter');
  await page.locator('main p', { hasText: 'No requests match these filters.' }).waitFor();
  // Search and all errors together.
  await search.fill('walrus');
  await page.getByLabel('Status').selectOption({ label: 'All errors' });
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.locator('main p', { hasText: 'Showing 1 request.' }).waitFor();
  t.deepEqual(await tableTraces(page), [traces.fail]);
  // A word only in a stream's assembled answer body is found too.
  await search.fill('otters');
  await page.getByLabel('Status').selectOption({ label: 'Any' });
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.locator('main p', { hasText: 'Showing 1 request.' }).waitFor();
  t.deepEqual(await settledTraces(page, [traces.stream]), [traces.stream]);
});

it('the export links download the filtered set as CSV and JSONL', async (t) => {
  const { traces } = t.context;
  const page = await openList(t, { q: 'walrus' });
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
  t.regex(csvDownload.suggestedFilename(), /^gateway-logs-.+\.csv$/);
  const rows = parseCsv(readFileSync((await csvDownload.path())!, 'utf8'));
  const [header, ...data] = rows;
  const column = (name: string) => header.indexOf(name);
  t.deepEqual(data.map((row) => row[column('trace_id')]), [traces.fail, traces.walrus]);
  const failed = data[0];
  t.is(failed[column('status')], '503');
  t.is(failed[column('error_code')], 'model_overloaded');
  t.is(failed[column('error_message')], UPSTREAM_MESSAGE);
  t.deepEqual(JSON.parse(failed[column('metadata')]), { run });
  t.false(header.includes('request_body'), 'no bodies unless asked for');

  // With bodies: the stored request bodies, the provider key redacted.
  await page.getByLabel('with bodies').check();
  const [bodiesDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export JSONL' }).click()]);
  const withBodies = readFileSync((await bodiesDownload.path())!, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
  t.deepEqual(withBodies.map((row) => row.trace_id), [traces.fail, traces.walrus]);
  t.is(JSON.parse(withBodies[1].request_body).messages[0].content, 'Tell me about the walrus. My key is [REDACTED].');
  t.false(JSON.stringify(withBodies).includes(PROVIDER_KEY));

  const errors = await openList(t, { status_class: 'errors' });
  const [jsonlDownload] = await Promise.all([errors.waitForEvent('download'), errors.getByRole('link', { name: 'Export JSONL' }).click()]);
  t.regex(jsonlDownload.suggestedFilename(), /^gateway-logs-.+\.jsonl$/);
  const lines = readFileSync((await jsonlDownload.path())!, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
  t.is(lines.length, 1);
  t.like(lines[0], { trace_id: traces.fail, status: 503, error_code: 'model_overloaded', metadata: { run } });
  // The links carry no token in the page; it is added only as they are followed.
  for (const href of await errors.locator('a.export-link').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''))) t.false(href.includes('csrf'), href);
});

it('Live adds a request made after it opened at the top of the table, and only one the filters select', async (t) => {
  const page = await openList(t);
  const before = await tableTraces(page);
  const live = page.getByRole('button', { name: 'Live' });
  await live.click();
  t.is(await live.getAttribute('aria-pressed'), 'true');
  await page.locator('.live-state', { hasText: 'waiting for new requests' }).waitFor();
  // After the tail opened: one request outside the filters (another run), then one inside.
  const outside = `logs2-${run}-outside`;
  await sdkClient(t.context.gateway.url, t.context.fake.baseUrl, { 'x-gateway-trace-id': outside, 'x-gateway-metadata': JSON.stringify({ run: 'other' }) }).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Not for this list' }],
  });
  const fresh = `logs2-${run}-live`;
  await sdkClient(t.context.gateway.url, t.context.fake.baseUrl, { 'x-gateway-trace-id': fresh, 'x-gateway-metadata': JSON.stringify({ run }) }).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'A request made while the tail is open' }],
  });
  await rowOf(page, fresh).waitFor();
  await page.locator('.live-state', { hasText: 'Live: 1 new request.' }).waitFor();
  t.deepEqual(await tableTraces(page), [fresh, ...before], 'prepended, nothing else added');
  t.is(await rowOf(page, fresh).getAttribute('class'), 'live-new');
  t.is(await rowOf(page, fresh).locator('td').nth(1).innerText(), '200');
  await screenshot(page, 'dashboard-logs-live');
  await live.click();
  t.is(await live.getAttribute('aria-pressed'), 'false');
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it('at 800 px wide the list, its tools and its filters fit: only the table scrolls sideways, in its own box', async (t) => {
  const page = await openList(t, { status_class: 'errors' });
  await page.setViewportSize({ width: 800, height: 900 });
  try {
    await page.locator('table.logs tbody tr').first().waitFor();
    const widths = await page.evaluate(() => {
      const document = (globalThis as any).document;
      const box = (selector: string) => document.querySelector(selector).getBoundingClientRect().right;
      return { page: document.documentElement.scrollWidth, form: box('form.filters'), tools: box('.list-tools'), wrap: box('.table-wrap') };
    });
    t.true(widths.page <= 800, `page ${widths.page}`);
    for (const [name, right] of Object.entries(widths)) t.true(right <= 800, `${name} ends at ${right}`);
    await page.getByRole('link', { name: 'Export CSV' }).waitFor();
    t.true(await page.getByRole('button', { name: 'Live' }).isVisible());
    await screenshot(page, 'dashboard-logs-800');
  } finally {
    await page.setViewportSize({ width: 1366, height: 900 });
  }
});
