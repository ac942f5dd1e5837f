import anyTest, { type TestFn } from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';

// The Audit page: the dashboard's own sign-ins are listed, filtered, paged, verified and exported.

interface Context {
  gateway: TestGateway;
  browser: BrowserSession & { consoleErrors: string[] };
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;

test.before(async (t) => {
  if (skipReason) return;
  const browser = await openBrowser();
  const gateway = await startGateway();
  // 52 events before the page opens: two pages at 50 a page.
  for (let index = 0; index < 51; index++) {
    await gateway.gateway.audit.record({ actor: { type: 'cli', label: 'ops' }, action: index % 2 ? 'keys.update' : 'credentials.create', target: { type: 'virtual-key', id: `vk_${index}` }, changes: { rpm: { before: index, after: index + 1 } }, outcome: 'success' });
  }
  t.context = { gateway, browser };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
});

it('the Audit page lists events newest first with their changes, pages, filters, verifies the chain and offers the export', async (t) => {
  const { page, consoleErrors } = t.context.browser;
  const { gateway } = t.context;
  // A refused sign-in first, then the real one: both are events.
  await page.goto(`${gateway.url}/dashboard`);
  await page.getByLabel('Account API key').fill('gw-not-the-key-000');
  await page.keyboard.press('Enter');
  await page.getByRole('alert').filter({ hasText: 'not the account API key' }).waitFor();
  await signIn(page, gateway.url);
  await page.getByRole('link', { name: 'Audit', exact: true }).click();
  const table = page.locator('table.audit');
  await table.waitFor();
  const seqs = async () => (await table.locator('tbody tr').evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-seq')))));
  const first = await seqs();
  t.is(first.length, 50);
  t.deepEqual(first.slice(0, 3), [53, 52, 51]);
  const newest = table.locator('tbody tr').first();
  t.regex(await newest.innerText(), /dashboard\.sign-in/);
  t.regex(await newest.innerText(), /success/);
  t.regex(await table.locator('tbody tr[data-seq="52"]').innerText(), /denied/);
  t.regex(await table.locator('tbody tr[data-seq="51"]').innerText(), /rpm: 50 → 51/);
  await screenshot(page, 'dashboard-audit');

  await page.getByRole('button', { name: 'Older' }).click();
  await page.getByText('(page 2)').waitFor();
  t.deepEqual(await seqs(), [3, 2, 1]);
  await page.getByRole('button', { name: 'Newer' }).click();
  await page.getByText('Showing 50 events.').waitFor();

  await page.getByLabel('Action').fill('keys.*');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('Showing 25 events.').waitFor();
  t.true((await table.locator('tbody th').allInnerTexts()).every((text) => text === 'keys.update'));

  await page.getByRole('button', { name: 'Verify the chain' }).click();
  await page.getByText('Whole: 53 events.').waitFor();

  const href = await page.getByRole('link', { name: 'Export (JSON lines)' }).getAttribute('href');
  t.regex(href ?? '', /^\/admin\/audit\/export\?csrf=/);
  const exported = await page.evaluate(async (url) => (await fetch(url!, { credentials: 'same-origin' })).text(), href);
  t.is(exported.trim().split('\n').length, 53);
  // The refused sign-in's answer is the one error the browser reports.
  t.deepEqual(consoleErrors, ['Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
});
