import { api } from './api.js';
import { field, format, h, notify, replace, select } from './dom.js';
import { alertSubject, alertText, BUDGET_PERIODS } from './limits.js';
import { holdsAnywhere, holdsIn, inSelectedTeam, may, pluginsFor, showOnce, teamCell, teamField, teamIdOf, teamName, teamOf } from './session.js';

const csv = (text) => text.split(',').map((item) => item.trim()).filter(Boolean);
const numberOrUndefined = (text) => (text === '' ? undefined : Number(text));
const BODIES_LABEL = 'Log request and response bodies';
const bodiesField = (checked) => field(BODIES_LABEL, h('input', { type: 'checkbox', name: 'log_bodies', checked }),
  'off keeps this key\'s bodies out of the request log; the global switch still wins when it is off');

/** A key's value shown once (new or rotated), with a copy button: session.js's panel. */
const shownOnce = (slot, title, value) => showOnce(slot, { title, value, label: 'Key value', warning: 'This is the only time the value is shown. Store it now; it cannot be read back.' });

function limitFields(limits = {}, expiresAt) {
  const number = (name, value, step = '1') => h('input', { type: 'number', min: '0', step, name, value: value ?? '' });
  const expires = expiresAt ? new Date(expiresAt) : null;
  const local = expires ? new Date(expires.getTime() - expires.getTimezoneOffset() * 60e3).toISOString().slice(0, 16) : '';
  return [
    field('Budget (USD)', number('budget_usd', limits.budget_usd, 'any')),
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

/** The policies to pick from; a key's current one stays listed when the caller may not list policies (a team role), so saving keeps it. */
const policyOptions = (policies, current) => [['', 'No policy'], ...policies.map((policy) => [policy.name, policy.name]),
  ...(current && !policies.some((policy) => policy.name === current) ? [[current, current]] : [])];

/**
 * A key's usage as `GET /admin/virtual-keys/:id/usage` reports it: spend in the budget's period
 * (total when the key has no budget) and today's requests, each against its limit when there is one.
 */
function usageText(usage) {
  const period = usage.budget_period ?? 'total';
  const spend = `${format.usd(usage.spend_usd[period])}${usage.budget_usd === null ? '' : ` of ${format.usd(usage.budget_usd)}`} (${period}${usage.budget_exhausted ? ', exhausted' : ''})`;
  const requests = `${format.count(usage.requests.day)}${usage.requests_per_day === null ? '' : ` of ${format.count(usage.requests_per_day)}`} today`;
  return `${spend} · ${requests}`;
}

/** Virtual keys: budget alerts, list with budget and rate-limit state, create, edit, rotate, delete. */
export async function renderKeys(view) {
  // What the caller's role may not read is not asked for (a viewer reads no credentials, a team role no policies).
  const [allKeys, credentials, policies, routes, alerts] = await Promise.all([
    api.get('/admin/virtual-keys').then((answer) => answer.data),
    holdsAnywhere('credentials.read') ? api.get('/admin/credentials').then((answer) => answer.data) : [],
    holdsAnywhere('policies.read') ? api.get('/admin/policies').then((answer) => answer.policies) : [],
    // Only to name the routes keys point at: without them a key shows the route's id.
    holdsAnywhere('routes.read') ? api.get('/admin/routes').then((answer) => answer.data, () => []) : [],
    holdsAnywhere('alerts.read') ? api.get('/admin/alerts').then((answer) => answer.data, () => []) : [],
  ]);
  const plugins = await pluginsFor(credentials);
  // The team switcher's filter (the server already left out what the caller may not see).
  const keys = allKeys.filter(inSelectedTeam);
  const routeNames = new Map(routes.map((route) => [route.id, route.name ?? route.id]));
  // A key deleted meanwhile (404) shows no usage rather than failing the page.
  const usages = await Promise.all(keys.map((key) => api.get(`/admin/virtual-keys/${encodeURIComponent(key.id)}/usage`).catch(() => null)));
  const once = h('div', { id: 'shown-once' });
  const editor = h('div', { id: 'key-editor' });
  const reload = () => renderKeys(view);
  const context = { credentials, policies, routes, reload };

  const table = keys.length === 0
    ? h('p', { class: 'muted', text: 'No virtual keys yet.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'keys' },
      h('thead', {}, h('tr', {}, ['Name', 'Team', 'Provider or route', 'Key', 'Budget', 'Rate limit', 'Usage', 'Policy and access', 'Expires', 'Bodies logged', 'Actions'].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, keys.map((key, index) => {
        const usage = usages[index];
        const edit = h('button', { type: 'button', text: 'Edit', 'aria-label': `Edit ${key.name}` });
        edit.addEventListener('click', () => editForm(editor, key, context));
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
        const writable = holdsIn('keys.write', teamOf(key));
        return h('tr', { data: { keyId: key.id, keyName: key.name, teamId: teamOf(key) } },
          h('th', { scope: 'row' }, key.name, alertMark(usage)),
          h('td', { class: 'team' }, teamCell(key)),
          h('td', { class: 'key-provider' }, providerCell(key, routeNames)),
          h('td', {}, h('code', { text: key.key_hint })),
          h('td', { class: 'budget' }, budgetCell(usage)),
          h('td', { class: 'rate' }, rateCell(usage)),
          h('td', { class: 'usage', text: usage ? usageText(usage) : '—' }),
          h('td', { class: 'access', text: accessText(key, routeNames) }),
          h('td', { text: key.expires_at ? format.time(key.expires_at) : 'never' }),
          h('td', { class: 'log-bodies', text: key.log_bodies ? 'yes' : 'no' }),
          h('td', { class: 'row-actions' }, writable ? [edit, rotate, remove] : h('span', { class: 'muted', text: 'read-only' })));
      }))));

  replace(view, h('h1', { text: 'Virtual keys' }), alertsPanel(alerts), once, table, editor, may('keys.write') ? createForm(credentials, policies, plugins, reload, routes) : null);
}

const PERIOD_LABELS = { total: 'in total', day: 'per UTC day', week: 'per UTC week', month: 'per UTC month' };

/** The budget alerts of the current periods at every level (`GET /admin/alerts`), newest first, each naming its level; nothing when there are none. */
function alertsPanel(alerts) {
  if (alerts.length === 0) return null;
  return h('section', { class: 'alerts', 'aria-labelledby': 'alerts-title' },
    h('h2', { id: 'alerts-title', text: `Budget alerts (${alerts.length})` }),
    h('ul', {}, alerts.map((alert) => h('li', { class: `alert alert-${alert.threshold}`, data: { keyId: alert.key_id, level: alert.level ?? 'key', threshold: alert.threshold, type: alert.type } },
      alertSubject(alert),
      ` ${alertText(alert)}: ${format.usd(alert.spent_usd)} of ${format.usd(alert.budget_usd)} ${PERIOD_LABELS[alert.period] ?? alert.period}`,
      alert.resets_at ? ` · resets ${format.time(alert.resets_at)}` : ' · does not reset',
      h('small', { class: 'muted', text: ` (seen ${format.time(alert.at)})` })))));
}

/** A mark beside the key's name when an alert of its current period is up: the highest threshold. */
function alertMark(usage) {
  const highest = usage?.alerts?.[0];
  if (!highest) return null;
  return h('span', { class: `alert-mark alert-${highest.threshold}`, title: `Budget alert: ${highest.threshold} % reached`, text: ` ${highest.threshold} %` });
}

/**
 * Spend in the budget's period against the budget: a meter, the share, "Exhausted" when the gateway
 * refuses the key for its budget (the API's `budget_exhausted`), and when it resets. A key can be
 * exhausted before its spend reaches the budget, when what is left is less than a refused request's
 * estimate: the meter is then full and the cell says what is left rather than a share below 100 %.
 */
function budgetCell(usage) {
  if (!usage) return '—';
  if (usage.budget_usd === null) return h('span', { class: 'muted', text: 'no budget' });
  const used = usage.budget_used ?? 0;
  const exhausted = usage.budget_exhausted === true;
  const state = exhausted ? 'exhausted' : used >= 0.8 ? 'warn' : 'ok';
  const period = PERIOD_LABELS[usage.budget_period] ?? '';
  const text = exhausted && used < 1
    ? `${format.usd(usage.spend_usd[usage.budget_period ?? 'total'])} spent of ${format.usd(usage.budget_usd)} ${period}; ${format.usd(usage.remaining_usd)} left, less than a request's estimate (${format.usd(usage.refused_estimate_usd)})`
    : `${format.percent(used)} of ${format.usd(usage.budget_usd)} ${period}`;
  return h('div', { class: 'budget-state', data: { state } },
    h('meter', { min: '0', max: '1', low: '0.8', high: '0.9999', optimum: '0', value: String(exhausted ? 1 : Math.min(used, 1)), 'aria-label': exhausted ? 'Budget exhausted' : `Budget used: ${format.percent(used)}` }),
    exhausted ? h('strong', { class: 'exhausted', text: 'Exhausted' }) : null,
    h('span', { class: 'budget-text', text }),
    h('small', { class: 'resets', text: usage.budget_resets_at ? `resets ${format.time(usage.budget_resets_at)}` : 'never resets' }));
}

/** The current windows' requests against the key's limits (the last 60 s, this UTC day). */
function rateCell(usage) {
  if (!usage) return '—';
  const lines = [];
  if (usage.requests_per_minute !== null) lines.push(windowLine(usage.requests.minute ?? 0, usage.requests_per_minute, 'min'));
  if (usage.requests_per_day !== null) lines.push(windowLine(usage.requests.day, usage.requests_per_day, 'day', usage.day_resets_at));
  if (lines.length === 0) return h('span', { class: 'muted', text: 'no limit' });
  return h('div', { class: 'rate-state' }, lines);
}

function windowLine(count, limit, unit, resetsAt) {
  const full = count >= limit;
  return h('div', { data: { window: unit, state: full ? 'full' : 'open' } },
    `${format.count(count)} of ${format.count(limit)}/${unit}`,
    full ? h('strong', { class: 'exhausted', text: ' limit reached' }) : null,
    full && resetsAt ? h('small', { text: ` until ${format.time(resetsAt)}` }) : null);
}

/** The key's guardrail policy, its model and user restrictions, and the routes granted to it. */
function accessText(key, routeNames) {
  const limits = key.limits ?? {};
  const parts = [];
  if (key.guardrail_policy) parts.push(key.guardrail_policy);
  if (limits.allowed_models?.length) parts.push(`models: ${limits.allowed_models.join(', ')}`);
  if (limits.allowed_users?.length) parts.push(`users: ${limits.allowed_users.join(', ')}`);
  if (key.allowed_routes?.length) parts.push(`routes: ${grantedNames(key, routeNames).join(', ')}`);
  return parts.join('; ') || '—';
}

/** A key's granted routes by name where one is known (stored routes are granted by id, config routes by name). */
const grantedNames = (key, routeNames) => (key.allowed_routes ?? []).map((route) => routeNames.get(route) ?? route);

/** `allowed_routes`: the other routes a key may name in x-gateway-config, by name or id. */
const routesField = (value = '') => field('Other routes it may take', h('input', { name: 'allowed_routes', value, autocomplete: 'off', spellcheck: 'false' }),
  'comma-separated route names or ids it may name in x-gateway-config; empty: only its own route and model aliases');

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
      teamField('keys.write'),
      field('Provider', select('provider', providers, providers[0]?.[0])),
      routes.length ? field('Route instead of a provider', select('route', [['', 'None: the provider and key here'], ...routes.map((route) => [route.id, route.name ?? route.id])], ''), 'a stored route supplies the providers and credentials') : null,
      field('Stored credential', select('credential_id', credentialOptions, '')),
      field('Provider key', h('input', { type: 'password', name: 'provider_key', autocomplete: 'off' }), 'used when no stored credential is chosen; sent once, stored encrypted'),
      field('Custom host', h('input', { type: 'url', name: 'custom_host', autocomplete: 'off' }), 'optional base URL instead of the provider default'),
      field('Guardrail policy', select('guardrail_policy', policyOptions(policies), '')),
      routesField(),
      bodiesField(true),
      limitFields()),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Create key' })));
  // A key names a route or a provider: choosing a route disables the provider's fields (not sent).
  const routeSelect = form.querySelector('select[name="route"]');
  routeSelect?.addEventListener('change', () => {
    for (const name of ['provider', 'credential_id', 'provider_key', 'custom_host']) form.elements[name].disabled = routeSelect.value !== '';
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim() };
    const team = teamIdOf(data);
    if (team !== undefined) body.team_id = team;
    if (data.get('route')) body.route = String(data.get('route'));
    else Object.assign(body, providerFields(data));
    if (data.get('guardrail_policy')) body.guardrail_policy = String(data.get('guardrail_policy'));
    const granted = csv(String(data.get('allowed_routes') ?? ''));
    if (granted.length) body.allowed_routes = granted;
    if (!data.has('log_bodies')) body.log_bodies = false;
    const limits = readLimits(data);
    if (Object.keys(limits).length) body.limits = limits;
    if (data.get('expires_at')) body.expires_at = new Date(String(data.get('expires_at'))).toISOString();
    const created = await api.post('/admin/virtual-keys', body).catch(failed);
    if (!created) return;
    form.reset();
    for (const name of ['provider', 'credential_id', 'provider_key', 'custom_host']) form.elements[name].disabled = false;
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

/** A read-only field: shown in the edit form for what cannot change, as wide as its value (never cut off). */
const fixedField = (label, value, hint) => field(label, h('input', { value, readonly: true, class: 'fixed', size: Math.max(String(value).length, 8) }), hint);

/** The key's id, whole, read-only, with a button that copies it. */
function idField(id) {
  const input = h('input', { value: id, readonly: true, class: 'fixed key-id', size: id.length, spellcheck: 'false' });
  const copy = h('button', { type: 'button', class: 'secondary', text: 'Copy', 'aria-label': 'Copy the id' });
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(id);
      notify('Copied the id to the clipboard.');
    } catch {
      input.select();
      notify('Select and copy the id by hand (Ctrl+C).', 'error');
    }
  });
  const wrapper = field('Id', input);
  wrapper.append(h('div', { class: 'inline' }, input, copy));
  return wrapper;
}

