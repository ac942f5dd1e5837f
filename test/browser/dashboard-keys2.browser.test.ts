import test from 'ava';
import nock from 'nock';
import OpenAI from 'openai';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, FIXED_MESSAGES, fixedUsageHandler } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn } from './browser.js';

// Skipped only when Chromium is missing outside CI (under CI=true a missing browser fails).
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const HOOK = 'http://budget-alerts.test';
const SECRET_A = 'sk-dashboard-secret-alpha-0123456789';
const SECRET_B = 'sk-dashboard-secret-beta-9876543210';
const SECRET_C = 'sk-dashboard-secret-gamma-1357924680';
/** Five requests of the fake's fixed usage (5 × FIXED_COST_USD written out: the product in floats is 0.00007500000000000001). */
const BUDGET_USD = 0.000075;
const run = Math.random().toString(36).slice(2, 8);
const keyName = `budgeted-${run}`;

let gateway: TestGateway | undefined;
let fake: Fake | undefined;
/** A second provider endpoint, for the edit form's custom host. */
let other: Fake | undefined;
const posted: Array<{ threshold: number; key_name: string }> = [];
let postedWaiters: Array<() => void> = [];

// The browser first: when it cannot start, no server is left running to keep this file's process alive.
const browser = skipReason ? undefined : await openBrowser();
if (!skipReason) {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1/);
  nock(HOOK)
    .post('/hook')
    .times(2)
    .reply(async (request: Request) => {
      posted.push(JSON.parse(await request.text()));
      for (const resolve of postedWaiters) resolve();
      postedWaiters = [];
      return [204, ''];
    });
  fake = await startFake(fixedUsageHandler(0));
  other = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({ alerts: { webhook: { url: `${HOOK}/hook` } } });
}
test.after.always(async () => {
  await browser?.close();
  await gateway?.close();
  await fake?.close();
  await other?.close();
  nock.cleanAll();
  nock.enableNetConnect();
});

