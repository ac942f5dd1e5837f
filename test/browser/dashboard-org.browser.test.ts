import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, fixedUsageHandler } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';

// Issue 33, the dashboard: who is signed in, the team switcher, the Teams, Members, Users, Service
// accounts, Tokens and Audit pages, and every action the caller's permissions do not allow hidden.

type Browser = BrowserSession & { consoleErrors: string[] };
interface Context {
  gateway: TestGateway;
  fake: Fake;
  /** The default team's key's value (requests with it are logged). */
  defaultKey: string;
  browser: Browser;
  /** What one test hands the next (ava gives each test a shallow copy of the context). */
  shared: { invitation?: string; opened: Browser[] };
  others: string[];
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;

test.before(async (t) => {
  if (skipReason) return;
  const gateway = await startGateway();
  const fake = await startFake(fixedUsageHandler(0));
  // A shared credential every team may use, and a key in the default team and one in the new team
  // made by the account key: the member must see neither key.
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'shared-openai', provider: 'openai', api_key: 'sk-org-shared-secret-0123456789', team_id: null });
  t.is(credential.status, 201, credential.text);
  const other = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'default-team-key', provider: 'openai', credential_id: credential.json.id, custom_host: fake.baseUrl });
  t.is(other.status, 201, other.text);
  t.context = { gateway, fake, defaultKey: other.json.key, browser: await openBrowser(), shared: { opened: [] }, others: ['default-team-key'] };
});

test.after.always(async (t) => {
  // Closing a closed browser again is harmless; one a failed test left open is closed here.
  for (const browser of t.context.shared?.opened ?? []) await browser.close().catch(() => undefined);
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.fake?.close();
});


const navLinks = async (page: Page) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allInnerTexts();

/** Opens an invitation link in a fresh browser profile: the user is signed in and lands on the dashboard. */
async function openInvitation(opened: Browser[], url: string): Promise<Browser> {
  const browser = await openBrowser();
  opened.push(browser);
  await browser.page.goto(url);
  await browser.page.waitForURL(/\/dashboard/);
  return browser;
}