/**
 * The edit form, separate from the create form and prefilled: what cannot change (id, value hint,
 * whether the key names a provider or a route, the provider) is shown read-only; a provider key's
 * stored credential and custom host, or a route key's route, can change.
 */
function editForm(slot, key, { credentials, policies, routes, reload }) {
  const routeNames = new Map(routes.map((route) => [route.id, route.name ?? route.id]));
  const own = credentials.find((credential) => credential.id === key.credential_id && credential.owner_key_id === key.id);
  const shared = credentials.filter((credential) => credential.owner_key_id === undefined);
  const credentialOptions = [
    ...(own ? [[own.id, 'Its own pasted provider key']] : []),
    ...shared.map((credential) => [credential.id, credential.provider ? `${credential.name} (${credential.provider})` : credential.name]),
  ];
  const binding = key.route
    ? [field('Route', select('route', routes.map((route) => [route.id, route.name ?? route.id]), key.route), 'the stored route this key takes')]
    : [
      field('Stored credential', select('credential_id', credentialOptions, key.credential_id ?? ''), 'the provider credential this key calls with'),
      field('New provider key', h('input', { type: 'password', name: 'provider_key', autocomplete: 'off' }), 'optional: replaces the credential with this key of its own; sent once, stored encrypted'),
      field('Custom host', h('input', { type: 'url', name: 'custom_host', autocomplete: 'off', value: key.custom_host ?? '' }), 'base URL instead of the provider default; empty uses the default'),
    ];
  const form = h('form', { class: 'editor edit', 'aria-labelledby': 'edit-title' },
    h('h2', { id: 'edit-title', text: `Edit ${key.name}` }),
    h('p', { class: 'muted', text: 'Changes apply to the key\'s next request. Greyed fields cannot change: create a new key instead.' }),
    h('div', { class: 'fixed-fields' },
      idField(key.id),
      fixedField('Key value', key.key_hint, 'only its hint; rotate to get a new value'),
      fixedField('Team', teamName(teamOf(key)), 'the team that owns it'),
      fixedField(key.route ? 'Kind' : 'Provider', key.route ? 'names a route' : key.provider ?? ''),
      fixedField('Created', format.time(key.created_at))),
    h('div', { class: 'grid' },
      field('Name', h('input', { name: 'name', required: true, value: key.name })),
      binding,
      field('Guardrail policy', select('guardrail_policy', policyOptions(policies, key.guardrail_policy), key.guardrail_policy ?? '')),
      routesField(grantedNames(key, routeNames).join(', ')),
      bodiesField(key.log_bodies),
      limitFields(key.limits, key.expires_at)),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Save changes' }), h('button', { type: 'button', class: 'secondary', text: 'Cancel', on: { click: () => replace(slot) } })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    // Only what changed, besides the limits (null clears a policy, an expiry or a custom host).
    const body = { limits: readLimits(data) };
    const name = String(data.get('name')).trim();
    if (name !== key.name) body.name = name;
    const policy = data.get('guardrail_policy') ? String(data.get('guardrail_policy')) : null;
    if (policy !== (key.guardrail_policy ?? null)) body.guardrail_policy = policy;
    if (data.has('log_bodies') !== key.log_bodies) body.log_bodies = data.has('log_bodies');
    const granted = csv(String(data.get('allowed_routes') ?? ''));
    if (granted.join(',') !== grantedNames(key, routeNames).join(',')) body.allowed_routes = granted.length ? granted : null;
    const expiresAt = data.get('expires_at') ? new Date(String(data.get('expires_at'))).toISOString() : null;
    if (expiresAt?.slice(0, 16) !== (key.expires_at ?? null)?.slice(0, 16)) body.expires_at = expiresAt;
    if (key.route) {
      if (data.get('route') !== key.route) body.route = String(data.get('route'));
    } else {
      const pasted = String(data.get('provider_key') ?? '');
      if (pasted) body.provider_key = pasted;
      else if (data.get('credential_id') && data.get('credential_id') !== key.credential_id) body.credential_id = String(data.get('credential_id'));
      const host = String(data.get('custom_host') ?? '').trim();
      if (host !== (key.custom_host ?? '')) body.custom_host = host || null;
    }
    // The pasted key leaves the page with the request, whatever its answer.
    if (form.elements.provider_key) form.elements.provider_key.value = '';
    if ((await api.patch(`/admin/virtual-keys/${encodeURIComponent(key.id)}`, body).then(() => true, failed)) === true) {
      await reload();
      notify(`Saved ${name}.`);
    }
  });
  replace(slot, form);
  form.scrollIntoView({ block: 'start' });
  form.querySelector('input[name="name"]').focus();
}

