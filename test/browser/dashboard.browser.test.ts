import type { Page } from 'playwright-core';
import { openAIFixture, startFake, type Fake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, sdkClient, startGateway, type TestGateway } from '../harness.js';
import anyTest, { type TestFn } from 'ava';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';
import { waitForLogs } from './logs-api.js';

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
const MARKUP = '<img src=x onerror="document.title=1" id=injected>';
// model per request: three of one, two of another; one request the upstream fails with 500.
const REQUESTS: Array<{ label: string; model: string; fail?: boolean }> = [
  { label: 'a', model: 'gpt-4o-mini' },
  { label: 'b', model: 'gpt-4o-mini' },
  { label: 'c', model: 'gpt-4o-mini' },
  { label: 'd', model: 'gpt-4.1-nano' },
  { label: 'e', model: 'gpt-4.1-nano' },
  { label: 'f', model: 'gpt-4o-mini', fail: true },
  // Logged values are data, never markup: this one must show up as text.
  { label: 'x', model: MARKUP },
];

test.before(async (t) => {
  if (skipReason) return;
  // The browser first: when it cannot start, nothing else is left open to keep this file's process alive.
  const browser = await openBrowser();
  t.context.browser = browser;
  const fake = await startFake((request, response) => {
    const body = request.json();
    if (String(body.messages?.[0]?.content).includes('fail please')) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } }));
      return;
    }
    // The recorded completion, answered for the model that was asked for.
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...JSON.parse(openAIFixture('chat-completion.json')), model: body.model }));
  });
  const gateway = await startGateway();
  const traces: Record<string, string> = {};
  for (const { label, model, fail } of REQUESTS) {
    const traceId = `dash-${run}-${label}`;
    traces[label] = traceId;
    const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': traceId, 'x-gateway-metadata': JSON.stringify({ team: label === 'a' ? 'search' : 'ads', run }) });
    const call = client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: fail ? 'fail please' : `Say hello (${label}). The provider key is ${PROVIDER_KEY}.` }],
    });
    if (fail) await call.then(() => t.fail('the upstream error should reach the client'), () => undefined);
    else await call;
  }
  await waitForLogs(gateway, Object.values(traces));
  t.context = { gateway, fake, browser, traces };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});

const tableTraceIds = (page: Page) => page.locator('table.logs tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-trace-id')));

/** Waits until the page's address (hash) mentions `text`. */
const hashIncludes = (page: Page, text: string) =>
  page.waitForFunction((expected) => decodeURIComponent((globalThis as any).location.hash).includes(expected), text);

/**
 * Runs `change` and waits for the page it renders to say `outcome`. The page before it may say the
 * same ("Showing …"), and the hash changes before the page renders again: its paragraphs are marked
 * first, and only a new one counts.
 */
async function freshList(page: Page, change: () => Promise<void>, outcome: RegExp = /^Showing/): Promise<void> {
  await page.locator('main p').evaluateAll((lines) => lines.forEach((line) => line.setAttribute('data-before', '')));
  await change();
  await page.locator('main p:not([data-before])', { hasText: outcome }).waitFor();
}

async function applyFilter(page: Page, label: string, value: string, outcome: RegExp = /^Showing|^No requests/): Promise<void> {
  // Clearing filters re-renders the list (and its form): wait for the new one before typing into it.
  const filtered = await page.evaluate(() => String((globalThis as any).location.hash).includes('?'));
  if (filtered) await freshList(page, () => page.getByRole('link', { name: 'Clear' }).click(), /^Showing|^No requests/);
  await page.locator('table.logs').waitFor();
  const input = page.getByLabel(label, { exact: true });
  await input.fill(value);
  await freshList(
    page,
    async () => {
      await input.press('Enter');
      await hashIncludes(page, value);
    },
    outcome,
  );
}