it('the account key: the header names it; creating a team and inviting a member shows the link once with its warning', async (t) => {
  const { page } = t.context.browser;
  const { gateway } = t.context;
  await signIn(page, gateway.url);
  t.is(await page.locator('#who').innerText(), 'account key');
  t.true(await page.getByRole('button', { name: 'Sign out' }).isVisible());
  const links = await navLinks(page);
  for (const name of ['Teams', 'Members', 'Users', 'Service accounts', 'Audit']) t.true(links.includes(name), name);
  t.false(links.includes('Tokens'), 'the account key has no personal tokens');

  await page.getByRole('link', { name: 'Teams', exact: true }).click();
  const create = page.getByRole('form', { name: 'Create a team' });
  await create.getByLabel('Name', { exact: true }).fill('search');
  await create.getByLabel('Allowed models').fill('gpt-4o-mini, gpt-4o');
  await create.getByRole('button', { name: 'Create team' }).click();
  const row = page.locator('table.teams tr[data-team-name="search"]');
  await row.waitFor();
  t.regex(await row.innerText(), /gpt-4o-mini, gpt-4o/);
  const team = (await admin(gateway, 'GET', '/admin/teams')).json.data.find((entry: { name: string }) => entry.name === 'search');
  t.deepEqual(team.allowed_models, ['gpt-4o-mini', 'gpt-4o']);
  // The switcher lists the new team at once.
  await page.locator('#team-switcher option', { hasText: 'search' }).waitFor({ state: 'attached' });

  // Edit the team's allowed lists.
  await row.getByRole('button', { name: 'Edit search' }).click();
  const edit = page.getByRole('form', { name: 'Edit search' });
  await edit.getByLabel('Allowed models').fill('gpt-4o-mini');
  await edit.getByRole('button', { name: 'Save team' }).click();
  await page.locator('table.teams tr[data-team-name="search"]', { hasNotText: 'gpt-4o-mini, gpt-4o' }).waitFor();
  t.deepEqual((await admin(gateway, 'GET', `/admin/teams/${team.id}`)).json.allowed_models, ['gpt-4o-mini']);

  // A key of the new team made by the account key (not the member's: a member sees only their own).
  const searchKey = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'search-admin-key', provider: 'openai', credential_id: (await admin(gateway, 'GET', '/admin/credentials')).json.data[0].id, team_id: team.id, custom_host: t.context.fake.baseUrl });
  t.is(searchKey.status, 201, searchKey.text);
  t.context.others.push('search-admin-key');

  await page.locator('table.teams tr[data-team-name="search"]').getByRole('link', { name: 'Members' }).click();
  await page.getByRole('heading', { name: 'Members of search' }).waitFor();
  const invite = page.getByRole('form', { name: 'Add or invite a member of search' });
  await invite.getByLabel('Email').fill('alice@example.com');
  await invite.getByLabel('Role').selectOption('member');
  await invite.getByRole('button', { name: 'Invite' }).click();
  const once = page.getByRole('region', { name: 'Invitation for alice@example.com' });
  await once.waitFor();
  t.regex(await once.innerText(), /shown once/);
  t.true(await once.getByRole('button', { name: 'Copy' }).isVisible());
  const url = await once.getByLabel('Invitation link').inputValue();
  t.regex(url, /\/dashboard\/invitations\//);
  t.is(await page.locator('table.members tr[data-email="alice@example.com"] .member-role').innerText(), 'Member');
  t.context.shared.invitation = url;
  await screenshot(page, 'dashboard-org-members');
  // The switcher picks the team the Members page shows.
  await page.getByLabel('Viewing team').selectOption({ label: 'default' });
  await page.getByRole('heading', { name: 'Members of default' }).waitFor();
  await page.getByLabel('Viewing team').selectOption({ label: 'All teams' });

  // The switcher filters the keys to one team, and the list names each key's team.
  await page.getByRole('link', { name: 'Virtual keys', exact: true }).click();
  await page.locator('table.keys tr[data-key-name="search-admin-key"]').waitFor();
  t.is(await page.locator('table.keys tr[data-key-name="search-admin-key"] td.team').innerText(), 'search');
  t.is(await page.locator('table.keys tr[data-key-name="default-team-key"] td.team').innerText(), 'default');
  await page.getByLabel('Viewing team').selectOption({ label: 'search' });
  await page.locator('table.keys tr[data-key-name="default-team-key"]').waitFor({ state: 'detached' });
  t.is(await page.locator('table.keys tbody tr').count(), 1);
  t.is(await page.getByRole('form', { name: 'Create a virtual key' }).getByLabel('Team').inputValue(), team.id, 'what is created goes to the chosen team');
  await page.getByLabel('Viewing team').selectOption({ label: 'All teams' });
  await page.locator('table.keys tr[data-key-name="default-team-key"]').waitFor();

  // Routes: the list and a route's page name its team; the switcher narrows the list.
  const route = await admin(gateway, 'POST', '/admin/routes', { name: 'search-route', team_id: team.id, route: { targets: [{ name: 'a', provider: 'openai', credential: (await admin(gateway, 'GET', '/admin/credentials')).json.data[0].id }] } });
  t.is(route.status, 201, route.text);
  t.is((await admin(gateway, 'POST', '/admin/routes', { name: 'default-route', route: { targets: [{ name: 'a', provider: 'openai' }] } })).status, 201);
  await page.getByRole('link', { name: 'Routes', exact: true }).click();
  await page.locator('table.routes tr[data-route-name="default-route"]').waitFor();
  t.is(await page.locator('table.routes tr[data-route-name="search-route"] td.team').innerText(), 'search');
  await page.getByLabel('Viewing team').selectOption({ label: 'search' });
  await page.locator('table.routes tr[data-route-name="default-route"]').waitFor({ state: 'detached' });
  t.deepEqual(await page.locator('table.routes tbody tr').evaluateAll((rows) => rows.map((row) => (row as any).dataset.routeName)), ['search-route']);
  await page.getByRole('link', { name: 'search-route' }).click();
  t.is(await page.locator('dd.route-team').innerText(), 'search');
  await page.getByLabel('Viewing team').selectOption({ label: 'All teams' });

  // The account key holds logs.bodies: the body search and the export with bodies are there.
  await page.getByRole('link', { name: 'Logs', exact: true }).click();
  await page.getByLabel('Search bodies').waitFor();
  t.is(await page.locator('.export-bodies').count(), 1);

  // Credentials name their team; the shared one is the organization's.
  await page.getByRole('link', { name: 'Credentials', exact: true }).click();
  t.is(await page.locator('table.credentials tr[data-credential-name="shared-openai"] td.team').innerText(), 'Organization (shared)');

  // Logs: a request with each key; the switcher keeps the team's keys' requests.
  t.is((await chatWithKey(gateway, t.context.defaultKey)).status, 200);
  t.is((await chatWithKey(gateway, searchKey.json.key)).status, 200);
  await page.getByRole('link', { name: 'Logs', exact: true }).click();
  const logRows = page.locator('table.logs tbody tr');
  await page.locator('table.logs tbody tr td.key', { hasText: 'default-team-key' }).waitFor();
  await page.locator('table.logs tbody tr td.key', { hasText: 'search-admin-key' }).waitFor();
  t.is(await logRows.count(), 2);
  await page.getByLabel('Viewing team').selectOption({ label: 'search' });
  // The page is drawn again: wait for its count line, which names the team.
  await page.locator('.list-tools p', { hasText: 'of team search' }).waitFor();
  t.deepEqual(await page.locator('table.logs tbody tr td.key').allInnerTexts(), ['search-admin-key']);
  await page.getByLabel('Viewing team').selectOption({ label: 'All teams' });
  t.deepEqual(t.context.browser.consoleErrors, []);
});

