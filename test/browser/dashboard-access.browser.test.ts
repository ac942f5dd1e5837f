import anyTest, { type TestFn } from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, fixedUsageHandler } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, signIn, type BrowserSession } from './browser.js';

// Issue 31, items 1 and 4 in the dashboard: a route's target key is picked by name and hint and
// stored by id (the version JSON shows the id and hint, never the value); the key form grants other
// routes (`allowed_routes`), which the key list shows by name.

interface Context {
  gateway: TestGateway;
  fake: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  target: { id: string; key: string; hint: string };
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;

test.before(async (t) => {
  if (skipReason) return;
  const browser = await openBrowser();
  const fake = await startFake(fixedUsageHandler(0));
  const gateway = await startGateway();
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'access-openai', provider: 'openai', api_key: 'sk-access-secret-0123456789' });
  const target = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'target-key', provider: 'openai', credential_id: credential.json.id, custom_host: fake.baseUrl });
  t.context = { gateway, fake, browser, target: { id: target.json.id, key: target.json.key, hint: target.json.key_hint } };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});

it('a route target is a virtual key chosen by name and hint: stored by id, its version JSON shows id and hint, never the value', async (t) => {
  const { page } = t.context.browser;
  const { gateway, target } = t.context;
  await signIn(page, gateway.url);
  await page.getByRole('link', { name: 'Routes', exact: true }).click();
  const form = page.getByRole('form', { name: 'New route' });
  await form.waitFor();
  await form.getByLabel('Name', { exact: true }).fill('through-key');
  const first = form.getByRole('group', { name: 'Target 1' });
  await first.getByLabel('Target name').fill('k');
  await first.getByLabel('Calls').selectOption('virtual_key');
  const keySelect = first.getByLabel('Virtual key', { exact: true });
  t.is(await keySelect.evaluate((element) => element.tagName), 'SELECT', 'a list of keys, not a field for a value');
  await keySelect.selectOption({ label: `target-key (${target.hint})` });
  await form.getByRole('button', { name: 'Create route' }).click();
  await page.getByRole('heading', { name: 'Route through-key' }).waitFor();
  const stored = (await admin(gateway, 'GET', '/admin/routes')).json.data.find((route: { name: string }) => route.name === 'through-key');
  t.deepEqual(stored.route.targets, [{ name: 'k', virtual_key: target.id, virtual_key_hint: target.hint }]);
  const versions = await page.locator('#route-versions').innerText();
  t.true(versions.includes(target.id));
  t.true(versions.includes(target.hint));
  t.false((await page.content()).includes(target.key), 'the value is nowhere on the page');

  // Storing a new version from the form keeps the key (the hint the page read is not sent back as a field of the route).
  const edit = page.getByRole('form', { name: 'Change this route' });
  await edit.getByRole('button', { name: 'Store new version' }).click();
  await page.locator('details.version[data-version="2"]').waitFor();
  t.deepEqual((await admin(gateway, 'GET', `/admin/routes/${stored.id}`)).json.route.targets[0].virtual_key, target.id);
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it('the key form grants other routes; the list shows them by name; the key takes them and no other', async (t) => {
  const { page } = t.context.browser;
  const { gateway } = t.context;
  const own = await admin(gateway, 'POST', '/admin/routes', { name: 'own-route', route: { targets: [{ name: 'k', virtual_key: t.context.target.id }] } });
  t.is(own.status, 201);
  await page.getByRole('link', { name: 'Virtual keys', exact: true }).click();
  const form = page.getByRole('form', { name: 'Create a virtual key' });
  await form.waitFor();
  await form.getByLabel('Name', { exact: true }).fill('granted-key');
  await form.getByLabel('Route instead of a provider').selectOption({ label: 'own-route' });
  await form.getByLabel('Other routes it may take').fill('through-key');
  await form.getByRole('button', { name: 'Create key' }).click();
  const value = await page.locator('input.key-value').inputValue();
  const row = page.locator('table.keys tr', { hasText: 'granted-key' });
  await row.waitFor();
  t.regex(await row.locator('td.access').innerText(), /routes: through-key/);
  const key = (await admin(gateway, 'GET', '/admin/virtual-keys')).json.data.find((entry: { name: string }) => entry.name === 'granted-key');
  t.deepEqual(key.allowed_routes, [(await admin(gateway, 'GET', '/admin/routes')).json.data.find((route: { name: string }) => route.name === 'through-key').id]);
  t.is((await chatWithKey(gateway, value, {}, { 'x-gateway-config': 'through-key' })).status, 200);
  const refused = await chatWithKey(gateway, value, {}, { 'x-gateway-config': 'not-granted' });
  t.is(refused.status, 403);
  t.is(refused.json.error.code, 'route_not_allowed');
  t.deepEqual(t.context.browser.consoleErrors, []);
});
