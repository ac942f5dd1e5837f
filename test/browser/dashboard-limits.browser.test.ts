import anyTest, { type TestFn } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, FIXED_COST_USD, FIXED_USAGE, fixedUsageHandler } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';

// Issue 34, "Seeing it": a team's limits panel (used of limit, a bar, when it resets), the
// organization's, usage split by team under the team's name, the team's limits form (an API error
// shown on its field, then saved), and an alert naming its level.

interface Context {
  gateway: TestGateway;
  fake: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  teamId: string;
  userId: string;
  accountId: string;
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const REQUESTS = 3;
const TEAM_LIMITS = { budget_usd: 1, budget_period: 'day', soft_budget_usd: 0.00003, requests_per_minute: 50, requests_per_day: 1000, tokens_per_minute: 100_000, max_concurrent: 5 };

/** Polls `read` until `done` holds (the log writer and the settlement run after the answer). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

test.before(async (t) => {
  if (skipReason) return;
  const browser = await openBrowser();
  t.context.browser = browser;
  const fake = await startFake(fixedUsageHandler(0));
  const gateway = await startGateway();
  t.context = { gateway, fake, browser, teamId: '', userId: '', accountId: '' };
  // The organization's limit first: a level counts the requests admitted while it has limits.
  t.is((await admin(gateway, 'PATCH', '/admin/organization', { limits: { requests_per_day: 10_000 } })).status, 200);
  const team = await admin(gateway, 'POST', '/admin/teams', { name: 'search', limits: TEAM_LIMITS });
  t.is(team.status, 201, team.text);
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'shared-openai', provider: 'openai', api_key: 'sk-org-shared-secret-0123456789', team_id: null });
  t.is(credential.status, 201, credential.text);
  const key = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'search-key', provider: 'openai', credential_id: credential.json.id, team_id: team.json.id, custom_host: fake.baseUrl });
  t.is(key.status, 201, key.text);
  for (let index = 0; index < REQUESTS; index++) t.is((await chatWithKey(gateway, key.json.key)).status, 200);
  // A user and a service account of the default team with limits of their own, one request each.
  const user = await admin(gateway, 'POST', '/admin/users', { email: 'dana@example.com', limits: { requests_per_day: 100 } });
  t.is(user.status, 201, user.text);
  const account = await admin(gateway, 'POST', '/admin/service-accounts', { name: 'ci-bot', team_id: 'default', role: 'member', limits: { tokens_per_minute: 5000 } });
  t.is(account.status, 201, account.text);
  for (const owner of [{ user_id: user.json.id }, { service_account_id: account.json.id }]) {
    const owned = await admin(gateway, 'POST', '/admin/virtual-keys', { name: `key-of-${Object.values(owner)[0]}`, provider: 'openai', credential_id: credential.json.id, team_id: 'default', custom_host: fake.baseUrl, ...owner });
    t.is(owned.status, 201, owned.text);
    t.is((await chatWithKey(gateway, owned.json.key)).status, 200);
  }
  t.context.teamId = team.json.id;
  t.context.userId = user.json.id;
  t.context.accountId = account.json.id;
  // Settled (no reservation left) and logged, so the page reads final numbers.
  await until(() => admin(gateway, 'GET', `/admin/teams/${team.json.id}`), (answer) => answer.json.limits_usage.budget.reserved_usd === 0 && answer.json.limits_usage.budget.spent_usd > 0, 'the settlement');
  await until(() => admin(gateway, 'GET', '/admin/usage?range=day&group_by=team'), (answer) => answer.json.totals.some((row: { group: string; requests: number }) => row.group === team.json.id && row.requests === REQUESTS), 'the log');
  await until(() => admin(gateway, 'GET', '/admin/usage?range=day&group_by=user_id'), (answer) => answer.json.totals.filter((row: { group: string }) => row.group === user.json.id || row.group === account.json.id).length === 2, 'the owners\' log');
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});

it("a team's limits panel shows what is used of each limit, with bars and resets; the organization's too", async (t) => {
  const { page } = t.context.browser;
  const { gateway, teamId } = t.context;
  const api = (await admin(gateway, 'GET', `/admin/teams/${teamId}`)).json.limits_usage;
  await signIn(page, gateway.url);
  await page.getByRole('link', { name: 'Teams', exact: true }).click();
  const row = page.locator('table.teams tr[data-team-name="search"]');
  t.is(await row.locator('td.team-limits').innerText(), '$1.00/day · soft $0.00003 · 50 req/min · 1,000 req/day · 100,000 tokens/min · 5 at once');

  // The organization's panel on the Teams page: every key's requests of the day.
  const organization = page.getByRole('region', { name: 'Organization limits' });
  const orgDay = organization.locator('tr[data-limit="requests_per_day"]');
  t.is(await orgDay.locator('td.used').innerText(), `${REQUESTS + 2} of 10,000`);
  t.regex(await orgDay.locator('td.resets').innerText(), /^resets /);

  await row.getByRole('link', { name: 'Limits of search' }).click();
  const panel = page.getByRole('region', { name: 'Limits of search' });
  await panel.waitFor();
  const cell = (limit: string, part: string) => panel.locator(`tr[data-limit="${limit}"] td.${part}`).innerText();
  // Hand-computed: three requests of FIXED_USAGE, each FIXED_COST_USD.
  const spent = REQUESTS * FIXED_COST_USD;
  t.is(Number(await panel.locator('tr[data-limit="budget"]').getAttribute('data-used')), api.budget.spent_usd);
  t.true(Math.abs(api.budget.spent_usd - spent) < 1e-12, String(api.budget.spent_usd));
  t.is(await cell('budget', 'used'), '$0.000045 of $1.00');
  t.is(await cell('budget', 'resets'), `resets ${await page.evaluate((at) => new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' }).format(new Date(at)), api.budget.resets_at)}`);
  t.is(await panel.locator('tr[data-limit="budget"] meter').getAttribute('value'), String(api.budget.spent_usd / TEAM_LIMITS.budget_usd));
  // The soft budget (0.00003) is passed: its bar is full and says so.
  t.is(await cell('soft_budget', 'used'), '$0.000045 of $0.00003');
  t.is(await panel.locator('tr[data-limit="soft_budget"]').getAttribute('data-state'), 'full');
  t.is(await cell('requests_per_minute', 'used'), `${REQUESTS} of 50`);
  t.is(await cell('requests_per_day', 'used'), `${REQUESTS} of 1,000`);
  t.is(await cell('tokens_per_minute', 'used'), `${REQUESTS * FIXED_USAGE.total_tokens} of 100,000`);
  t.is(await cell('max_concurrent', 'used'), '0 of 5');
  t.is(await cell('requests_per_minute', 'resets'), 'sliding 60 s window');
  await screenshot(page, 'dashboard-team-limits');
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it("usage split by team names the team; an alert names its level and the team", async (t) => {
  const { page } = t.context.browser;
  const { gateway, teamId } = t.context;
  await page.getByRole('link', { name: 'Usage', exact: true }).click();
  await page.getByLabel('Split by').selectOption('team');
  await page.getByRole('button', { name: 'Show' }).click();
  const row = page.locator(`table.totals tbody tr[data-group="${teamId}"]`);
  await row.waitFor();
  t.is(await row.locator('th').innerText(), 'search');
  t.is(await row.locator('td.requests').innerText(), String(REQUESTS));

  // By gateway user or service account: the user's email, the account's name.
  await page.getByLabel('Split by').selectOption('user_id');
  await page.getByRole('button', { name: 'Show' }).click();
  const userRow = page.locator(`table.totals tbody tr[data-group="${t.context.userId}"]`);
  await userRow.waitFor();
  t.is(await userRow.locator('th').innerText(), 'dana@example.com');
  t.is(await page.locator(`table.totals tbody tr[data-group="${t.context.accountId}"] th`).innerText(), 'ci-bot (service account)');

  // The team's soft budget was passed: the alert says it is the team's.
  await until(() => admin(gateway, 'GET', '/admin/alerts'), (answer) => answer.json.data.some((alert: { level: string }) => alert.level === 'team'), 'the soft budget alert');
  await page.getByRole('link', { name: 'Virtual keys', exact: true }).click();
  const alert = page.locator(`section.alerts li[data-key-id="team:${teamId}"]`);
  await alert.waitFor();
  t.is(await alert.getAttribute('data-level'), 'team');
  t.true((await alert.innerText()).startsWith('Team search reached its soft budget'), await alert.innerText());
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it("the team's limits form shows the API's error on its field, then saves a new budget", async (t) => {
  const { page } = t.context.browser;
  const { gateway, teamId } = t.context;
  await page.goto(`${gateway.url}/dashboard#/members/${teamId}`);
  const form = page.getByRole('form', { name: 'Set the limits of search' });
  await form.waitFor();
  t.is(await form.getByLabel('Budget (USD)', { exact: true }).inputValue(), '1');
  t.is(await form.getByLabel('Budget period').inputValue(), 'day');

  // Over the API's bound: refused with the field named; nothing changes.
  await form.getByLabel('Max concurrent requests').fill('2000000');
  await form.getByRole('button', { name: 'Save limits' }).click();
  const error = form.getByRole('alert');
  await error.waitFor();
  t.regex(await error.innerText(), /max_concurrent|1000000|1e6/i);
  t.is(await form.getByLabel('Max concurrent requests').getAttribute('aria-invalid'), 'true');
  t.is((await admin(gateway, 'GET', `/admin/teams/${teamId}`)).json.limits.max_concurrent, 5);

  await form.getByLabel('Max concurrent requests').fill('5');
  await form.getByLabel('Budget (USD)', { exact: true }).fill('2.5');
  await form.getByLabel('Soft budget (USD)').fill('');
  await form.getByRole('button', { name: 'Save limits' }).click();
  // The page is drawn again from the API: wait for the new budget's row.
  await page.locator('#team-limits tr[data-limit="budget"][data-limit-value="2.5"]').waitFor();
  t.is(await page.locator('#team-limits tr[data-limit="budget"] td.used').innerText(), '$0.000045 of $2.50');
  t.is(await page.locator('#team-limits tr[data-limit="soft_budget"]').count(), 0);
  const saved = (await admin(gateway, 'GET', `/admin/teams/${teamId}`)).json;
  const { soft_budget_usd: _removed, ...kept } = TEAM_LIMITS;
  t.deepEqual(saved.limits, { ...kept, budget_usd: 2.5 });
  t.is(saved.limits_usage.budget.limit_usd, 2.5);
  t.is(saved.limits_usage.soft_budget, null);

  // A week's budget counts from this week's own counter (the day's spend does not carry over).
  await form.getByLabel('Budget period').selectOption('week');
  await form.getByRole('button', { name: 'Save limits' }).click();
  await page.locator('#team-limits tr[data-limit="budget"] th', { hasText: 'this week' }).waitFor();
  t.is((await admin(gateway, 'GET', `/admin/teams/${teamId}`)).json.limits.budget_period, 'week');
  // The refused save's 400, which Chromium logs as a failed resource, and nothing else.
  t.deepEqual(t.context.browser.consoleErrors, ['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
});

it("a user's and a service account's pages show their own limits", async (t) => {
  const { page } = t.context.browser;
  await page.getByRole('link', { name: 'Users', exact: true }).click();
  const row = page.locator('table.users tr[data-email="dana@example.com"]');
  t.is(await row.locator('td.user-limits').innerText(), '100 req/day');
  await row.getByRole('link', { name: 'dana@example.com' }).click();
  const panel = page.getByRole('region', { name: 'Limits of dana@example.com' });
  await panel.waitFor();
  t.is(await panel.locator('tr[data-limit="requests_per_day"] td.used').innerText(), '1 of 100');

  await page.getByRole('link', { name: 'Service accounts', exact: true }).click();
  await page.getByRole('link', { name: 'Limits of ci-bot' }).click();
  const accountPanel = page.getByRole('region', { name: 'Limits of ci-bot' });
  await accountPanel.waitFor();
  t.is(await accountPanel.locator('tr[data-limit="tokens_per_minute"] td.used').innerText(), `${FIXED_USAGE.total_tokens} of 5,000`);
  t.is(await accountPanel.locator('tr').count(), 2, 'a header and the one limit set');
  // The refused save of the test before is the only console error.
  t.is(t.context.browser.consoleErrors.length, 1);
});