it('the member opens the invitation: only their team, no Users or Teams admin actions; they create a key and a personal token, then revoke it', async (t) => {
  const { gateway } = t.context;
  t.truthy(t.context.shared.invitation, 'the first test invited the member');
  const member = await openInvitation(t.context.shared.opened, t.context.shared.invitation!);
  const { page } = member;
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
  t.is(await page.locator('#who').innerText(), 'alice@example.com');
  const links = await navLinks(page);
  t.false(links.includes('Users'));
  t.false(links.includes('Audit'));
  t.false(links.includes('Plugins'));
  t.true(links.includes('Tokens'));

  // Their team's keys only (a member: their own), and they create one in their team.
  await page.getByRole('link', { name: 'Virtual keys', exact: true }).click();
  const form = page.getByRole('form', { name: 'Create a virtual key' });
  await form.waitFor();
  t.is(await page.locator('table.keys').count(), 0, 'no key of another team or another user');
  await form.getByLabel('Name', { exact: true }).fill('alice-key');
  await form.getByLabel('Stored credential').selectOption({ label: 'shared-openai (openai)' });
  await form.getByRole('button', { name: 'Create key' }).click();
  await page.locator('input.key-value').waitFor();
  const keys = page.locator('table.keys tbody tr');
  t.deepEqual(await keys.evaluateAll((rows) => rows.map((row) => (row as any).dataset.keyName)), ['alice-key']);
  t.is(await page.locator('table.keys tr[data-key-name="alice-key"] td.team').innerText(), 'search');
  const content = await page.content();
  for (const name of t.context.others) t.false(content.includes(name), name);
  const stored = (await admin(gateway, 'GET', '/admin/virtual-keys')).json.data.find((key: { name: string }) => key.name === 'alice-key');
  t.is(stored.team_id, (await admin(gateway, 'GET', '/admin/teams')).json.data.find((entry: { name: string }) => entry.name === 'search').id);

  // Logs without logs.bodies: no body search, no export with bodies (both would be 403).
  await page.getByRole('link', { name: 'Logs', exact: true }).click();
  await page.getByRole('search', { name: 'Filter logs' }).waitFor();
  await page.locator('.export-link').first().waitFor();
  t.is(await page.getByLabel('Search bodies').count(), 0);
  t.is(await page.locator('.export-bodies').count(), 0);

  // Teams: read, no create, edit or delete; Members: no invitation form.
  await page.getByRole('link', { name: 'Teams', exact: true }).click();
  await page.locator('table.teams').waitFor();
  t.deepEqual(await page.locator('table.teams tbody tr').evaluateAll((rows) => rows.map((row) => (row as any).dataset.teamName)), ['search']);
  t.is(await page.getByRole('form', { name: 'Create a team' }).count(), 0);
  t.is(await page.locator('table.teams').getByRole('button').count(), 0);
  await page.getByRole('link', { name: 'Members', exact: true }).click();
  await page.getByRole('heading', { name: 'Members of search' }).waitFor();
  t.is(await page.locator('form').count(), 0, 'no invitation form');
  t.is(await page.locator('table.members').getByRole('button').count(), 0);

  // A personal token: created with an expiry and one permission, shown once, listed, used, revoked.
  await page.getByRole('link', { name: 'Tokens', exact: true }).click();
  const tokenForm = page.getByRole('form', { name: 'Create a token' });
  await tokenForm.getByLabel('Token name').fill('ci-read');
  await tokenForm.getByLabel('Expires in (days)').fill('30');
  await tokenForm.getByLabel('keys.read').check();
  await tokenForm.getByRole('button', { name: 'Create token' }).click();
  const once = page.getByRole('region', { name: 'Token "ci-read" created' });
  await once.waitFor();
  t.regex(await once.innerText(), /only time the token is shown/);
  t.true(await once.getByRole('button', { name: 'Copy' }).isVisible());
  const token = await once.getByLabel('Token value').inputValue();
  t.regex(token, /^gtok-/);
  const row = page.locator('table.tokens tr[data-token-name="ci-read"]');
  t.is(await row.locator('.token-permissions').innerText(), 'keys.read');
  t.is(await row.locator('.last-used').innerText(), 'never used');
  const used = await admin(gateway, 'GET', '/admin/virtual-keys', undefined, token);
  t.is(used.status, 200);
  t.deepEqual(used.json.data.map((key: { name: string }) => key.name), ['alice-key']);
  await screenshot(page, 'dashboard-org-tokens');
  await page.reload();
  await page.locator('table.tokens tr[data-token-name="ci-read"] .last-used', { hasNotText: 'never used' }).waitFor();
  await once.waitFor({ state: 'detached' });
  t.false((await page.content()).includes(token), 'the value is not shown again');

  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Revoke ci-read' }).click();
  await page.locator('table.tokens tr[data-token-name="ci-read"]').waitFor({ state: 'detached' });
  t.is((await admin(gateway, 'GET', '/admin/virtual-keys', undefined, token)).status, 401);
  t.deepEqual(member.consoleErrors, []);
});