/**
 * Stored provider credentials, sorted by name, with the keys using each: add (the secret goes to the
 * vault and the form forgets it), rotate (a new secret under the same id), delete (refused while used).
 */
export async function renderCredentials(view) {
  const all = await api.get('/admin/credentials').then((answer) => answer.data);
  const plugins = await pluginsFor(all);
  const credentials = all.filter(inSelectedTeam);
  const reload = () => renderCredentials(view);
  const rotation = h('div', { id: 'credential-rotation' });
  const table = credentials.length === 0
    ? h('p', { class: 'muted', text: 'No stored credentials.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'credentials' },
      h('thead', {}, h('tr', {}, ['Name', 'Team', 'Provider', 'Id', 'Used by', 'Created', 'Secret replaced', 'Actions'].map((name) => h('th', { scope: 'col', text: name })))),
      // Only these fields are rendered, whatever the API sends.
      h('tbody', {}, credentials.map((credential) => {
        const rotate = h('button', { type: 'button', text: 'Rotate', 'aria-label': `Rotate ${credential.name}` });
        rotate.addEventListener('click', () => rotateForm(rotation, credential, reload));
        const remove = h('button', { type: 'button', class: 'danger', text: 'Delete', 'aria-label': `Delete ${credential.name}` });
        remove.addEventListener('click', async () => {
          if (!confirm(`Delete the credential "${credential.name}"? Its secret is erased from the vault.`)) return;
          if ((await api.delete(`/admin/credentials/${encodeURIComponent(credential.id)}`).then(() => true, failed)) === true) {
            await reload();
            notify(`Deleted ${credential.name}.`);
          }
        });
        const users = credential.used_by ?? [];
        const routeUsers = credential.used_by_routes ?? [];
        const writable = holdsIn('credentials.write', teamOf(credential));
        return h('tr', { data: { credentialId: credential.id, credentialName: credential.name, teamId: teamOf(credential) ?? 'organization' } },
          h('th', { scope: 'row', text: credential.name }),
          h('td', { class: 'team' }, teamCell(credential)),
          h('td', { text: credential.provider ?? '—' }),
          h('td', {}, h('code', { text: credential.id })),
          h('td', { class: 'used-by' }, users.length === 0 && routeUsers.length === 0
            ? h('span', { class: 'muted', text: 'no key' })
            : h('ul', { class: 'plain' },
              users.map((user) => h('li', {}, h('a', { href: '#/keys', text: user.name }), credential.owner_key_id === user.id ? h('small', { class: 'muted', text: ' (its own pasted key)' }) : null)),
              routeUsers.map((label) => h('li', { class: 'route-user', text: label })))),
          h('td', { text: format.time(credential.created_at) }),
          h('td', { class: 'rotated', text: credential.rotated_at ? format.time(credential.rotated_at) : 'never' }),
          h('td', { class: 'row-actions' }, writable ? [rotate, remove] : h('span', { class: 'muted', text: 'read-only' })));
      }))));
  replace(view, h('h1', { text: 'Credentials' }),
    h('p', { class: 'muted', text: 'Provider credentials in the vault. Secrets are stored encrypted and never shown again, here or by the API.' }),
    table, rotation, may('credentials.write') ? addCredentialForm(plugins, reload) : null);
}

