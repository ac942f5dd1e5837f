import anyTest, { type TestFn } from 'ava';
import OpenAI from 'openai';
import shipped from '../../gateway.config.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, fixedUsageHandler } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';
import { waitForLogs } from './logs-api.js';

// The routes and policies views with real traffic through the official SDK. A route is made in the
// structured form: first refused with the error on the field it names, then stored, then taken by
// a virtual key whose requests reach the fake provider; its first target answers 500, so its
// breaker opens and the route's page shows it. The policies view shows the two shipped policies'
// distinct chains with their params, the keys using each, and the verdicts of guarded requests.

interface Context {
  gateway: TestGateway;
  down: Fake;
  up: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  credentialId: string;
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;
const run = Math.random().toString(36).slice(2, 8);
/** Set by the first test (each test gets its own copy of the context). */
let routeId = '';
const card = 'My card is 4111 1111 1111 1111, please remember it.';

test.before(async (t) => {
  if (skipReason) return;
  // The browser first: when it cannot start, nothing else is left open to keep this file's process alive.
  const browser = await openBrowser();
  t.context.browser = browser;
  const down = await startFake((_request, response) => {
    response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
  });
  const up = await startFake(fixedUsageHandler(0));
  const gateway = await startGateway({
    routing: { breaker: { failures: 2, cooldownMs: 600_000, minRequests: 1000 } },
    routes: { 'config-fallback': { strategy: { mode: 'fallback' }, targets: [{ name: 'cfg-a', provider: 'openai', custom_host: up.baseUrl }] } },
    // The two shipped policies, which the page used to show alike.
    policies: shipped.policies,
  });
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'fake-openai', provider: 'openai', api_key: 'sk-routes2-secret-0123456789' });
  if (credential.status !== 201) throw new Error(credential.text);
  t.context = { gateway, down, up, browser, credentialId: credential.json.id };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.down?.close();
  await t.context.up?.close();
});

const keyClient = (gateway: TestGateway, key: string, trace: string) =>
  new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-trace-id': trace } });

it('a route made in the form: a duplicate target name is shown on that field, the fixed form stores the route', async (t) => {
  const { page } = t.context.browser;
  const { gateway, down, up } = t.context;
  await signIn(page, gateway.url);
  await page.getByRole('link', { name: 'Routes', exact: true }).click();
  const form = page.getByRole('form', { name: 'New route' });
  await form.waitFor();
  await form.getByLabel('Name', { exact: true }).fill('ui-route');
  await form.getByLabel('Strategy').selectOption('fallback');
  const first = form.getByRole('group', { name: 'Target 1' });
  await first.getByLabel('Target name').fill('first');
  await first.getByLabel('Provider').selectOption('openai');
  await first.getByLabel('Credential').selectOption({ label: 'fake-openai (openai)' });
  await first.getByLabel('Custom host').fill(down.baseUrl);
  await form.getByRole('button', { name: 'Add a target' }).click();
  const second = form.getByRole('group', { name: 'Target 2' });
  await second.getByLabel('Target name').fill('first');
  await second.getByLabel('Credential').selectOption({ label: 'fake-openai (openai)' });
  await second.getByLabel('Custom host').fill(up.baseUrl);
  await second.getByLabel('Model').fill('gpt-4o-mini');
  await form.getByRole('button', { name: 'Create route' }).click();

  // The API's 400 names route.targets[1].name: that input is marked and described by the message.
  const nameInput = second.getByLabel('Target name');
  await page.waitForFunction(() => (globalThis as any).document.querySelector('[data-param="route.targets[1].name"]')?.getAttribute('aria-invalid') === 'true');
  t.is(await nameInput.getAttribute('aria-invalid'), 'true');
  const describedBy = (await nameInput.getAttribute('aria-describedby')) ?? '';
  const errorText = await page.evaluate((ids) => ids.split(' ').map((id) => (globalThis as any).document.getElementById(id)?.textContent ?? '').join(' '), describedBy);
  t.regex(errorText, /"first" is used by another target of this route/);
  t.true(await nameInput.evaluate((element) => element === (globalThis as any).document.activeElement), 'the field in error has the focus');
  t.is(await first.getByLabel('Target name').getAttribute('aria-invalid'), null, 'only the field named is marked');
  t.is(await form.locator('.form-errors').isVisible(), false, 'no form-level message when the field is found');
  t.false((await admin(gateway, 'GET', '/admin/routes')).json.data.some((route: { name: string }) => route.name === 'ui-route'), 'nothing stored');
  await screenshot(page, 'dashboard-route-form-error');

  await nameInput.fill('second');
  await form.getByRole('button', { name: 'Create route' }).click();
  await page.getByRole('heading', { name: 'Route ui-route' }).waitFor();
  const listed = (await admin(gateway, 'GET', '/admin/routes')).json.data.find((route: { name: string }) => route.name === 'ui-route');
  t.deepEqual(listed.route, {
    strategy: { mode: 'fallback' },
    targets: [
      { name: 'first', provider: 'openai', credential: t.context.credentialId, custom_host: down.baseUrl },
      { name: 'second', provider: 'openai', credential: t.context.credentialId, custom_host: up.baseUrl, override_params: { model: 'gpt-4o-mini' } },
    ],
  });
  routeId = listed.id;
  t.is(await page.evaluate(() => (globalThis as any).location.hash), `#/routes/${listed.id}`);
});