it('an auditor sees the pages but no create, edit or delete action', async (t) => {
  const { gateway } = t.context;
  const created = await admin(gateway, 'POST', '/admin/users', { email: 'audrey@example.com', role: 'auditor' });
  t.is(created.status, 201, created.text);
  const auditor = await openInvitation(t.context.shared.opened, created.json.invitation.url);
  try {
    const { page } = auditor;
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    const links = await navLinks(page);
    for (const name of ['Logs', 'Virtual keys', 'Credentials', 'Routes', 'Teams', 'Users', 'Service accounts', 'Audit']) t.true(links.includes(name), name);
    const pages: Array<[string, string]> = [['Virtual keys', 'table.keys'], ['Credentials', 'table.credentials'], ['Teams', 'table.teams'], ['Users', 'table.users']];
    for (const [link, table] of pages) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await page.locator(table).waitFor();
      t.is(await page.locator('main form.editor').count(), 0, `${link}: no form`);
      t.is(await page.locator(`${table} button`).count(), 0, `${link}: no button in the list`);
    }
    await page.getByRole('link', { name: 'Routes', exact: true }).click();
    await page.getByRole('heading', { name: 'Routes', exact: true }).waitFor();
    t.is(await page.getByRole('form', { name: 'New route' }).count(), 0);
    await page.getByRole('link', { name: 'Service accounts', exact: true }).click();
    await page.getByRole('heading', { name: 'Service accounts' }).waitFor();
    t.is(await page.getByRole('form', { name: 'Create a service account' }).count(), 0);
    t.deepEqual(auditor.consoleErrors, []);
  } finally {
    await auditor.close();
  }
});

