import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { echoUpstream } from '../cache/cache-harness.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { ECHO_COST_USD, makeUsageTraffic, type UsageTraffic } from '../logs/usage-traffic.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';

// The usage view, second edition: headline figures against the previous period, split by end user
// and by a metadata key, key names instead of ids, costs with significant digits, one date format
// with the time zone, chart labels inside the chart; and the sign-in page without navigation.
interface Context {
  gateway: TestGateway;
  fake: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  traffic: UsageTraffic;
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const run = Math.random().toString(36).slice(2, 8);
const DAY = 86_400_000;

test.before(async (t) => {
  if (skipReason) return;
  // The browser first: when it cannot start, nothing else is left open to keep this file's process alive.
  const browser = await openBrowser();
  t.context.browser = browser;
  const fake = await startFake(echoUpstream().handler);
  const gateway = await startGateway();
  const traffic = await makeUsageTraffic(gateway, fake.baseUrl, run);
  t.context = { gateway, fake, traffic, browser };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});

/** `value` as a datetime-local field's text in the browser's time zone. */
const localField = (page: Page, time: number) =>
  page.evaluate((at) => {
    const date = new Date(at);
    const pad = (value: number) => String(value).padStart(2, '0');
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  }, time);

const figure = (page: Page, metric: string) => page.locator(`li.figure[data-metric="${metric}"]`);
const totalsRow = (page: Page, group: string) => page.locator(`table.totals tbody tr[data-group="${group}"]`);
/** The amount a cost text shows, checked to carry 3 significant digits (or 2 decimals from $1). */
const amount = (text: string) => Number(text.replace(/^\$/, ''));

it('the sign-in page shows no navigation and no sign-out button', async (t) => {
  const { page } = t.context.browser;
  await page.goto(`${t.context.gateway.url}/dashboard`);
  await page.getByLabel('Account API key').waitFor();
  t.false(await page.locator('#nav').isVisible(), 'the navigation is hidden before sign-in');
  t.false(await page.getByRole('button', { name: 'Sign out' }).isVisible());
  t.is(await page.locator('#nav').evaluate((nav) => (globalThis as any).getComputedStyle(nav).display), 'none');
  t.is(await page.getByRole('navigation', { name: 'Sections' }).count(), 0, 'not in the accessibility tree either');
  await signIn(page, t.context.gateway.url);
  t.true(await page.getByRole('navigation', { name: 'Sections' }).isVisible());
  t.true(await page.getByRole('button', { name: 'Sign out' }).isVisible());
});

it('headline figures compare the period with the previous one, split by end user, with top spenders', async (t) => {
  const { page } = t.context.browser;
  const { traffic } = t.context;
  await page.getByRole('link', { name: 'Usage', exact: true }).click();
  await page.getByRole('heading', { name: 'Usage' }).waitFor();
  t.false(await page.getByLabel('From', { exact: true }).isVisible(), 'the custom dates show only for a custom period');
  await page.getByLabel('Period').selectOption('custom');
  await page.getByLabel('From', { exact: true }).fill(await localField(page, traffic.boundary));
  await page.getByLabel('To', { exact: true }).fill(await localField(page, traffic.boundary + DAY));
  await page.getByLabel('Split by').selectOption('user');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.waitForFunction(() => (globalThis as any).location.hash.includes('group_by=user') && (globalThis as any).location.hash.includes('from='));
  t.true(page.url().includes(`from=${encodeURIComponent(new Date(traffic.boundary).toISOString())}`), page.url());
  await totalsRow(page, 'carol').waitFor();

  // Headline figures: value, previous value, change in words with an arrow.
  t.is(await figure(page, 'requests').locator('.figure-value').innerText(), '5');
  t.is(await figure(page, 'requests').locator('.figure-delta').innerText(), '▲ up 150% vs previous period (2)');
  const spend = 3 * ECHO_COST_USD + traffic.embeddingCostUsd;
  const spendText = await figure(page, 'cost_usd').locator('.figure-value').innerText();
  t.is(spendText, `$${Number(spend.toPrecision(3))}`);
  t.is(await figure(page, 'cost_usd').getAttribute('data-direction'), 'up');
  t.regex(await figure(page, 'cost_usd').locator('.figure-delta').innerText(), /^▲ up \d+(\.\d)?% vs previous period \(\$0\.000009\)$/);
  t.is(await figure(page, 'error_rate').locator('.figure-value').innerText(), '20%');
  t.is(await figure(page, 'error_rate').locator('.figure-delta').innerText(), '▼ down 30 points vs previous period (50%)');
  t.is(await figure(page, 'error_rate').locator('.figure-delta').getAttribute('class'), 'figure-delta good');
  t.regex(await figure(page, 'p95_ms').locator('.figure-value').innerText(), /^\d+(\.\d)? ms$/);
  t.is(await figure(page, 'cache_hit_rate').locator('.figure-value').innerText(), '—');
  t.is(await figure(page, 'cache_saved_usd').locator('.figure-value').innerText(), '$0.00');

  // Split by end user: one row each, with error rate and latency columns.
  t.deepEqual(await page.locator('table.totals tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-group'))), ['alice', 'bob', 'carol']);
  t.is(await totalsRow(page, 'bob').locator('td.error-rate').innerText(), '50%');
  t.is(await totalsRow(page, 'alice').locator('td.error-rate').innerText(), '0%');
  t.regex(await totalsRow(page, 'alice').locator('td.p95').innerText(), /^\d+(\.\d)? ms$/);
  // The embedding's cost with significant digits, not $0.000000.
  const embeddingText = await totalsRow(page, 'carol').locator('td.cost').innerText();
  t.not(embeddingText, '$0.000000');
  t.is(amount(embeddingText), Number(traffic.embeddingCostUsd.toPrecision(3)));
  t.is(await totalsRow(page, 'alice').locator('td.cost').innerText(), '$0.000018');

