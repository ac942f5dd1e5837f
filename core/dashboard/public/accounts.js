// Service accounts (a team's non-human principals and their tokens) and the signed-in user's
// personal access tokens. Token values are shown once, with a copy button, and never again.
import { api } from './api.js';
import { field, format, h, notify, replace, select } from './dom.js';
import { limitsPanel, limitsSummary } from './limits.js';
import { currentMe, failed, holdsAnywhere, holdsIn, inSelectedTeam, showOnce, teamCell, teamField, teamIdOf, teamName, teamOf } from './session.js';

const TEAM_ROLES = [['member', 'Member'], ['viewer', 'Viewer'], ['team_admin', 'Team admin']];
const TOKEN_WARNING = 'This is the only time the token is shown. Store it now (a secret manager, a CI secret); it cannot be read back.';
const header = (names) => h('thead', {}, h('tr', {}, names.map((name) => h('th', { scope: 'col', text: name }))));
const daysInput = () => h('input', { type: 'number', name: 'expires_in_days', min: '1', max: '3650', step: '1', value: '90' });
const daysOf = (data) => (String(data.get('expires_in_days') ?? '') === '' ? undefined : Number(data.get('expires_in_days')));

/** Service accounts of the switcher's team: list, create, delete, and a token for one (shown once). */
export async function renderServiceAccounts(view) {
  const accounts = (await api.get('/admin/service-accounts')).data.filter(inSelectedTeam).sort((a, b) => a.name.localeCompare(b.name));
  const once = h('div', { id: 'shown-once' });
  const reload = () => renderServiceAccounts(view);
  const anyWritable = accounts.some((account) => holdsIn('service_accounts.write', account.team_id));
  const rows = accounts.map((account) => {
    const cells = [
      h('th', { scope: 'row', text: account.name }),
      h('td', {}, h('code', { text: account.id })),
      h('td', { class: 'team' }, teamCell(account)),
      h('td', { text: account.role }),
      h('td', { text: account.jwt_subject ?? '—' }),
      h('td', { text: format.time(account.created_at) }),
      h('td', { class: 'account-limits' }, h('a', { href: `#/service-accounts/${encodeURIComponent(account.id)}`, 'aria-label': `Limits of ${account.name}`, text: limitsSummary(account.limits) })),
    ];
    if (anyWritable) {
      const actions = h('td', { class: 'row-actions' });
      if (holdsIn('service_accounts.write', account.team_id)) {
        const token = h('button', { type: 'button', text: 'Create token', 'aria-label': `Create a token for ${account.name}` });
        token.addEventListener('click', () => accountTokenForm(once, account));
        const remove = h('button', { type: 'button', class: 'danger', text: 'Delete', 'aria-label': `Delete ${account.name}` });
        remove.addEventListener('click', async () => {
          if (!confirm(`Delete the service account "${account.name}"? Its tokens stop working.`)) return;
          if ((await api.delete(`/admin/service-accounts/${encodeURIComponent(account.id)}`).then(() => true, failed)) === true) {
            await reload();
            notify(`Deleted ${account.name}.`);
          }
        });
        actions.append(token, ' ', remove);
      }
      cells.push(actions);
    }
    return h('tr', { data: { accountId: account.id, accountName: account.name } }, cells);
  });
  const table = accounts.length === 0
    ? h('p', { class: 'muted', text: 'No service accounts.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'service-accounts' }, header(['Name', 'Id', 'Team', 'Role', 'JWT subject', 'Created', 'Limits', ...(anyWritable ? ['Actions'] : [])]), h('tbody', {}, rows)));
  replace(view, h('h1', { text: 'Service accounts' }),
    h('p', { class: 'muted', text: 'Non-human callers of a team (CI, backends): they own keys and hold admin tokens.' }),
    once, table, holdsAnywhere('service_accounts.write') ? createAccountForm(reload) : null);
}

/** One service account (`#/service-accounts/<id>`): its team and role, and what it has used of its limits. */
export async function renderServiceAccount(view, id) {
  const account = await api.get(`/admin/service-accounts/${encodeURIComponent(id)}`);
  replace(view, h('p', {}, h('a', { href: '#/service-accounts', text: '← Service accounts' })),
    h('h1', { text: `Service account ${account.name}` }),
    h('dl', { class: 'user-detail' },
      h('dt', { text: 'Id' }), h('dd', {}, h('code', { text: account.id })),
      h('dt', { text: 'Team' }), h('dd', { text: teamName(teamOf(account)) }),
      h('dt', { text: 'Role' }), h('dd', { text: account.role }),
      h('dt', { text: 'JWT subject' }), h('dd', { text: account.jwt_subject ?? '—' })),
    limitsPanel(`Limits of ${account.name}`, account.limits_usage, { id: 'account-limits', subject: account.id }),
    h('p', { class: 'muted', text: 'Set with PATCH /admin/service-accounts/{id} { "limits": … }: they count every key the account owns and JWT callers mapped to it.' }));
}

function createAccountForm(reload) {
  const team = teamField('service_accounts.write');
  if (!team) return null;
  const form = h('form', { class: 'editor', 'aria-labelledby': 'create-account-title' },
    h('h2', { id: 'create-account-title', text: 'Create a service account' }),
    h('div', { class: 'grid' },
      field('Name', h('input', { name: 'name', required: true, autocomplete: 'off' })),
      team,
      field('Role in the team', select('role', TEAM_ROLES, 'member')),
      field('JWT subject', h('input', { name: 'jwt_subject', autocomplete: 'off', spellcheck: 'false' }), 'optional: a JWT caller with this sub acts as this account')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Create service account' })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim(), team_id: teamIdOf(data), role: String(data.get('role')) };
    const subject = String(data.get('jwt_subject') ?? '').trim();
    if (subject) body.jwt_subject = subject;
    const created = await api.post('/admin/service-accounts', body).catch(failed);
    if (!created) return;
    await reload();
    notify(`Created the service account ${created.name}.`);
  });
  return form;
}

/** A token for a service account: its name and expiry; the value is shown once in `slot`. */
function accountTokenForm(slot, account) {
  const form = h('form', { class: 'editor', 'aria-labelledby': 'account-token-title' },
    h('h2', { id: 'account-token-title', text: `A token for ${account.name}` }),
    h('div', { class: 'grid' },
      field('Token name', h('input', { name: 'name', required: true, autocomplete: 'off', value: `${account.name}-token` })),
      field('Expires in (days)', daysInput(), 'empty: never expires')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Create token' }), h('button', { type: 'button', class: 'secondary', text: 'Cancel', on: { click: () => replace(slot) } })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim() };
    const days = daysOf(data);
    if (days !== undefined) body.expires_in_days = days;
    const created = await api.post(`/admin/service-accounts/${encodeURIComponent(account.id)}/tokens`, body).catch(failed);
    if (created) showOnce(slot, { title: `Token "${created.name}" for ${account.name}`, value: created.token, label: 'Token value', warning: TOKEN_WARNING });
  });
  replace(slot, form);
  form.querySelector('input[name="name"]').focus();
}

/** Permissions the signed-in user holds somewhere (what a token may carry). */
function heldPermissions() {
  const me = currentMe();
  const held = new Set(me?.permissions ?? []);
  for (const team of me?.teams ?? []) for (const permission of team.permissions) held.add(permission);
  held.delete('tokens.write');
  return [...held].sort();
}

/** The signed-in user's personal access tokens: create (shown once), list with last use, revoke. */
export async function renderTokens(view) {
  const me = currentMe();
  if (!me?.user) {
    replace(view, h('h1', { text: 'Personal access tokens' }), h('p', { class: 'notice', text: 'Personal access tokens belong to users. The account key has none: sign in as a user (an invitation link or single sign-on) to create one.' }));
    return;
  }
  const tokens = (await api.get('/admin/tokens')).data.sort((a, b) => b.created_at.localeCompare(a.created_at));
  const once = h('div', { id: 'shown-once' });
  const reload = () => renderTokens(view);
  const rows = tokens.map((token) => {
    const revoke = h('button', { type: 'button', class: 'danger', text: 'Revoke', 'aria-label': `Revoke ${token.name}` });
    revoke.addEventListener('click', async () => {
      if (!confirm(`Revoke the token "${token.name}"? Calls with it are refused from now on.`)) return;
      if ((await api.delete(`/admin/tokens/${encodeURIComponent(token.id)}`).then(() => true, failed)) === true) {
        await reload();
        notify(`Revoked ${token.name}.`);
      }
    });
    return h('tr', { data: { tokenId: token.id, tokenName: token.name } },
      h('th', { scope: 'row', text: token.name }),
      h('td', {}, h('code', { text: token.token_hint })),
      h('td', { class: 'token-permissions', text: token.permissions ? token.permissions.join(', ') : 'all of yours' }),
      h('td', { text: token.expires_at ? format.time(token.expires_at) : 'never' }),
      h('td', { class: 'last-used', text: token.last_used_at ? format.time(token.last_used_at) : 'never used' }),
      h('td', { text: format.time(token.created_at) }),
      h('td', { class: 'row-actions' }, revoke));
  });
  const table = tokens.length === 0
    ? h('p', { class: 'muted', text: 'No tokens yet.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'tokens' }, header(['Name', 'Token', 'Permissions', 'Expires', 'Last used', 'Created', 'Actions']), h('tbody', {}, rows)));
  replace(view, h('h1', { text: 'Personal access tokens' }),
    h('p', { class: 'muted', text: 'For the admin API and the CLI (x-gateway-api-key or Authorization: Bearer). A token carries at most your permissions, and only the ones ticked when you tick some.' }),
    once, table, createTokenForm(reload));
}

function createTokenForm(reload) {
  const permissions = heldPermissions();
  const boxes = h('fieldset', { class: 'permissions' },
    h('legend', { text: 'Permissions (none ticked: all of yours)' }),
    permissions.map((permission) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'permissions', value: permission }), ` ${permission}`)));
  const form = h('form', { class: 'editor', 'aria-labelledby': 'create-token-title' },
    h('h2', { id: 'create-token-title', text: 'Create a token' }),
    h('div', { class: 'grid' },
      field('Token name', h('input', { name: 'name', required: true, autocomplete: 'off' })),
      field('Expires in (days)', daysInput(), 'empty: never expires')),
    boxes,
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Create token' })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim() };
    const days = daysOf(data);
    if (days !== undefined) body.expires_in_days = days;
    const chosen = data.getAll('permissions').map(String);
    if (chosen.length) body.permissions = chosen;
    const created = await api.post('/admin/tokens', body).catch(failed);
    if (!created) return;
    await reload();
    showOnce(document.getElementById('shown-once'), { title: `Token "${created.name}" created`, value: created.token, label: 'Token value', warning: TOKEN_WARNING });
  });
  return form;
}
