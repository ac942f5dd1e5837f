import { api } from './api.js';
import { field, format, h, notify, replace, select } from './dom.js';

/** Exactly the periods `limits.budget_period` accepts; `total` is the API's default. */
const BUDGET_PERIODS = [['total', 'In total'], ['day', 'Per UTC day'], ['month', 'Per UTC month']];

const csv = (text) => text.split(',').map((item) => item.trim()).filter(Boolean);
const numberOrUndefined = (text) => (text === '' ? undefined : Number(text));
const BODIES_LABEL = 'Log request and response bodies';
const bodiesField = (checked) => field(BODIES_LABEL, h('input', { type: 'checkbox', name: 'log_bodies', checked }),
  'off keeps this key\'s bodies out of the request log; the global switch still wins when it is off');

/** A value shown once (new or rotated key) with a copy button; gone when dismissed or on navigation. */
function shownOnce(slot, title, value) {
  const input = h('input', { type: 'text', readonly: true, class: 'key-value', 'aria-label': 'Key value', spellcheck: 'false' });
  input.value = value;
  const copy = h('button', { type: 'button', text: 'Copy' });
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(input.value);
      notify('Copied to the clipboard.');
    } catch {
      input.select();
      notify('Select and copy the value by hand (Ctrl+C).', 'error');
    }
  });
  const done = h('button', { type: 'button', text: 'I have saved it' });
  const panel = h('section', { class: 'once', 'aria-labelledby': 'once-title' },
    h('h2', { id: 'once-title', text: title }),
    h('p', { text: 'This is the only time the value is shown. Store it now; it cannot be read back.' }),
    h('div', { class: 'inline' }, input, copy, done));
  done.addEventListener('click', () => replace(slot));
  replace(slot, panel);
  input.focus();
  input.select();
}

function limitFields(limits = {}, expiresAt) {
  const number = (name, value, step = '1') => h('input', { type: 'number', min: '0', step, name, value: value ?? '' });
  const expires = expiresAt ? new Date(expiresAt) : null;
  const local = expires ? new Date(expires.getTime() - expires.getTimezoneOffset() * 60e3).toISOString().slice(0, 16) : '';
  return [
    field('Budget (USD)', number('budget_usd', limits.budget_usd, '0.01')),
    field('Budget period', select('budget_period', BUDGET_PERIODS, limits.budget_period ?? 'total'), 'what the budget counts; needs a budget'),
    field('Requests per minute', number('requests_per_minute', limits.requests_per_minute)),
    field('Requests per day', number('requests_per_day', limits.requests_per_day)),
    field('Allowed users', h('input', { name: 'allowed_users', value: (limits.allowed_users ?? []).join(', ') }), 'comma-separated; empty allows all'),
    field('Allowed models', h('input', { name: 'allowed_models', value: (limits.allowed_models ?? []).join(', ') }), 'comma-separated; empty allows all'),
    field('Expires at', h('input', { type: 'datetime-local', name: 'expires_at', value: local })),
  ];
}

function readLimits(data) {
  const limits = {};
  for (const name of ['budget_usd', 'requests_per_minute', 'requests_per_day']) {
    const value = numberOrUndefined(String(data.get(name) ?? ''));
    if (value !== undefined) limits[name] = value;
  }
  // The API refuses a period without a budget; the default period (total) need not be sent.
  if (limits.budget_usd !== undefined && data.get('budget_period') !== 'total') limits.budget_period = String(data.get('budget_period'));
  for (const name of ['allowed_users', 'allowed_models']) {
    const items = csv(String(data.get(name) ?? ''));
    if (items.length) limits[name] = items;
  }
  return limits;
}

const policyOptions = (policies) => [['', 'No policy'], ...policies.map((policy) => [policy.name, policy.name])];

/**
 * A key's usage as `GET /admin/virtual-keys/:id/usage` reports it: spend in the budget's period
 * (total when the key has no budget) and today's requests, each against its limit when there is one.
 */
function usageText(usage) {
  const period = usage.budget_period ?? 'total';
  const spend = `${format.usd(usage.spend_usd[period])}${usage.budget_usd === null ? '' : ` of ${format.usd(usage.budget_usd)}`} (${period})`;
  const requests = `${format.count(usage.requests.day)}${usage.requests_per_day === null ? '' : ` of ${format.count(usage.requests_per_day)}`} today`;
  return `${spend} · ${requests}`;
}

function limitsText(limits = {}) {
  const parts = [];
  if (limits.budget_usd !== undefined) parts.push(`budget ${format.usd(limits.budget_usd)}${limits.budget_period ? `/${limits.budget_period}` : ''}`);
  if (limits.requests_per_minute !== undefined) parts.push(`${limits.requests_per_minute}/min`);
  if (limits.requests_per_day !== undefined) parts.push(`${limits.requests_per_day}/day`);
  if (limits.allowed_models?.length) parts.push(`models: ${limits.allowed_models.join(', ')}`);
  if (limits.allowed_users?.length) parts.push(`users: ${limits.allowed_users.join(', ')}`);
  return parts.join('; ') || 'none';
}

