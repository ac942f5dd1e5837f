import anyTest, { type TestFn } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { sdkClient, startGateway, type TestGateway } from '../harness.js';
import { ECHO_COST_USD, echoUpstream } from '../cache/cache-harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';
import { waitForLogs } from './logs-api.js';

// The dashboard's usage view shows the response cache: its hit rate and what the hits saved, as a
// summary, as charts and in the totals table; a log entry's detail shows its cache status.
interface Context {
  gateway: TestGateway;
  fake: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  traces: string[];
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const run = Math.random().toString(36).slice(2, 8);

test.before(async (t) => {
  if (skipReason) return;
  // The browser first: when it cannot start, nothing else is left open to keep this file's process alive.
  const browser = await openBrowser();
  t.context.browser = browser;
  const fake = await startFake(echoUpstream().handler);
  const gateway = await startGateway({ cache: { default: { mode: 'simple' } } });
  // One miss and three hits of one question, one miss of another: 3 hits of 5 lookups.
  const traces: string[] = [];
  for (const [index, text] of ['cached question', 'cached question', 'cached question', 'cached question', 'other question'].entries()) {
    const trace = `dash-cache-${run}-${index}`;
    traces.push(trace);
    await sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });
  }
  await waitForLogs(gateway, traces);
  t.context = { gateway, fake, browser, traces };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});

it('the usage view shows the cache’s hit rate and savings', async (t) => {
  const { page } = t.context.browser;
  await signIn(page, t.context.gateway.url);
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByLabel('Period').selectOption('hour');
  await page.getByRole('button', { name: 'Show' }).click();
  const summary = page.locator('p.cache-summary');
  await summary.waitFor();
  t.is(await summary.getAttribute('data-hits'), '3');
  t.is(await summary.getAttribute('data-misses'), '2');
  t.regex(await summary.innerText(), /^Response cache: 60% hit rate \(3 of 5 lookups\), \$0\.0000\d+ saved\.$/);
  t.is(Number(await summary.getAttribute('data-saved')), Math.round(3 * ECHO_COST_USD * 1e6) / 1e6);
  const rates = await page.locator('svg.chart[data-metric="cache_hit_rate"] circle.point').evaluateAll((points) => points.map((point) => Number(point.getAttribute('data-value'))));
  t.true(rates.length >= 1);
  t.true(rates.every((rate) => rate >= 0 && rate <= 1));
  const saved = await page.locator('svg.chart[data-metric="cache_saved_usd"] circle.point').evaluateAll((points) => points.reduce((total, point) => total + Number(point.getAttribute('data-value')), 0));
  t.is(Math.round(saved * 1e9), Math.round(3 * ECHO_COST_USD * 1e9));
  const row = page.locator('table.totals tbody tr').first();
  t.is(await row.locator('td.cache-hit-rate').innerText(), '60%');
  t.regex(await row.locator('td.cache-saved').innerText(), /^\$0\.0000\d+$/);
  await screenshot(page, 'dashboard-usage-cache');
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it('a log entry’s detail shows its cache status and saving', async (t) => {
  const { page } = t.context.browser;
  await page.goto(`${t.context.gateway.url}/dashboard#/logs?trace_id=${t.context.traces[1]}`);
  await page.locator(`table.logs tbody tr[data-trace-id="${t.context.traces[1]}"] a.open-detail`).click();
  const details = page.locator('main');
  await details.getByText('Saved by the cache').waitFor();
  const text = await details.innerText();
  t.regex(text, /Cache\s+HIT/);
  t.regex(text, /Saved by the cache\s+\$0\.000009/);
});