it('signing in with the account key shows the SDK’s requests in the logs table', async (t) => {
  const { page, context } = t.context.browser;
  await page.goto(`${t.context.gateway.url}/dashboard`);
  await screenshot(page, 'dashboard-sign-in');
  // A wrong key is refused on the form.
  await page.getByLabel('Account API key').fill('gw-wrong-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'not the account API key' }).waitFor();

  await signIn(page, t.context.gateway.url);
  await page.locator('table.logs tbody tr').first().waitFor();
  t.deepEqual((await tableTraceIds(page)).sort(), Object.values(t.context.traces).sort());
  const cookies = await context.cookies();
  const session = cookies.find((cookie) => cookie.name === 'gateway_session');
  t.truthy(session);
  t.true(session!.httpOnly);
  t.is(session!.sameSite, 'Strict');
  t.not(session!.value, ACCOUNT_KEY);
  // The page keeps neither the key nor the session in script-readable storage.
  const stored = await page.evaluate(() => {
    const window = globalThis as any;
    return JSON.stringify({ local: { ...window.localStorage }, session: { ...window.sessionStorage }, cookie: window.document.cookie });
  });
  t.is(stored, JSON.stringify({ local: {}, session: {}, cookie: '' }));
  const firstRow = page.locator(`table.logs tbody tr[data-trace-id="${t.context.traces.a}"]`);
  t.deepEqual((await firstRow.locator('td').allInnerTexts()).slice(1, 5), ['200', 'openai', 'gpt-4o-mini', 'account']);
  t.regex(await firstRow.locator('td').nth(6).innerText(), /^29$/);
  const markupRow = page.locator(`table.logs tbody tr[data-trace-id="${t.context.traces.x}"]`);
  t.is(await markupRow.locator('td').nth(3).innerText(), MARKUP);
  t.is(await page.locator('#injected').count(), 0);
  t.not(await page.title(), '1');
});

it('filtering by model, trace id, status class, metadata and key narrows the table', async (t) => {
  const { page } = t.context.browser;
  await applyFilter(page, 'Model', 'gpt-4.1-nano');
  t.deepEqual((await tableTraceIds(page)).sort(), [t.context.traces.d, t.context.traces.e]);
  t.deepEqual(await page.locator('table.logs tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-model'))), ['gpt-4.1-nano', 'gpt-4.1-nano']);

  await applyFilter(page, 'Trace id', t.context.traces.b);
  t.deepEqual(await tableTraceIds(page), [t.context.traces.b]);

  await page.getByRole('link', { name: 'Clear' }).click();
  await page.locator('table.logs').waitFor();
  await page.getByLabel('Status').selectOption('5xx');
  await freshList(page, async () => {
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await hashIncludes(page, 'status_class=5xx');
  });
  t.deepEqual(await tableTraceIds(page), [t.context.traces.f]);

  // A value without its key is refused by the API, and the page says so next to the filters.
  await applyFilter(page, 'Metadata value', 'search', /metadata_value needs metadata_key/);
  await page.getByLabel('Metadata key', { exact: true }).fill('team');
  await page.getByLabel('Metadata key', { exact: true }).press('Enter');
  await hashIncludes(page, 'metadata_key=team');
  await page.locator('p.muted', { hasText: /^Showing/ }).waitFor();
  t.deepEqual(await tableTraceIds(page), [t.context.traces.a]);

  // The key cell adds a key filter to the ones in place.
  await freshList(page, async () => {
    await page.locator(`table.logs tbody tr[data-trace-id="${t.context.traces.a}"] a.quiet`).click();
    await hashIncludes(page, 'key=account');
  });
  t.true(await page.evaluate(() => (globalThis as any).location.hash.includes('metadata_key=team')));
  t.deepEqual(await tableTraceIds(page), [t.context.traces.a]);
});

it('the detail view shows timings and the pretty-printed request body with the provider key redacted', async (t) => {
  const { page } = t.context.browser;
  await applyFilter(page, 'Trace id', t.context.traces.a);
  await page.locator(`table.logs tbody tr[data-trace-id="${t.context.traces.a}"] a.open-detail`).click();
  await page.getByRole('tab', { name: 'Raw JSON' }).click();
  const requestBody = page.locator('#request-body pre');
  await requestBody.waitFor();
  const text = await requestBody.innerText();
  t.true(text.includes('"model": "gpt-4o-mini"'), text);
  t.true(text.includes('Say hello (a). The provider key is'), text);
  t.false(text.includes(PROVIDER_KEY));
  t.true(text.includes('\n  "messages": ['), 'pretty-printed');
  t.true((await page.locator('#response-body pre').innerText()).includes('Hello! How can I assist you today?'));
  const timings = await page.locator('section[aria-labelledby="d-timings"] dd').allInnerTexts();
  t.is(timings.length, 4);
  t.regex(timings[0], /^\d+(\.\d)? ms$/);
  t.regex(timings[2], /^\d+(\.\d)? ms$/);
  t.true((await page.locator('section[aria-labelledby="d-meta"]').innerText()).includes('search'));
  t.true((await page.locator('section[aria-labelledby="d-guardrails"]').innerText()).length > 0);
  const html = await page.content();
  t.false(html.includes(PROVIDER_KEY));
  t.false(html.includes(ACCOUNT_KEY));
  await page.getByRole('link', { name: '← Back to logs' }).click();
  await page.locator('table.logs tbody tr').first().waitFor();
});

