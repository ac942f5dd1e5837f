import anyTest, { type TestFn } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { ManualClock, quotaChat, quotaSetup, untilDepth } from '../quota/quota-harness.js';
import { fixedUsageHandler } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, signIn, type BrowserSession } from './browser.js';

// The dashboard's Quotas page: per provider quota, what each team holds and this instance's queue.

interface Context {
  gateway: TestGateway;
  fake: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;

test.before(async (t) => {
  if (skipReason) return;
  const browser = await openBrowser();
  const fake = await startFake(fixedUsageHandler(0));
  const gateway = await startGateway({}, {}, { quota: { clock: new ManualClock() } });
  t.context = { gateway, fake, browser };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});

it('the Quotas page shows a credential quota, the team that used it and the requests waiting', async (t) => {
  const { page } = t.context.browser;
  const { gateway, fake } = t.context;
  const { credentialId, keys } = await quotaSetup(t, gateway, fake.baseUrl, { requests_per_minute: 1, max_wait_ms: 600_000 }, { search: 2 }, 'page');
  t.is((await quotaChat(gateway, keys.search)).status, 200);
  const controller = new AbortController();
  const waiting = quotaChat(gateway, keys.search, {}, controller.signal).catch(() => undefined);
  await untilDepth(t, gateway, credentialId, 1);
  await signIn(page, gateway.url);
  await page.getByRole('link', { name: 'Quotas', exact: true }).click();
  const section = page.locator(`section[data-quota="cred:${credentialId}"]`);
  await section.waitFor();
  t.is(await section.getByRole('heading').innerText(), 'quota-page');
  t.true((await section.innerText()).includes('1 requests/min'));
  t.is(await section.locator('.queue-depth').innerText(), '1');
  const row = section.locator('tbody tr');
  t.is(await row.count(), 1);
  t.regex(await row.innerText(), /2\s+yes\s+1\s+/);
  controller.abort();
  await waiting;
  t.deepEqual(t.context.browser.consoleErrors, []);
});