it('a user with no role sees that they have no access yet', async (t) => {
  const created = await admin(t.context.gateway, 'POST', '/admin/users', { email: 'nobody@example.com' });
  t.is(created.status, 201, created.text);
  const nobody = await openInvitation(t.context.shared.opened, created.json.invitation.url);
  try {
    const { page } = nobody;
    await page.getByRole('heading', { name: 'You have no access yet' }).waitFor();
    t.is(await page.locator('#who').innerText(), 'nobody@example.com');
    t.false(await page.locator('#nav').isVisible());
    t.true(await page.getByRole('button', { name: 'Sign out' }).isVisible());
  } finally {
    await nobody.close();
  }
});

it('a team admin manages their team: members, keys and service accounts in it, no organization page or action', async (t) => {
  const { gateway } = t.context;
  const team = (await admin(gateway, 'GET', '/admin/teams')).json.data.find((entry: { name: string }) => entry.name === 'search');
  const created = await admin(gateway, 'POST', `/admin/teams/${team.id}/members`, { email: 'tina@example.com', role: 'team_admin' });
  t.is(created.status, 201, created.text);
  const teamAdmin = await openInvitation(t.context.shared.opened, created.json.invitation.url);
  try {
    const { page } = teamAdmin;
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    const links = await navLinks(page);
    t.false(links.includes('Users'));
    t.true(links.includes('Usage'), "a team admin reads its team's usage");
    t.true(links.includes('Service accounts'));
    t.true(links.includes('Audit'), "a team admin reads its team's audit events");
    // The team's keys (every member's, not only their own), with edit actions; the create form's Team offers only their team.
    await page.getByRole('link', { name: 'Virtual keys', exact: true }).click();
    await page.locator('table.keys').waitFor();
    t.deepEqual((await page.locator('table.keys tbody tr').evaluateAll((rows) => rows.map((row) => (row as any).dataset.keyName))).sort(), ['alice-key', 'search-admin-key']);
    t.is(await page.getByRole('button', { name: 'Delete alice-key' }).count(), 1);
    const teamOptions = await page.getByRole('form', { name: 'Create a virtual key' }).getByLabel('Team', { exact: true }).locator('option').allInnerTexts();
    t.deepEqual(teamOptions, ['search']);
    // Teams: read-only; Members: invitation with the team roles, up to their own.
    await page.getByRole('link', { name: 'Teams', exact: true }).click();
    await page.locator('table.teams').waitFor();
    t.is(await page.getByRole('form', { name: 'Create a team' }).count(), 0);
    t.is(await page.locator('table.teams').getByRole('button').count(), 0);
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    const invite = page.getByRole('form', { name: 'Add or invite a member of search' });
    await invite.waitFor();
    t.deepEqual(await invite.getByLabel('Role').locator('option').allInnerTexts(), ['Team admin', 'Member', 'Viewer']);
    t.is(await page.getByRole('button', { name: 'Remove tina@example.com' }).count(), 0, 'not their own row');
    t.is(await page.getByRole('button', { name: 'Remove alice@example.com' }).count(), 1);
    // Service accounts: created in their team.
    await page.getByRole('link', { name: 'Service accounts', exact: true }).click();
    const form = page.getByRole('form', { name: 'Create a service account' });
    await form.waitFor();
    t.deepEqual(await form.getByLabel('Team', { exact: true }).locator('option').allInnerTexts(), ['search']);
    t.deepEqual(teamAdmin.consoleErrors, []);
  } finally {
    await teamAdmin.close();
  }
});