it('the usage charts draw the test’s requests, split by model', async (t) => {
  const { page } = t.context.browser;
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByLabel('Period').selectOption('hour');
  await page.getByLabel('Split by').selectOption('model');
  await page.getByRole('button', { name: 'Show' }).click();
  await hashIncludes(page, 'group_by=model');
  // Wait for the split chart itself: until it is drawn, the previous (unsplit) one is still shown.
  await page.locator('svg.chart[data-metric="requests"] g.series[data-group="gpt-4o-mini"] circle.point').first().waitFor();
  const sumOf = async (metric: string, group: string) =>
    page
      .locator(`svg.chart[data-metric="${metric}"] g.series[data-group="${group}"] circle.point`)
      .evaluateAll((points) => points.reduce((total, point) => total + Number(point.getAttribute('data-value')), 0));
  t.is(await sumOf('requests', 'gpt-4o-mini'), 4);
  t.is(await sumOf('requests', 'gpt-4.1-nano'), 2);
  t.is(await sumOf('errors', 'gpt-4o-mini'), 1);
  t.is(await sumOf('errors', 'gpt-4.1-nano'), 0);
  t.is(await sumOf('tokens', 'gpt-4.1-nano'), 2 * 29);
  const times = await page.locator('svg.chart[data-metric="requests"] circle.point').evaluateAll((points) => points.map((point) => Date.parse(point.getAttribute('data-t') ?? '')));
  for (const time of times) t.true(time > Date.now() - 3600e3 - 60e3 && time <= Date.now() + 60e3);
  t.true((await page.locator('svg.chart[data-metric="p95_ms"] circle.point').count()) > 0);
  await screenshot(page, 'dashboard-usage-by-model');
});

it('the sections are reachable with the keyboard, in reading order', async (t) => {
  const { page } = t.context.browser;
  await page.getByRole('link', { name: 'Logs' }).click();
  await page.locator('table.logs').waitFor();
  // From the first focusable element, the skip link, onwards.
  await page.locator('a.skip').focus();
  const focused: string[] = ['Skip to content'];
  // The sections, the organization's pages (the account key has no personal tokens), the team switcher, sign-out.
  const order = ['Skip to content', 'Logs', 'Usage', 'Virtual keys', 'Credentials', 'Quotas', 'Routes', 'Policies', 'MCP servers', 'Plugins', 'Teams', 'Members', 'Users', 'Service accounts', 'Audit', 'team switcher', 'Sign out'];
  for (let index = 1; index < order.length; index++) {
    await page.keyboard.press('Tab');
    focused.push(await page.evaluate(() => {
      const active = (globalThis as any).document.activeElement;
      return active?.id === 'team-switcher' ? 'team switcher' : active?.textContent?.trim() ?? '';
    }));
  }
  t.deepEqual(focused, order);
  await page.keyboard.press('Tab');
  t.is(await page.evaluate(() => (globalThis as any).document.activeElement?.name), 'q', 'then the first filter, the body search');
  await page.keyboard.press('Tab');
  t.regex(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent ?? ''), /Last 24 hours/, 'then the time range');
  // Back to "Usage" and open it with Enter.
  for (let index = 0; index < 16; index++) await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter');
  await hashIncludes(page, '#/usage');
  await page.getByRole('heading', { name: 'Usage' }).waitFor();
  t.is(await page.getByRole('link', { name: 'Usage' }).getAttribute('aria-current'), 'page');
});

it('signing out returns to the sign-in form and the admin API refuses the old cookie', async (t) => {
  const { page, context } = t.context.browser;
  const before = (await context.cookies()).find((cookie) => cookie.name === 'gateway_session')!;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Account API key').waitFor();
  const reused = await fetch(`${t.context.gateway.url}/admin/logs`, { headers: { cookie: `gateway_session=${before.value}` } });
  t.is(reused.status, 401);
  await page.reload();
  await page.getByLabel('Account API key').waitFor();
  // The wrong key (401) and the lone metadata value (400) were refused on purpose; nothing else failed.
  t.deepEqual(t.context.browser.consoleErrors.filter((message) => !/status of 40[01] /.test(message)), []);
});