/** Virtual keys: list with usage against limits, create, edit, rotate, delete. */
export async function renderKeys(view) {
  const [keys, credentials, policies, plugins, routes] = await Promise.all([
    api.get('/admin/virtual-keys').then((answer) => answer.data),
    api.get('/admin/credentials').then((answer) => answer.data),
    api.get('/admin/policies').then((answer) => answer.policies),
    api.get('/admin/plugins'),
    // Only to name the routes keys point at: without them a key shows the route's id.
    api.get('/admin/routes').then((answer) => answer.data, () => []),
  ]);
  const routeNames = new Map(routes.map((route) => [route.id, route.name ?? route.id]));
  // A key deleted meanwhile (404) shows no usage rather than failing the page.
  const usages = await Promise.all(keys.map((key) => api.get(`/admin/virtual-keys/${encodeURIComponent(key.id)}/usage`).catch(() => null)));
  const once = h('div', { id: 'shown-once' });
  const editor = h('div', { id: 'key-editor' });
  const reload = () => renderKeys(view);

  const table = keys.length === 0
    ? h('p', { class: 'muted', text: 'No virtual keys yet.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'keys' },
      h('thead', {}, h('tr', {}, ['Name', 'Provider', 'Key', 'Policy', 'Limits', 'Usage', 'Expires', 'Bodies logged', 'Actions'].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, keys.map((key, index) => {
        const edit = h('button', { type: 'button', text: 'Edit', 'aria-label': `Edit ${key.name}` });
        edit.addEventListener('click', () => editForm(editor, key, policies, reload));
        const rotate = h('button', { type: 'button', text: 'Rotate', 'aria-label': `Rotate ${key.name}` });
        rotate.addEventListener('click', async () => {
          if (!confirm(`Rotate "${key.name}"? The current value stops working.`)) return;
          const answer = await api.post(`/admin/virtual-keys/${encodeURIComponent(key.id)}/rotate`).catch(failed);
          if (answer) shownOnce(once, `New value for ${key.name}`, answer.key);
        });
        const remove = h('button', { type: 'button', class: 'danger', text: 'Delete', 'aria-label': `Delete ${key.name}` });
        remove.addEventListener('click', async () => {
          if (!confirm(`Delete "${key.name}"? Requests with it are refused from now on.`)) return;
          if ((await api.delete(`/admin/virtual-keys/${encodeURIComponent(key.id)}`).then(() => true, failed)) === true) {
            await reload();
            notify(`Deleted ${key.name}.`);
          }
        });
        return h('tr', { data: { keyId: key.id, keyName: key.name } },
          h('th', { scope: 'row', text: key.name }),
          h('td', { class: 'key-provider' }, providerCell(key, routeNames)),
          h('td', {}, h('code', { text: key.key_hint })),
          h('td', { text: key.guardrail_policy ?? '—' }),
          h('td', { text: limitsText(key.limits) }),
          h('td', { class: 'usage', text: usages[index] ? usageText(usages[index]) : '—' }),
          h('td', { text: key.expires_at ? format.time(key.expires_at) : 'never' }),
          h('td', { class: 'log-bodies', text: key.log_bodies ? 'yes' : 'no' }),
          h('td', { class: 'row-actions' }, edit, rotate, remove));
      }))));

  replace(view, h('h1', { text: 'Virtual keys' }), once, table, editor, createForm(credentials, policies, plugins, reload, routes));
}

/** A key's provider, or for a key that names a route, a link to that route. */
function providerCell(key, routeNames) {
  if (!key.route) return key.provider ?? '—';
  return h('a', { class: 'key-route', href: `#/routes/${encodeURIComponent(key.route)}`, title: `Route ${key.route}`, text: `↪ route ${routeNames.get(key.route) ?? key.route}` });
}

function failed(error) {
  notify(error.message, 'error');
  return undefined;
}

function createForm(credentials, policies, plugins, reload, routes = []) {
  const providers = plugins.providers.map((provider) => [provider.id, provider.name]);
  // A credential made from a key's pasted provider key belongs to that key (deleted with it): not offered.
  const shared = credentials.filter((credential) => credential.owner_key_id === undefined);
  const credentialOptions = [['', 'Paste a provider key instead'], ...shared.map((credential) => [credential.id, credential.provider ? `${credential.name} (${credential.provider})` : credential.name])];
  const form = h('form', { class: 'editor', 'aria-labelledby': 'create-title' },
    h('h2', { id: 'create-title', text: 'Create a virtual key' }),
    h('div', { class: 'grid' },
      field('Name', h('input', { name: 'name', required: true, autocomplete: 'off' })),
      field('Provider', select('provider', providers, providers[0]?.[0])),
      routes.length ? field('Route instead of a provider', select('route', [['', 'None: the provider and key here'], ...routes.map((route) => [route.id, route.name ?? route.id])], ''), 'a stored route supplies the providers and credentials') : null,
      field('Stored credential', select('credential_id', credentialOptions, '')),
      field('Provider key', h('input', { type: 'password', name: 'provider_key', autocomplete: 'off' }), 'used when no stored credential is chosen; sent once, stored encrypted'),
      field('Custom host', h('input', { type: 'url', name: 'custom_host', autocomplete: 'off' }), 'optional base URL instead of the provider default'),
      field('Guardrail policy', select('guardrail_policy', policyOptions(policies), '')),
      bodiesField(true),
      limitFields()),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Create key' })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim() };
    if (data.get('route')) body.route = String(data.get('route'));
    else Object.assign(body, providerFields(data));
    if (data.get('guardrail_policy')) body.guardrail_policy = String(data.get('guardrail_policy'));
    if (!data.has('log_bodies')) body.log_bodies = false;
    const limits = readLimits(data);
    if (Object.keys(limits).length) body.limits = limits;
    if (data.get('expires_at')) body.expires_at = new Date(String(data.get('expires_at'))).toISOString();
    const created = await api.post('/admin/virtual-keys', body).catch(failed);
    if (!created) return;
    form.reset();
    await reload();
    // The reload built a new page: show the value in its slot.
    shownOnce(document.getElementById('shown-once'), `Key "${created.name}" created`, created.key);
  });
  return form;
}