const ask = (key: string) =>
  new OpenAI({ apiKey: 'unused-by-the-gateway', baseURL: `${gateway!.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': key } }).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: FIXED_MESSAGES,
    max_tokens: 10,
  });
const api = (method: string, path: string, body?: unknown) => admin(gateway!, method, path, body, ACCOUNT_KEY);
const waitForPosts = async (count: number) => {
  while (posted.length < count) await new Promise<void>((resolve) => postedWaiters.push(resolve));
};

let keyValue = '';
let keyId = '';
let routedValue = '';

it('credentials: added in the form (the secret is cleared and never shown), sorted by name, used by a key, deletion refused while used', async (t) => {
  const { page } = browser!;
  page.on('dialog', (dialog) => dialog.accept());
  await signIn(page, gateway!.url);
  await page.getByRole('link', { name: 'Credentials' }).click();
  const add = page.getByRole('form', { name: 'Add a credential' });
  for (const [name, secret] of [[`team-b-${run}`, SECRET_B], [`Alpha-${run}`, SECRET_A]]) {
    await add.getByLabel('Name').fill(name);
    await add.getByLabel('Provider').selectOption('openai');
    await add.getByLabel('API key').fill(secret);
    await add.getByRole('button', { name: 'Add credential' }).click();
    await page.locator(`tr[data-credential-name="${name}"]`).waitFor();
    // The page was rebuilt; the new form's secret field is empty, and the old value is nowhere in the page.
    t.is(await page.getByRole('form', { name: 'Add a credential' }).getByLabel('API key').inputValue(), '');
    t.false((await page.content()).includes(secret));
  }
  t.deepEqual(await page.locator('table.credentials tbody th').allInnerTexts(), [`Alpha-${run}`, `team-b-${run}`], 'sorted by name');
  t.regex(await page.locator('.notice').innerText(), /will not be shown again/);

  // A key on team-b through the create form, with a budget and a per-minute limit.
  await page.getByRole('link', { name: 'Virtual keys' }).click();
  const create = page.getByRole('form', { name: 'Create a virtual key' });
  await create.getByLabel('Name', { exact: true }).fill(keyName);
  await create.getByLabel('Provider', { exact: true }).selectOption('openai');
  await create.getByLabel('Stored credential').selectOption({ label: `team-b-${run} (openai)` });
  await create.getByLabel('Custom host').fill(fake!.baseUrl);
  await create.getByLabel('Budget (USD)').fill(String(BUDGET_USD));
  await create.getByLabel('Budget period').selectOption('day');
  await create.getByLabel('Requests per minute').fill('100');
  await create.getByRole('button', { name: 'Create key' }).click();
  const value = page.locator('.once input.key-value');
  await value.waitFor();
  keyValue = await value.inputValue();
  await page.getByRole('button', { name: 'I have saved it' }).click();
  keyId = (await api('GET', '/admin/virtual-keys')).json.data.find((key: { name: string }) => key.name === keyName).id;

  t.truthy((await ask(keyValue)).id);
  t.is(fake!.requests.at(-1)!.headers.authorization, `Bearer ${SECRET_B}`);

  await page.getByRole('link', { name: 'Credentials' }).click();
  const teamB = page.locator(`tr[data-credential-name="team-b-${run}"]`);
  t.is(await teamB.locator('td.used-by').innerText(), keyName);
  t.is(await page.locator(`tr[data-credential-name="Alpha-${run}"] td.used-by`).innerText(), 'no key');
  await screenshot(page, 'dashboard-credentials');
  await teamB.getByRole('button', { name: `Delete team-b-${run}` }).click();
  const refusal = page.locator('.notice.error');
  await refusal.waitFor();
  t.regex(await refusal.innerText(), new RegExp(`used by 1 virtual key\\(s\\): ${keyName}`));
  t.is(await teamB.count(), 1, 'still listed');
  t.is((await api('GET', '/admin/credentials')).json.data.filter((credential: { name: string }) => credential.name === `team-b-${run}`).length, 1);
});

it('the edit form is separate and prefilled, shows fixed fields read-only, and changes the credential; then the old one can be deleted', async (t) => {
  const { page } = browser!;
  await page.getByRole('link', { name: 'Virtual keys' }).click();
  const row = page.locator(`tr[data-key-name="${keyName}"]`);
  await row.getByRole('button', { name: `Edit ${keyName}` }).click();
  const edit = page.getByRole('form', { name: `Edit ${keyName}` });
  t.is(await edit.getByLabel('Id', { exact: true }).inputValue(), keyId);
  t.false(await edit.getByLabel('Id', { exact: true }).isEditable(), 'the id cannot change');
  t.false(await edit.getByLabel('Provider', { exact: true }).isEditable(), 'nor the provider');
  t.is(await edit.getByLabel('Name', { exact: true }).inputValue(), keyName);
  t.is(await edit.getByLabel('Custom host', { exact: true }).inputValue(), fake!.baseUrl);
  t.is(await edit.getByLabel('Budget (USD)').inputValue(), String(BUDGET_USD));
  t.is(await edit.getByLabel('Requests per minute').inputValue(), '100');
  t.is(await edit.getByLabel('Stored credential', { exact: true }).locator('option:checked').innerText(), `team-b-${run} (openai)`);
  t.is(await page.getByRole('form', { name: 'Create a virtual key' }).count(), 1, 'the create form is a different form');
  await edit.getByLabel('Stored credential', { exact: true }).selectOption({ label: `Alpha-${run} (openai)` });
  await edit.getByLabel('Custom host', { exact: true }).fill(other!.baseUrl);
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('.notice', { hasText: `Saved ${keyName}.` }).waitFor();
  const before = fake!.requests.length;
  t.truthy((await ask(keyValue)).id);
  t.is(fake!.requests.length, before, 'the old host gets nothing');
  t.is(other!.requests.at(-1)!.headers.authorization, `Bearer ${SECRET_A}`, 'the key now calls the new host with the other credential');
  t.like((await api('GET', `/admin/virtual-keys/${keyId}`)).json, { custom_host: other!.baseUrl });
  // Back to the first host (the later tests count its requests).
  await row.getByRole('button', { name: `Edit ${keyName}` }).click();
  const again = page.getByRole('form', { name: `Edit ${keyName}` });
  t.is(await again.getByLabel('Custom host', { exact: true }).inputValue(), other!.baseUrl, 'prefilled with the saved host');
  await again.getByLabel('Custom host', { exact: true }).fill(fake!.baseUrl);
  await again.getByRole('button', { name: 'Save changes' }).click();
  await page.locator(`tr[data-key-name="${keyName}"]`).waitFor();
  await page.locator('form.edit').waitFor({ state: 'detached' });
  t.like((await api('GET', `/admin/virtual-keys/${keyId}`)).json, { custom_host: fake!.baseUrl, credential_id: (await api('GET', '/admin/credentials')).json.data.find((credential: { name: string }) => credential.name === `Alpha-${run}`).id });

  await page.getByRole('link', { name: 'Credentials' }).click();
  const teamB = page.locator(`tr[data-credential-name="team-b-${run}"]`);
  t.is(await teamB.locator('td.used-by').innerText(), 'no key');
  t.is(await page.locator(`tr[data-credential-name="Alpha-${run}"] td.used-by`).innerText(), keyName);
  await teamB.getByRole('button', { name: `Delete team-b-${run}` }).click();
  await teamB.waitFor({ state: 'detached' });
  t.false((await api('GET', '/admin/credentials')).text.includes(`team-b-${run}`));
});

it('the budget bar reaches exhausted with its reset time, the gateway refuses, and the 80 % and 100 % alerts show and are posted', async (t) => {
  const { page } = browser!;
  // Two requests are spent (40 %); spend until the gateway refuses.
  let answered = 2;
  let refusal: unknown;
  while (answered < 10) {
    try {
      await ask(keyValue);
      answered += 1;
    } catch (error) {
      refusal = error;
      break;
    }
  }
  t.is(answered, 5, 'five requests fit the budget');
  t.true(refusal instanceof OpenAI.PermissionDeniedError);
  t.is((refusal as InstanceType<typeof OpenAI.PermissionDeniedError>).code, 'budget_exceeded');
  await waitForPosts(2);
  t.deepEqual(posted.map((alert) => [alert.key_name, alert.threshold]), [[keyName, 80], [keyName, 100]]);

  await page.getByRole('link', { name: 'Virtual keys' }).click();
  const row = page.locator(`tr[data-key-name="${keyName}"]`);
  await row.waitFor();
  const usage = (await api('GET', `/admin/virtual-keys/${keyId}/usage`)).json;
  t.true(usage.budget_exhausted);
  const budget = row.locator('td.budget');
  t.is(await budget.locator('[data-state]').getAttribute('data-state'), 'exhausted');
  t.is(await budget.locator('meter').evaluate((meter) => (meter as unknown as { value: number }).value), 1);
  t.is(await budget.locator('.exhausted').innerText(), 'Exhausted');
  t.regex(await budget.innerText(), /100(\.0)?\s?%/);
  // The reset time is the next UTC midnight, as the API says, in the page's format.
  const resets = await budget.locator('small.resets').innerText();
  const expected = await page.evaluate(
    async ([module, iso]) => ((await import(module)) as { format: { time: (value: string) => string } }).format.time(iso),
    ['/dashboard/assets/dom.js', usage.budget_resets_at as string],
  );
  t.is(resets, `resets ${expected}`);
  t.is(new Date(usage.budget_resets_at).getTime(), Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1));
  // Rate-limit state: the admitted requests of the last minute against the limit.
  t.is(await row.locator('td.rate [data-window="min"]').innerText(), `${usage.requests.minute} of 100/min`);
  t.is(usage.requests.minute, 5);
  // The alerts: a mark on the key and the panel above the list.
  t.is((await row.locator('.alert-mark').innerText()).trim(), '100 %');
  const alerts = page.getByRole('region', { name: /Budget alerts/ });
  t.is(await alerts.locator('h2').innerText(), 'Budget alerts (2)');
  const items = await alerts.locator('li').allInnerTexts();
  t.is(items.length, 2);
  t.true(items[0].startsWith(`${keyName} spent its whole budget`), items[0]);
  t.true(items[1].startsWith(`${keyName} reached 80 % of its budget`), items[1]);
  t.true(items.every((item) => item.includes(`resets ${expected}`)));
  await screenshot(page, 'dashboard-keys');
});

it('a key created with a route in the create form takes that route', async (t) => {
  const { page } = browser!;
  const credential = (await api('POST', '/admin/credentials', { name: `route-cred-${run}`, provider: 'openai', api_key: SECRET_A })).json.id;
  const route = await api('POST', '/admin/routes', { name: `via-${run}`, route: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', custom_host: fake!.baseUrl, credential }] } });
  t.is(route.status, 201, route.text);
  await page.getByRole('link', { name: 'Logs' }).click();
  await page.getByRole('link', { name: 'Virtual keys' }).click();
  const create = page.getByRole('form', { name: 'Create a virtual key' });
  await create.getByLabel('Name', { exact: true }).fill(`routed-${run}`);
  await create.getByLabel('Route instead of a provider').selectOption({ label: `via-${run}` });
  t.true(await create.getByLabel('Provider key').isDisabled(), 'the provider fields do not apply to a route key');
  await create.getByRole('button', { name: 'Create key' }).click();
  const value = page.locator('.once input.key-value');
  await value.waitFor();
  const routed = await value.inputValue();
  routedValue = routed;
  await page.getByRole('button', { name: 'I have saved it' }).click();
  t.is(await page.locator(`tr[data-key-name="routed-${run}"] a.key-route`).innerText(), `↪ route via-${run}`);
  const before = fake!.requests.length;
  t.truthy((await ask(routed)).id);
  t.is(fake!.requests.length, before + 1);
  t.is(fake!.requests.at(-1)!.headers.authorization, `Bearer ${SECRET_A}`);
  // Its edit form offers the route, not a provider's fields.
  await page.locator(`tr[data-key-name="routed-${run}"]`).getByRole('button', { name: `Edit routed-${run}` }).click();
  const edit = page.getByRole('form', { name: `Edit routed-${run}` });
  t.is(await edit.getByLabel('Route', { exact: true }).locator('option:checked').innerText(), `via-${run}`);
  t.is(await edit.getByLabel('Custom host', { exact: true }).count(), 0);
});

it('rotating a credential in the page replaces its secret under the same id: the route key sends the new one', async (t) => {
  const { page } = browser!;
  await page.getByRole('link', { name: 'Credentials' }).click();
  const row = page.locator(`tr[data-credential-name="route-cred-${run}"]`);
  const id = await row.getAttribute('data-credential-id');
  // Used by no key directly, but by the stored route: listed, and the API refuses its deletion.
  t.is(await row.locator('td.used-by').innerText(), `route via-${run}`);
  t.is((await api('DELETE', `/admin/credentials/${id}`)).status, 409);
  await row.getByRole('button', { name: `Rotate route-cred-${run}` }).click();
  const form = page.getByRole('form', { name: `Rotate route-cred-${run}` });
  await form.getByLabel('New API key').fill(SECRET_C);
  await form.getByRole('button', { name: 'Replace secret' }).click();
  await page.locator('.notice', { hasText: `Replaced the secret of "route-cred-${run}".` }).waitFor();
  t.not(await page.locator(`tr[data-credential-id="${id}"] td.rotated`).innerText(), 'never');
  t.false((await page.content()).includes(SECRET_C));
  t.truthy((await ask(routedValue)).id);
  t.is(fake!.requests.at(-1)!.headers.authorization, `Bearer ${SECRET_C}`);
});

it('at 800 px wide the pages do not overflow: the tables scroll inside their frame', async (t) => {
  const { page } = browser!;
  await page.setViewportSize({ width: 800, height: 900 });
  for (const link of ['Virtual keys', 'Credentials']) {
    await page.getByRole('link', { name: link }).click();
    await page.locator('table').first().waitFor();
    t.true(await page.locator('html').evaluate((root) => (root as unknown as { scrollWidth: number }).scrollWidth <= 800), link);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
});

it('no secret reached the page', async (t) => {
  const { page, consoleErrors } = browser!;
  const html = await page.content();
  for (const secret of [SECRET_A, SECRET_B, SECRET_C, keyValue, routedValue]) t.false(html.includes(secret));
  t.deepEqual(consoleErrors.filter((message) => !message.includes('403') && !message.includes('409')), []);
});
