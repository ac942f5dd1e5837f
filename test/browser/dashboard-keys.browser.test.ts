import test from 'ava';
import OpenAI from 'openai';
import { pii } from '../../plugins/guardrails/index.js';
import { startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway } from '../harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn } from './browser.js';

// Skipped only when Chromium is missing outside CI (under CI=true a missing browser fails).
const skipReason = browserSkipReason();
// The browser first: when it cannot start, no server is left running to keep this file's process alive.
const browser = skipReason ? undefined : await openBrowser();
const gateway = await startGateway({ policies: { 'pii-redact': { input: [pii({ action: 'redact' })], output: [pii({ action: 'redact' })] } } });
const fake = await startFake();
const it = skipReason ? test.skip : test.serial;
// ava runs no hooks when every test is skipped: close now so the worker can exit.
if (skipReason) await Promise.all([gateway.close(), fake.close()]);

test.after.always(async () => {
  await browser?.close();
  await gateway.close();
  await fake.close();
});

const name = `browser-key-${Math.random().toString(36).slice(2, 8)}`;
const clientWith = (virtualKey: string) =>
  new OpenAI({ apiKey: 'unused-by-the-gateway', baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': virtualKey } });
const ask = (virtualKey: string) => clientWith(virtualKey).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
const admin = (path: string, method = 'GET') => fetch(`${gateway.url}${path}`, { method, headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
const adminList = async () => (await admin('/admin/virtual-keys')).text();
const adminKey = async (keyName = name) => JSON.parse(await adminList()).data.find((key: { name: string }) => key.name === keyName);
interface Usage { spend_usd: Record<string, number>; requests: { total: number; day: number }; budget_usd: number | null; budget_period: string | null }
const adminUsage = async (id: string): Promise<Usage> => (await admin(`/admin/virtual-keys/${id}/usage`)).json() as Promise<Usage>;

let firstValue = '';
let rotatedValue = '';

it('creating a virtual key shows its value once, and the key works through the SDK', async (t) => {
  const { page } = browser!;
  page.on('dialog', (dialog) => dialog.accept());
  await signIn(page, gateway.url);
  await page.getByRole('link', { name: 'Virtual keys' }).click();
  await page.getByRole('heading', { name: 'Create a virtual key' }).waitFor();
  const form = page.getByRole('form', { name: 'Create a virtual key' });
  await form.getByLabel('Name', { exact: true }).fill(name);
  await form.getByLabel('Provider', { exact: true }).selectOption('openai');
  await form.getByLabel('Provider key').fill(PROVIDER_KEY);
  await form.getByLabel('Custom host').fill(fake.baseUrl);
  await form.getByLabel('Requests per day').fill('500');
  await form.getByLabel('Budget (USD)').fill('5');
  await form.getByLabel('Budget period').selectOption('month');
  const bodies = form.getByLabel('Log request and response bodies');
  t.true(await bodies.isChecked(), 'bodies are logged by default');
  await bodies.uncheck();
  await form.getByRole('button', { name: 'Create key' }).click();
  const value = page.locator('.once input.key-value');
  await value.waitFor();
  firstValue = await value.inputValue();
  t.true(firstValue.length >= 20, firstValue);
  t.not(firstValue, PROVIDER_KEY);
  t.is(await page.getByRole('button', { name: 'Copy' }).count(), 1);
  const row = page.locator(`tr[data-key-name="${name}"]`);
  t.true((await row.innerText()).includes('500/day'));
  t.is(await row.locator('td.log-bodies').innerText(), 'no');
  t.false((await adminKey()).log_bodies);

  const completion = await ask(firstValue);
  t.is(completion.choices[0].message.content, 'Hello! How can I assist you today?');
  t.is(fake.requests.at(-1)!.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  const usage = await adminUsage((await adminKey()).id);
  t.is(usage.requests.day, 1);
  t.is(usage.budget_period, 'month');

  // Once dismissed (or after navigating), the value is nowhere: not in the page, not in the API.
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await page.getByRole('link', { name: 'Logs' }).click();
  await page.getByRole('link', { name: 'Virtual keys' }).click();
  await row.waitFor();
  // The usage cell: spend in the budget's period against the budget, today's requests against the limit.
  const usageCell = await row.locator('td.usage').innerText();
  t.regex(usageCell, /^\$\d+\.\d+ of \$5\.00 \(month\) · 1 of 500 today$/);
  t.false(usageCell.includes('NaN'), usageCell);
  const html = await page.content();
  t.false(html.includes(firstValue));
  t.false(html.includes(PROVIDER_KEY));
  const listing = await adminList();
  t.false(listing.includes(firstValue));
  t.false(listing.includes(PROVIDER_KEY));
  // The credential sealed from the pasted provider key belongs to this key: listed by the API, not offered for others.
  const credentials = (await (await admin('/admin/credentials')).json() as { data: Array<{ name: string; owner_key_id?: string }> }).data;
  const { id } = await adminKey();
  t.true(credentials.some((credential) => credential.owner_key_id === id));
  t.deepEqual(await page.getByLabel('Stored credential').locator('option').allInnerTexts(), ['Paste a provider key instead']);
  await screenshot(page, 'dashboard-keys-created');
});

it('the budget period offers exactly the periods the API accepts, and a key can be created with each', async (t) => {
  const { page } = browser!;
  // Every level's limits share LevelLimits (a key's Limits composes it since issue 34).
  const spec = await (await fetch(`${gateway.url}/admin/openapi.json`)).json() as { components: { schemas: { LevelLimits: { properties: { budget_period: { enum: string[] } } } } } };
  const accepted = spec.components.schemas.LevelLimits.properties.budget_period.enum;
  t.deepEqual(accepted, ['total', 'day', 'week', 'month']);
  const form = page.getByRole('form', { name: 'Create a virtual key' });
  const period = form.getByLabel('Budget period');
  t.deepEqual(await period.locator('option').evaluateAll((options) => options.map((option) => option.getAttribute('value'))), accepted);
  for (const value of accepted) {
    const keyName = `${name}-${value}`;
    await form.getByLabel('Name', { exact: true }).fill(keyName);
    await form.getByLabel('Provider', { exact: true }).selectOption('openai');
    await form.getByLabel('Provider key').fill(PROVIDER_KEY);
    await form.getByLabel('Budget (USD)').fill('2');
    await period.selectOption(value);
    await form.getByRole('button', { name: 'Create key' }).click();
    const row = page.locator(`tr[data-key-name="${keyName}"]`);
    await row.waitFor();
    t.is(await page.locator('.notice.error').count(), 0, `creating with ${value}`);
    const key = await adminKey(keyName);
    t.is((await adminUsage(key.id)).budget_period, value);
    t.is(await row.locator('td.usage').innerText(), `$0.00 of $2.00 (${value}) · 0 today`);
    await row.getByRole('button', { name: `Edit ${keyName}` }).click();
    t.is(await page.getByRole('form', { name: `Edit ${keyName}` }).getByLabel('Budget period').inputValue(), value, 'the edit form shows the period');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'I have saved it' }).click();
    t.is((await admin(`/admin/virtual-keys/${key.id}`, 'DELETE')).status, 204);
  }
});

it('editing limits is saved; rotating replaces the value', async (t) => {
  const { page } = browser!;
  const row = page.locator(`tr[data-key-name="${name}"]`);
  await row.getByRole('button', { name: `Edit ${name}` }).click();
  const edit = page.getByRole('form', { name: `Edit ${name}` });
  await edit.getByLabel('Requests per day').fill('750');
  await edit.getByLabel('Guardrail policy').selectOption('pii-redact');
  t.false(await edit.getByLabel('Log request and response bodies').isChecked(), 'the form shows the key\'s switch');
  await edit.getByLabel('Log request and response bodies').check();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator(`tr[data-key-name="${name}"]`, { hasText: '750/day' }).waitFor();
  t.true((await adminList()).includes('750'));
  t.true((await adminKey()).log_bodies);
  t.is(await row.locator('td.log-bodies').innerText(), 'yes');
  t.is((await adminKey()).guardrail_policy, 'pii-redact');
  t.true((await row.innerText()).includes('pii-redact'));

  await row.getByRole('button', { name: `Rotate ${name}` }).click();
  const value = page.locator('.once input.key-value');
  await value.waitFor();
  rotatedValue = await value.inputValue();
  t.not(rotatedValue, firstValue);
  await t.throwsAsync(ask(firstValue), { instanceOf: OpenAI.AuthenticationError });
  t.truthy((await ask(rotatedValue)).id);
});

it('the policies view lists the configured policy with its steps and params', async (t) => {
  const { page } = browser!;
  await page.getByRole('link', { name: 'Policies' }).click();
  const steps = page.locator('section.policy[data-policy="pii-redact"] table.chain tbody tr');
  await steps.first().waitFor();
  t.deepEqual(await steps.evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].slice(0, 4).map((cell) => (cell.textContent ?? '').trim()))), [
    ['input', '1', 'pii', 'action: redact'],
    ['output', '1', 'pii', 'action: redact'],
  ]);
});

it('deleting the key removes it from the list and the SDK is refused with it', async (t) => {
  const { page } = browser!;
  await page.getByRole('link', { name: 'Logs' }).click();
  await page.getByRole('link', { name: 'Virtual keys' }).click();
  const row = page.locator(`tr[data-key-name="${name}"]`);
  await row.getByRole('button', { name: `Delete ${name}` }).click();
  await row.waitFor({ state: 'detached' });
  t.false((await adminList()).includes(name));
  await t.throwsAsync(ask(rotatedValue), { instanceOf: OpenAI.AuthenticationError });
});