/** The secret field of the credential forms: a password input that is emptied as soon as it is sent. */
const secretInput = (name) => h('input', { type: 'password', name, required: true, autocomplete: 'off', spellcheck: 'false' });

function addCredentialForm(plugins, reload) {
  const providers = [['', 'Any (not recorded)'], ...plugins.providers.map((provider) => [provider.id, provider.name])];
  const secret = secretInput('api_key');
  const form = h('form', { class: 'editor', 'aria-labelledby': 'add-credential-title' },
    h('h2', { id: 'add-credential-title', text: 'Add a credential' }),
    h('div', { class: 'grid' },
      field('Name', h('input', { name: 'name', required: true, autocomplete: 'off' })),
      teamField('credentials.write', { shared: true, hint: 'who owns it; shared: every team may use it' }),
      field('Provider', select('provider', providers, plugins.providers[0]?.id ?? '')),
      field('API key', secret, 'goes straight to the vault; it is not shown again')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Add credential' })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim(), api_key: String(data.get('api_key')) };
    const team = teamIdOf(data);
    if (team !== undefined) body.team_id = team;
    if (data.get('provider')) body.provider = String(data.get('provider'));
    // The secret leaves the page with this request, whatever its answer.
    secret.value = '';
    const created = await api.post('/admin/credentials', body).catch(failed);
    if (!created) return;
    form.reset();
    await reload();
    notify(`Stored "${created.name}" in the vault. Its secret will not be shown again.`);
  });
  return form;
}

function rotateForm(slot, credential, reload) {
  const secret = secretInput('api_key');
  const form = h('form', { class: 'editor', 'aria-labelledby': 'rotate-credential-title' },
    h('h2', { id: 'rotate-credential-title', text: `Rotate ${credential.name}` }),
    h('p', { class: 'muted', text: `Team: ${teamName(teamOf(credential))}. Replaces the secret; the id stays, so the ${(credential.used_by ?? []).length} key(s) using it send the new one from their next request.` }),
    h('div', { class: 'grid' }, field('New API key', secret, 'goes straight to the vault; it is not shown again')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Replace secret' }), h('button', { type: 'button', class: 'secondary', text: 'Cancel', on: { click: () => replace(slot) } })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const apiKey = secret.value;
    secret.value = '';
    const rotated = await api.post(`/admin/credentials/${encodeURIComponent(credential.id)}/rotate`, { api_key: apiKey }).catch(failed);
    if (!rotated) return;
    await reload();
    notify(`Replaced the secret of "${rotated.name}".`);
  });
  replace(slot, form);
  secret.focus();
}