it('a key taking the route reaches the fake provider; the failing target’s breaker shows open on the route’s page', async (t) => {
  const { page } = t.context.browser;
  const { gateway, down, up } = t.context;
  const key = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'ui-route-key', route: 'ui-route' });
  t.is(key.status, 201, key.text);
  const before = up.requests.length;
  const attempts: string[] = [];
  for (let index = 0; index < 3; index++) {
    const { data, response } = await keyClient(gateway, key.json.key, `routes2-${run}-${index}`).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    t.is(data.choices[0].message.content, 'ok');
    attempts.push(response.headers.get('x-gateway-attempts') ?? '');
  }
  t.deepEqual(attempts, ['2', '2', '1'], 'two failures open the first target; the third request skips it');
  t.is(down.requests.length, 2);
  t.is(up.requests.length - before, 3);
  t.is(up.requests.at(-1)?.json().model, 'gpt-4o-mini', 'the target’s model override reached the provider');

  await page.getByRole('button', { name: 'Refresh breakers' }).click();
  const broken = page.locator('#route-breakers table.breakers tbody tr[data-path="targets[0]"]');
  await page.locator('#route-breakers table.breakers tbody tr[data-path="targets[0]"][data-state="open"]').waitFor();
  const cells = await broken.locator('th, td').allInnerTexts();
  // Target, path, state, failures in a row, window, opened, probe from, in flight, latency
  t.deepEqual(cells.slice(0, 5), ['first', 'targets[0]', 'open', '2', '2 / 2']);
  t.not(cells[5], '—');
  t.not(cells[6], '—');
  const healthy = await page.locator('#route-breakers table.breakers tbody tr[data-path="targets[1]"]').locator('th, td').allInnerTexts();
  t.deepEqual(healthy.slice(0, 5), ['second', 'targets[1]', 'closed', '0', '0 / 3']);
  t.regex(healthy[8], /^\d+(\.\d)? ms$/);
  await page.locator('#route-breakers').scrollIntoViewIfNeeded();
  await screenshot(page, 'dashboard-routes');
});

it('changing the route in the form stores version 2; its history lists what changed', async (t) => {
  const { page } = t.context.browser;
  const form = page.getByRole('form', { name: 'Change this route' });
  const second = form.getByRole('group', { name: 'Target 2' });
  t.is(await second.getByLabel('Model').inputValue(), 'gpt-4o-mini', 'the form holds the current version');
  // A refusal naming the targets as a whole (a single route has one target) is shown by the targets' button.
  await form.getByLabel('Strategy').selectOption('single');
  await form.getByRole('button', { name: 'Store new version' }).click();
  const addButton = form.getByRole('button', { name: 'Add a target' });
  await page.waitForFunction(() => (globalThis as any).document.querySelector('form[aria-labelledby="edit-route-title"] [data-param="route.targets"]')?.getAttribute('aria-invalid') === 'true');
  const describedBy = (await addButton.getAttribute('aria-describedby')) ?? '';
  t.regex(await page.locator(`[id="${describedBy}"]`).innerText(), /a single route has exactly one target/);
  t.true(await addButton.evaluate((element) => element === (globalThis as any).document.activeElement));
  await form.getByLabel('Strategy').selectOption('fallback');
  await second.getByLabel('Model').fill('gpt-4o');
  await form.getByLabel('Retries per target').fill('1');
  await form.getByRole('button', { name: 'Store new version' }).click();
  await page.locator('#route-versions details.version[data-version="2"]').waitFor();
  const changes = await page.locator('#route-versions details.version[data-version="2"] ul.diff li').evaluateAll((items) =>
    items.map((item) => [item.getAttribute('data-path'), (item.textContent ?? '').trim()]),
  );
  t.deepEqual(changes, [
    ['targets[1].override_params.model', 'changed targets[1].override_params.model: "gpt-4o-mini" → "gpt-4o"'],
    ['retry.attempts', 'added retry.attempts: 1'],
  ]);
  const stored = await admin(t.context.gateway, 'GET', `/admin/routes/${routeId}`);
  t.is(stored.json.version, 2);
  t.deepEqual(stored.json.route.retry, { attempts: 1 });
  t.is(stored.json.route.targets[1].override_params.model, 'gpt-4o');
  // The breakers are the route's, not a version's: still open after the change.
  t.is(await page.locator('#route-breakers tr[data-path="targets[0]"]').getAttribute('data-state'), 'open');
});