it('users: invite with a role, suspend and reactivate; service accounts: create, a token shown once, delete; members: change a role, remove; teams: delete', async (t) => {
  const { page } = t.context.browser;
  const { gateway } = t.context;
  await page.getByRole('link', { name: 'Users', exact: true }).click();
  const invite = page.getByRole('form', { name: 'Invite a user' });
  await invite.getByLabel('Email').fill('bob@example.com');
  await invite.getByLabel('Organization role').selectOption('admin');
  await invite.getByRole('button', { name: 'Invite user' }).click();
  await page.getByRole('region', { name: 'Invitation for bob@example.com' }).waitFor();
  const bob = page.locator('table.users tr[data-email="bob@example.com"]');
  t.is(await bob.locator('.user-role').innerText(), 'Admin');
  page.once('dialog', (dialog) => void dialog.accept());
  await bob.getByRole('button', { name: 'Suspend bob@example.com' }).click();
  await page.locator('table.users tr[data-email="bob@example.com"][data-status="suspended"]').waitFor();
  await page.getByRole('button', { name: 'Reactivate bob@example.com' }).click();
  await page.locator('table.users tr[data-email="bob@example.com"][data-status="active"]').waitFor();
  await page.getByLabel('Organization role of bob@example.com', { exact: true }).selectOption('auditor');
  await page.getByRole('button', { name: 'Set the organization role of bob@example.com' }).click();
  await page.locator('table.users tr[data-email="bob@example.com"] .user-role', { hasText: 'Auditor' }).waitFor();
  const stored = (await admin(gateway, 'GET', '/admin/users')).json.data.find((user: { email: string }) => user.email === 'bob@example.com');
  t.is(stored.role, 'auditor');
  t.is(stored.status, 'active');

  await page.getByRole('link', { name: 'Service accounts', exact: true }).click();
  const create = page.getByRole('form', { name: 'Create a service account' });
  await create.getByLabel('Name', { exact: true }).fill('ci-bot');
  await create.getByLabel('Team', { exact: true }).selectOption({ label: 'search' });
  await create.getByRole('button', { name: 'Create service account' }).click();
  const row = page.locator('table.service-accounts tr[data-account-name="ci-bot"]');
  await row.waitFor();
  t.is(await row.locator('td.team').innerText(), 'search');
  await row.getByRole('button', { name: 'Create a token for ci-bot' }).click();
  await page.getByRole('form', { name: 'A token for ci-bot' }).getByRole('button', { name: 'Create token' }).click();
  const value = await page.getByRole('region', { name: /Token ".*" for ci-bot/ }).getByLabel('Token value').inputValue();
  const listed = await admin(gateway, 'GET', '/admin/virtual-keys', undefined, value);
  t.is(listed.status, 200, 'the service account token works');
  page.once('dialog', (dialog) => void dialog.accept());
  await row.getByRole('button', { name: 'Delete ci-bot' }).click();
  await page.locator('table.service-accounts tr[data-account-name="ci-bot"]').waitFor({ state: 'detached' });
  t.is((await admin(gateway, 'GET', '/admin/service-accounts')).json.data.length, 0);

  // Members: change a role, remove a member.
  await page.getByRole('link', { name: 'Members', exact: true }).click();
  // The first team (default) is shown until another is picked.
  await page.getByRole('heading', { name: 'Members of default' }).waitFor();
  await page.locator('.members-team').getByLabel('Team', { exact: true }).selectOption({ label: 'search' });
  await page.getByRole('heading', { name: 'Members of search' }).waitFor();
  await page.getByLabel('Role of alice@example.com', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Change the role of alice@example.com' }).click();
  await page.locator('table.members tr[data-email="alice@example.com"] .member-role', { hasText: 'Viewer' }).waitFor();
  const alice = (await admin(gateway, 'GET', '/admin/users')).json.data.find((user: { email: string }) => user.email === 'alice@example.com');
  t.deepEqual(alice.teams.map((entry: { role: string }) => entry.role), ['viewer']);
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Remove alice@example.com' }).click();
  await page.locator('table.members tr[data-email="alice@example.com"]').waitFor({ state: 'detached' });
  t.deepEqual((await admin(gateway, 'GET', `/admin/users/${alice.id}`)).json.teams, []);

  // Teams: an empty team is deleted.
  t.is((await admin(gateway, 'POST', '/admin/teams', { name: 'short-lived' })).status, 201);
  await page.getByRole('link', { name: 'Teams', exact: true }).click();
  await page.locator('table.teams tr[data-team-name="short-lived"]').waitFor();
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Delete short-lived' }).click();
  await page.locator('table.teams tr[data-team-name="short-lived"]').waitFor({ state: 'detached' });
  t.false((await admin(gateway, 'GET', '/admin/teams')).json.data.some((entry: { name: string }) => entry.name === 'short-lived'));
  t.deepEqual(t.context.browser.consoleErrors, []);
});