/** The provider, its credential (stored or pasted) and custom host of a key that names no route. */
function providerFields(data) {
  const fields = { provider: String(data.get('provider')) };
  if (data.get('credential_id')) fields.credential_id = String(data.get('credential_id'));
  else fields.provider_key = String(data.get('provider_key'));
  if (String(data.get('custom_host') ?? '').trim()) fields.custom_host = String(data.get('custom_host')).trim();
  return fields;
}

function editForm(slot, key, policies, reload) {
  const form = h('form', { class: 'editor', 'aria-labelledby': 'edit-title' },
    h('h2', { id: 'edit-title', text: `Edit ${key.name}` }),
    h('div', { class: 'grid' },
      field('Name', h('input', { name: 'name', required: true, value: key.name })),
      field('Guardrail policy', select('guardrail_policy', policyOptions(policies), key.guardrail_policy ?? '')),
      bodiesField(key.log_bodies),
      limitFields(key.limits, key.expires_at)),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Save changes' }), h('button', { type: 'button', class: 'secondary', text: 'Cancel', on: { click: () => replace(slot) } })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    // Only what changed, besides the limits (null clears a policy or an expiry).
    const body = { limits: readLimits(data) };
    const name = String(data.get('name')).trim();
    if (name !== key.name) body.name = name;
    const policy = data.get('guardrail_policy') ? String(data.get('guardrail_policy')) : null;
    if (policy !== (key.guardrail_policy ?? null)) body.guardrail_policy = policy;
    if (data.has('log_bodies') !== key.log_bodies) body.log_bodies = data.has('log_bodies');
    const expiresAt = data.get('expires_at') ? new Date(String(data.get('expires_at'))).toISOString() : null;
    if (expiresAt?.slice(0, 16) !== (key.expires_at ?? null)?.slice(0, 16)) body.expires_at = expiresAt;
    if ((await api.patch(`/admin/virtual-keys/${encodeURIComponent(key.id)}`, body).then(() => true, failed)) === true) {
      await reload();
      notify(`Saved ${name}.`);
    }
  });
  replace(slot, form);
  form.querySelector('input').focus();
}

/** Stored provider credentials: names and providers only, never a secret. */
export async function renderCredentials(view) {
  const credentials = (await api.get('/admin/credentials')).data;
  replace(view, h('h1', { text: 'Credentials' }),
    h('p', { class: 'muted', text: 'Provider credentials in the vault. Secrets are stored encrypted and never shown.' }),
    credentials.length === 0
      ? h('p', { class: 'muted', text: 'No stored credentials.' })
      : h('table', { class: 'credentials' },
        h('thead', {}, h('tr', {}, ['Name', 'Provider', 'Id', 'Created'].map((name) => h('th', { scope: 'col', text: name })))),
        // Only these fields are rendered, whatever the API sends.
        h('tbody', {}, credentials.map((credential) => h('tr', {},
          h('th', { scope: 'row', text: credential.name }),
          h('td', { text: credential.provider ?? '—' }),
          h('td', {}, h('code', { text: credential.id })),
          h('td', { text: format.time(credential.created_at) }))))));
}
