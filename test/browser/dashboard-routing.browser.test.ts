import anyTest, { type TestFn } from 'ava';
import OpenAI from 'openai';
import { startFake, type Fake } from '../fakes/openai-fake.js';
import { sdkClient, startGateway, type TestGateway } from '../harness.js';
import { admin, FIXED_USAGE, fixedUsageHandler } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';
import { waitForLogs } from './logs-api.js';

// A stored fallback route (version 2 after one change), a model alias and a virtual key naming it.
// One request through the key: the first fake answers 503, the second 200. The dashboard shows the
// attempts in the log's detail view, marks the row in the list, lists the route with its versions
// and aliases, and shows the key's route instead of an empty provider.

interface Context {
  gateway: TestGateway;
  down: Fake;
  up: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  routeId: string;
  routedTrace: string;
  plainTrace: string;
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const run = Math.random().toString(36).slice(2, 8);

const routeOf = (down: Fake, up: Fake, backupModel: string) => ({
  strategy: { mode: 'fallback' },
  targets: [
    { name: 'primary', provider: 'openai', custom_host: down.baseUrl },
    { name: 'backup', provider: 'openai', custom_host: up.baseUrl, override_params: { model: backupModel } },
  ],
});

test.before(async (t) => {
  if (skipReason) return;
  // The browser first: when it cannot start, nothing else is left open to keep this file's process alive.
  const browser = await openBrowser();
  t.context.browser = browser;
  const down = await startFake((_request, response) => {
    response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
  });
  const up = await startFake(fixedUsageHandler(0));
  const gateway = await startGateway();
  const credential = (await admin(gateway, 'POST', '/admin/credentials', { name: 'shared', provider: 'openai', api_key: 'sk-shared-secret-0123456789' })).json.id as string;
  const withCredential = (route: ReturnType<typeof routeOf>) => ({ ...route, targets: route.targets.map((target) => ({ ...target, credential })) });
  const created = await admin(gateway, 'POST', '/admin/routes', { name: 'resilient', route: withCredential(routeOf(down, up, 'gpt-4o')) });
  if (created.status !== 201) throw new Error(`storing the route gave ${created.status}: ${created.text}`);
  const routeId = created.json.id as string;
  const changed = await admin(gateway, 'PUT', `/admin/routes/${routeId}`, { name: 'resilient', route: withCredential(routeOf(down, up, 'gpt-4o-mini')) });
  if (changed.status !== 200 || changed.json.version !== 2) throw new Error(`changing the route gave ${changed.status}: ${changed.text}`);
  const alias = await admin(gateway, 'PUT', '/admin/models/fast', { route_id: 'resilient' });
  if (alias.status !== 200) throw new Error(`the alias gave ${alias.status}: ${alias.text}`);
  const key = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'routed-key', route: 'resilient' });
  if (key.status !== 201) throw new Error(`the key gave ${key.status}: ${key.text}`);