  // Top spenders: the key by its name, the users and the models.
  const topKeys = page.locator('section.top-list[data-list="keys"] li');
  t.deepEqual(await topKeys.locator('.top-name').allInnerTexts(), [traffic.keyName, 'Account key']);
  t.is(await topKeys.first().locator('.top-figure').innerText(), '$0.000027 · 3 requests');
  t.deepEqual(await page.locator('section.top-list[data-list="users"] li .top-name').allInnerTexts(), ['alice', 'bob', 'carol']);
  t.deepEqual(await page.locator('section.top-list[data-list="models"] li .top-name').allInnerTexts(), ['gpt-4o-mini', 'text-embedding-3-small']);

  // One date format, with the time zone, as the browser's locale writes it.
  const zone = await page.evaluate(() => new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(new Date()).find((part) => part.type === 'timeZoneName')!.value);
  const month = await page.evaluate((at) => new Date(at).toLocaleString(undefined, { month: 'short' }), traffic.boundary);
  const periodText = await page.locator('.headline p.period').innerText();
  t.true(periodText.includes(zone), periodText);
  t.true(periodText.includes(month), periodText);
  t.true((await page.locator('main').innerText()).includes(`times in ${zone}`));
  await screenshot(page, 'dashboard-usage');
  // Readable at 800 px: nothing makes the page scroll sideways (the totals table scrolls in its own box).
  await page.setViewportSize({ width: 800, height: 900 });
  t.true(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= 800), 'no sideways scrolling at 800 px');
  t.true(await figure(page, 'p95_ms').isVisible());
  await page.setViewportSize({ width: 1366, height: 900 });
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it('usage splits by a metadata key and shows keys by name', async (t) => {
  const { page } = t.context.browser;
  const { traffic } = t.context;
  await page.getByLabel('Split by').selectOption('metadata');
  await page.getByLabel('Metadata key').fill('team');
  await page.getByRole('button', { name: 'Show' }).click();
  await totalsRow(page, 'ads').waitFor();
  const rows = await page.locator('table.totals tbody tr').evaluateAll((items) =>
    items.map((row) => [row.querySelector('th')!.textContent, row.querySelector('td.requests')!.textContent, row.querySelector('td.error-rate')!.textContent]),
  );
  t.deepEqual(rows, [['ads', '2', '50%'], ['search', '2', '0%'], ['(none)', '1', '0%']]);
  t.is(await page.locator('table.totals thead th').first().innerText(), 'METADATA: TEAM');

  await page.getByLabel('Split by').selectOption('key');
  await page.getByRole('button', { name: 'Show' }).click();
  await totalsRow(page, traffic.keyId).waitFor();
  t.is(await totalsRow(page, traffic.keyId).locator('th').innerText(), traffic.keyName);
  t.is(await totalsRow(page, 'account').locator('th').innerText(), 'Account key');
  t.true((await page.locator('ul.legend').innerText()).includes(traffic.keyName));
  t.false((await page.locator('main').innerText()).includes(traffic.keyId), 'no raw key id is shown');
  const hover = await page.locator(`svg.chart[data-metric="requests"] g.series[data-group="${traffic.keyId}"] circle.point title`).first().textContent();
  t.true(hover!.startsWith(`${traffic.keyName}: 3 at `), hover!);
});

it('every axis label of every chart lies inside its chart', async (t) => {
  const { page } = t.context.browser;
  // Costs give the widest value labels.
  const charts = page.locator('svg.chart');
  t.is(await charts.count(), 8);
  const outside = await charts.evaluateAll((svgs) =>
    svgs.flatMap((svg) => {
      const [, , width, height] = svg.getAttribute('viewBox')!.split(' ').map(Number);
      return [...svg.querySelectorAll('text.tick')].flatMap((label) => {
        const box = (label as any).getBBox() as { x: number; y: number; width: number; height: number };
        return box.x < 0 || box.x + box.width > width || box.y < 0 || box.y + box.height > height ? [`${svg.getAttribute('data-metric')}: ${label.textContent}`] : [];
      });
    }),
  );
  t.deepEqual(outside, []);
  // The cost axis has labels with significant digits, none cut to $0.000000.
  const costLabels = await page.locator('svg.chart[data-metric="cost_usd"] text.y-tick').allTextContents();
  t.true(costLabels.length >= 2);
  t.false(costLabels.some((label) => label === '$0.000000'));
});

it('the logs list shows times in the same format, with the time zone', async (t) => {
  const { page } = t.context.browser;
  await page.getByRole('link', { name: 'Logs', exact: true }).click();
  const first = page.locator('table.logs tbody tr a.open-detail').first();
  await first.waitFor();
  const zone = await page.evaluate(() => new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(new Date()).find((part) => part.type === 'timeZoneName')!.value);
  t.true((await first.innerText()).endsWith(zone), await first.innerText());
});