it('the routes list shows the configuration’s routes read-only with their breakers', async (t) => {
  const { page } = t.context.browser;
  await page.getByRole('link', { name: '← Back to routes' }).click();
  const row = page.locator('table.config-routes tbody tr[data-config-route="config-fallback"]');
  await row.waitFor();
  t.deepEqual((await row.locator('th, td').allInnerTexts()).slice(0, 3), ['config-fallback', 'route', 'fallback']);
  t.is(await row.locator('li[data-path="targets[0]"]').innerText(), 'cfg-a closed (untried)');
  t.is(await row.locator('input, select, textarea, button').count(), 0, 'read-only');
  await screenshot(page, 'dashboard-routes-list');

  // At 800 px the page does not scroll sideways: wide tables scroll in their own box, the form wraps.
  await page.setViewportSize({ width: 800, height: 900 });
  const overflow = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth);
  await page.getByRole('form', { name: 'New route' }).scrollIntoViewIfNeeded();
  await screenshot(page, 'dashboard-route-form-800');
  await page.setViewportSize({ width: 1366, height: 900 });
  t.is(overflow, 0);
});

it('the policies view shows each chain with its params, the keys using it and the verdicts of guarded requests', async (t) => {
  const { page } = t.context.browser;
  const { gateway, up, credentialId } = t.context;
  const key = async (name: string, policy: string) => {
    const made = await admin(gateway, 'POST', '/admin/virtual-keys', { name, provider: 'openai', credential_id: credentialId, custom_host: up.baseUrl, guardrail_policy: policy });
    if (made.status !== 201) throw new Error(made.text);
    return made.json.key as string;
  };
  const redactKey = await key('redact-key', 'pii-redact');
  const blockKey = await key('block-key', 'pii-block');
  const traces = [`pol-${run}-1`, `pol-${run}-2`, `pol-${run}-3`, `pol-${run}-4`];
  const ask = (value: string, trace: string, content: string) => keyClient(gateway, value, trace).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  const before = up.requests.length;
  await ask(redactKey, traces[0], card);
  t.false(up.requests.at(-1)!.body.toString().includes('4111 1111'), 'the card was redacted before it left');
  await ask(redactKey, traces[1], 'hello');
  await t.throwsAsync(ask(blockKey, traces[2], card), { instanceOf: OpenAI.BadRequestError });
  await ask(blockKey, traces[3], 'hello');
  t.is(up.requests.length - before, 3, 'the denied request never reached the provider');
  await waitForLogs(gateway, traces);

  await page.getByRole('link', { name: 'Policies' }).click();
  const redact = page.locator('section.policy[data-policy="pii-redact"]');
  const block = page.locator('section.policy[data-policy="pii-block"]');
  await redact.waitFor();
  const chain = (section: typeof redact) => section.locator('table.chain tbody tr').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => (cell.textContent ?? '').trim())));
  // Side, #, guardrail, params, on error, time budget
  t.deepEqual((await chain(redact)).map((cells) => cells.slice(0, 4)), [['input', '1', 'pii', 'action: redact'], ['output', '1', 'pii', 'action: redact']]);
  t.deepEqual((await chain(block)).map((cells) => cells.slice(0, 4)), [['input', '1', 'pii', 'action: deny'], ['output', '1', 'pii', 'action: deny']]);
  t.is(await redact.locator('p.description').innerText(), 'Redacts PII in input and output, streams included.');
  t.is(await block.locator('p.description').innerText(), 'Denies input containing PII and cuts output containing PII.');
  t.deepEqual(await redact.locator('.keys-named a.policy-key').allInnerTexts(), ['redact-key']);
  t.deepEqual(await block.locator('.keys-named a.policy-key').allInnerTexts(), ['block-key']);

  t.is(await redact.locator('.verdict-totals').innerText(), '2 requests judged · 0 denied · 1 transformed');
  t.is(await block.locator('.verdict-totals').innerText(), '2 requests judged · 1 denied · 0 transformed');
  const counts = (section: typeof redact, side: string) =>
    section.locator(`table.verdicts tbody tr[data-side="${side}"][data-guardrail="pii"] td.number`).allInnerTexts();
  // allow, deny, transform
  t.deepEqual(await counts(redact, 'input'), ['1', '0', '1']);
  t.deepEqual(await counts(redact, 'output'), ['2', '0', '0']);
  t.deepEqual(await counts(block, 'input'), ['1', '1', '0']);
  t.deepEqual(await counts(block, 'output'), ['1', '0', '0']);
  await screenshot(page, 'dashboard-policies');

  // The plugins view lists guardrails by id with what they judge and their params, no missing name.
  await page.getByRole('link', { name: 'Plugins', exact: true }).click();
  const piiRow = page.locator('table.guardrails tbody tr[data-plugin-id="pii"]');
  await piiRow.waitFor();
  const piiCells = await piiRow.locator('th, td').allInnerTexts();
  t.is(piiCells[0], 'pii');
  t.regex(piiCells[2], /input/);
  t.regex(piiCells[4], /action/);
  // The refused form and the denied request were on purpose; nothing else failed in the page.
  t.deepEqual(t.context.browser.consoleErrors.filter((message) => !/status of 400 /.test(message)), []);
  t.false((await page.content()).includes(ACCOUNT_KEY));
});