  const routedTrace = `dash-route-${run}`;
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key.json.key, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-trace-id': routedTrace } });
  const { response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  if (response.headers.get('x-gateway-attempts') !== '2') throw new Error('the request should have taken two attempts');
  const plainTrace = `dash-plain-${run}`;
  await sdkClient(gateway.url, up.baseUrl, { 'x-gateway-trace-id': plainTrace }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  await waitForLogs(gateway, [routedTrace, plainTrace]);
  t.context = { gateway, down, up, browser, routeId, routedTrace, plainTrace };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.down?.close();
  await t.context.up?.close();
});

const row = (t: { context: Context }, trace: string) => t.context.browser.page.locator(`table.logs tbody tr[data-trace-id="${trace}"]`);

it('the logs list marks the routed request with its attempts and the target that answered; a plain one has no mark', async (t) => {
  const { page } = t.context.browser;
  await signIn(page, t.context.gateway.url);
  await row(t, t.context.routedTrace).waitFor();
  t.is(await row(t, t.context.routedTrace).locator('.route-badge').innerText(), '↪ 2 attempts');
  t.is(await row(t, t.context.routedTrace).locator('.route-target').innerText(), 'backup');
  t.is(await row(t, t.context.plainTrace).locator('.routed').count(), 0);
  t.is(await row(t, t.context.plainTrace).locator('td').nth(2).innerText(), 'openai');
});

it('the detail view shows the route and the attempts in order, the answered one marked', async (t) => {
  const { page } = t.context.browser;
  await row(t, t.context.routedTrace).locator('a.open-detail').click();
  const attempts = page.locator('#routing table.attempts tbody tr');
  await attempts.first().waitFor();
  const rows = await attempts.evaluateAll((items) =>
    items.map((item) => [...item.querySelectorAll('th, td')].map((cell) => (cell.textContent ?? '').trim())),
  );
  t.is(rows.length, 2);
  // #, target, provider, model, status, latency, error code, tokens, mark
  // The first target overrides no model: its attempt records the request's own.
  t.deepEqual(rows.map((cells) => [cells[0], cells[1], cells[2], cells[3], cells[4]]), [
    ['1', 'primary', 'openai', 'gpt-4o', '503'],
    ['2', 'backup', 'openai', 'gpt-4o-mini', '200'],
  ]);
  t.regex(rows[0][5], /^\d+(\.\d)? ms$/);
  // Why the first attempt failed: the upstream's error code and its message.
  t.is(rows[0][6], 'server_erroroverloaded');
  t.is(rows[1][6], '—');
  t.is(rows[0][8], '');
  t.is(rows[1][7], String(FIXED_USAGE.total_tokens), 'the tokens the fake reports');
  t.is(rows[1][8], '✓ answered');
  t.deepEqual(await attempts.evaluateAll((items) => items.map((item) => item.getAttribute('data-answered'))), [null, 'true']);
  const route = await page.locator('#routing dl.route-pairs dd').allInnerTexts();
  t.deepEqual(route, ['resilient', t.context.routeId, '2', 'the virtual key']);
  await screenshot(page, 'dashboard-log-attempts');

  // A request that took no route shows no routing section.
  await page.getByRole('link', { name: '← Back to logs' }).click();
  await row(t, t.context.plainTrace).locator('a.open-detail').click();
  await page.locator('.chat-view').waitFor();
  t.is(await page.locator('#routing').count(), 0);
});

it('the Routes view lists the stored route and the alias; its page shows every version’s JSON', async (t) => {
  const { page } = t.context.browser;
  await page.getByRole('link', { name: 'Routes', exact: true }).click();
  const routeRow = page.locator(`table.routes tbody tr[data-route-id="${t.context.routeId}"]`);
  await routeRow.waitFor();
  const cells = await routeRow.locator('th, td').allInnerTexts();
  t.deepEqual(cells.slice(0, 4), ['resilient', t.context.routeId, '2', 'fallback']);
  t.deepEqual((await routeRow.locator('ul.targets li').allInnerTexts()), ['primary: openai', 'backup: openai, model gpt-4o-mini']);
  const alias = page.locator('table.aliases tbody tr[data-alias="fast"]');
  t.deepEqual((await alias.locator('th, td').allInnerTexts()).slice(0, 2), ['fast', 'resilient']);
  await screenshot(page, 'dashboard-routes-aliases');

  await routeRow.getByRole('link', { name: 'resilient' }).click();
  const versions = page.locator('#route-versions details.version');
  await versions.first().waitFor();
  t.deepEqual(await versions.evaluateAll((items) => items.map((item) => item.getAttribute('data-version'))), ['2', '1']);
  // Each version's own JSON: the backup model changed from gpt-4o to gpt-4o-mini.
  const json = await versions.evaluateAll((items) => items.map((item) => JSON.parse(item.querySelector('pre')?.textContent ?? 'null')));
  t.is(json[0].targets[1].override_params.model, 'gpt-4o-mini');
  t.is(json[1].targets[1].override_params.model, 'gpt-4o');
  t.is(json[1].targets[0].custom_host, t.context.down.baseUrl);
});

it('changing a route in the JSON editor: a 400 shows its param, a valid change stores version 3', async (t) => {
  const { page } = t.context.browser;
  // The JSON editor is folded under the structured form.
  await page.locator('details.advanced summary').click();
  const editor = page.getByLabel('Route (JSON: name and route)');
  const current = JSON.parse(await editor.inputValue());
  t.is(current.name, 'resilient');
  const broken = structuredClone(current);
  broken.route.targets[1].provider = 'no-such-provider';
  await editor.fill(JSON.stringify(broken));
  await page.getByRole('button', { name: 'Store new version from JSON' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.regex(await alert.innerText(), /\(param: route\.targets\[1\]\.provider\)$/);

  current.route.retry = { attempts: 1 };
  await editor.fill(JSON.stringify(current));
  await page.getByRole('button', { name: 'Store new version from JSON' }).click();
  await page.locator('#route-versions details.version[data-version="3"]').waitFor();
  t.is(await page.locator('#route-versions details.version').count(), 3);
  const stored = await admin(t.context.gateway, 'GET', `/admin/routes/${t.context.routeId}`);
  t.is(stored.json.version, 3);
  t.deepEqual(stored.json.route.retry, { attempts: 1 });

  // Deleting it is refused while a key and an alias name it: the page says so and the route stays.
  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: 'Delete route' }).click();
  await page.locator('#notice .notice.error', { hasText: 'routed-key' }).waitFor();
  t.is((await admin(t.context.gateway, 'GET', `/admin/routes/${t.context.routeId}`)).status, 200);
});

it('the virtual keys view shows the route a key names instead of an empty provider', async (t) => {
  const { page } = t.context.browser;
  await page.getByRole('link', { name: 'Virtual keys' }).click();
  const keyRow = page.locator('table.keys tbody tr[data-key-name="routed-key"]');
  await keyRow.waitFor();
  const link = keyRow.locator('a.key-route');
  t.is(await link.innerText(), '↪ route resilient');
  t.is(await link.getAttribute('href'), `#/routes/${t.context.routeId}`);

  // A key created in the form with a route names that route and no provider.
  const form = page.getByRole('form', { name: 'Create a virtual key' });
  await form.getByLabel('Name', { exact: true }).fill('form-routed');
  await form.getByLabel('Route instead of a provider').selectOption({ label: 'resilient' });
  await form.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#shown-once').getByText('Key "form-routed" created').waitFor();
  t.is(await page.locator('table.keys tbody tr[data-key-name="form-routed"] a.key-route').innerText(), '↪ route resilient');
  const created = (await admin(t.context.gateway, 'GET', '/admin/virtual-keys')).json.data.find((key: { name: string }) => key.name === 'form-routed');
  t.is(created.route, t.context.routeId);
  t.is(created.provider, undefined);
  // The refused change (400) and deletion (409) were on purpose; nothing else failed in the page.
  t.deepEqual(t.context.browser.consoleErrors.filter((message) => !/status of (400|409) /.test(message)), []);
});
