import { api } from './api.js';
import { field, format, h, notify, replace } from './dom.js';
import { routeForm } from './route-form.js';
import { holdsAnywhere, holdsIn, inSelectedTeam, may, pluginsFor, teamCell, teamField, teamName, teamOf } from './session.js';

const EXAMPLE = {
  name: 'my-route',
  route: {
    strategy: { mode: 'fallback' },
    targets: [
      { name: 'primary', provider: 'openai', credential: 'cred_…' },
      { name: 'backup', provider: 'openai', credential: 'cred_…', override_params: { model: 'gpt-4o-mini' } },
    ],
  },
};

/** What the form's selects offer: the registered providers, the stored credentials and the virtual keys bound to a provider (names and hints only). */
async function formCatalog() {
  const [credentials, keys] = await Promise.all([
    holdsAnywhere('credentials.read') ? api.get('/admin/credentials').then((answer) => answer.data) : [],
    api.get('/admin/virtual-keys').then((answer) => answer.data, () => []),
  ]);
  const plugins = await pluginsFor(credentials);
  return {
    providers: plugins.providers.map((plugin) => plugin.id).sort(),
    credentials: [...credentials].sort((a, b) => a.name.localeCompare(b.name)),
    // A key that names a route cannot be a target.
    virtualKeys: keys.filter((key) => key.route === undefined).sort((a, b) => a.name.localeCompare(b.name)),
  };
}

const STATE_TEXT = { closed: 'closed', open: 'open', half_open: 'half-open' };

/** A breaker's state as a badge: closed, open (no attempts until the probe) or half-open (the next attempt probes). */
const stateBadge = (target) => h('span', { class: `breaker breaker-${target.state}`, text: target.kind === 'route' ? 'nested' : target.tried ? STATE_TEXT[target.state] : 'closed (untried)' });

/** A target's active health check: its status as a badge, then the last probe (status or error, latency, when). */
function healthCell(target) {
  const check = target.health_check;
  if (!check) return h('td', { class: 'health', text: '—' });
  // The last answer's status, or why nothing answered (upstream_timeout, …).
  const last = check.last_probe_at
    ? [check.last_status ?? check.last_error, format.ms(check.last_latency_ms), format.time(check.last_probe_at)].filter(Boolean).join(' · ')
    : 'not probed yet';
  const streak = check.consecutive_failures > 0 ? ` · ${format.count(check.consecutive_failures)} failed in a row` : '';
  return h('td', { class: 'health', data: { health: check.status } }, h('span', { class: `probe probe-${check.status}`, text: check.status }), ` ${last}${streak}`);
}

/** One row per target (nested ones indented by their path) with its breaker as this instance sees it and its health check. */
function breakerTable(targets, caption) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'breakers' },
    caption ? h('caption', { text: caption }) : null,
    h('thead', {}, h('tr', {}, ['Target', 'Path', 'State', 'Failures in a row', 'Window (failed / tried)', 'Opened', 'Probe from', 'In flight', 'Latency', 'Health check'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, targets.map((target) => h('tr', { data: { path: target.path, state: target.state } },
      h('th', { scope: 'row', text: target.name }),
      h('td', {}, h('code', { text: target.path })),
      h('td', {}, stateBadge(target)),
      h('td', { class: 'number', text: format.count(target.consecutive_failures) }),
      h('td', { class: 'number', text: `${format.count(target.window_failures)} / ${format.count(target.window_requests)}` }),
      h('td', { text: target.opened_at ? format.time(target.opened_at) : '—' }),
      h('td', { text: target.retry_at ? format.time(target.retry_at) : '—' }),
      h('td', { class: 'number', text: format.count(target.in_flight) }),
      h('td', { class: 'number', text: format.ms(target.latency_ms) }),
      healthCell(target))))));
}

/** Every leaf of a JSON value as `path → value` (`targets[1].override_params.model`). */
function flatten(value, path = '', into = new Map()) {
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(path, '[]');
    value.forEach((item, index) => flatten(item, `${path}[${index}]`, into));
  } else if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) into.set(path, '{}');
    for (const key of keys) flatten(value[key], path ? `${path}.${key}` : key, into);
  } else into.set(path, JSON.stringify(value));
  return into;
}

/** What changed from one version to the next: each path added, removed or changed, with its values. */
export function versionDiff(before, after) {
  const old = flatten(before);
  const next = flatten(after);
  const changes = [];
  for (const [path, value] of next) {
    if (!old.has(path)) changes.push({ kind: 'added', path, text: value });
    else if (old.get(path) !== value) changes.push({ kind: 'changed', path, text: `${old.get(path)} → ${value}` });
  }
  for (const [path, value] of old) if (!next.has(path)) changes.push({ kind: 'removed', path, text: value });
  return changes;
}

export const diffList = (changes) => (changes.length === 0
  ? h('p', { class: 'muted', text: 'No change to the route (the name may have changed).' })
  : h('ul', { class: 'diff' }, changes.map((change) => h('li', { class: `diff-${change.kind}`, data: { path: change.path } },
    h('span', { class: 'diff-kind', text: change.kind }), ' ', h('code', { text: change.path }), ': ', h('span', { text: change.text })))));

/** `fallback`, `loadbalance (least_busy)`, … */
const strategyText = (route) => (route?.strategy ? `${route.strategy.mode}${route.strategy.policy ? ` (${route.strategy.policy})` : ''}` : '—');

/** A target as one line: its name, then what it calls (a provider, a virtual key or a nested route). */
function targetText(target) {
  const key = target.virtual_key_hint ? `virtual key ${target.virtual_key} (${target.virtual_key_hint})` : `virtual key ${target.virtual_key}`;
  const through = target.route ? `nested ${strategyText(target.route)} route` : target.virtual_key ? key : target.provider ?? 'the caller’s provider';
  const model = target.override_params?.model ? `, model ${target.override_params.model}` : '';
  const weight = target.weight !== undefined ? `, weight ${target.weight}` : '';
  return `${target.name ?? '(unnamed)'}: ${through}${model}${weight}`;
}

const targetList = (route) => h('ul', { class: 'targets' }, (route?.targets ?? []).map((target) => h('li', { text: targetText(target) })));

const jsonBlock = (value) => h('pre', { class: 'body', tabindex: '0' }, h('code', { text: JSON.stringify(value, null, 2) }));

/** An admin API refusal as text, with the field it names (`param`) when there is one. */
function refusal(error) {
  const param = error.body?.error?.param;
  return param ? `${error.message} (param: ${param})` : error.message;
}

/**
 * A JSON textarea that sends `{ name?, route }` to the admin API; a refusal is shown beside it,
 * with its `param`. `send` gets the parsed body and returns the stored route.
 */
function routeEditor({ title, id, initial, submitLabel, send, done }) {
  const textarea = h('textarea', { name: 'body', rows: '14', spellcheck: 'false', class: 'json-input' });
  textarea.value = JSON.stringify(initial, null, 2);
  const error = h('p', { class: 'notice error', role: 'alert', hidden: true });
  const form = h('form', { class: 'editor', 'aria-labelledby': id },
    h('h2', { id, text: title }),
    field('Route (JSON: name and route)', textarea, 'checked by the admin API; every change is kept as a new version'),
    error,
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: submitLabel })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let body;
    try {
      body = JSON.parse(textarea.value);
    } catch (failure) {
      error.hidden = false;
      error.textContent = `Not JSON: ${failure.message}`;
      return;
    }
    try {
      const stored = await send(body);
      error.hidden = true;
      await done(stored);
    } catch (failure) {
      error.hidden = false;
      error.textContent = refusal(failure);
      textarea.focus();
    }
  });
  return form;
}

/** The model aliases: each names a stored route (linked, with that route's strategy and targets) or holds one inline. */
function aliasTable(aliases, byId) {
  if (aliases.length === 0) return h('p', { class: 'muted', text: 'No model aliases.' });
  return h('div', { class: 'table-wrap' }, h('table', { class: 'aliases' },
    h('thead', {}, h('tr', {}, ['Alias', 'Route', 'Strategy', 'Targets', 'Updated'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, aliases.map((alias) => {
      const stored = alias.route_id ? byId.get(alias.route_id) : undefined;
      const route = alias.route ?? stored?.route;
      return h('tr', { data: { alias: alias.alias } },
        h('th', { scope: 'row' }, h('code', { text: alias.alias })),
        h('td', {}, alias.route_id ? h('a', { href: `#/routes/${encodeURIComponent(alias.route_id)}`, text: stored?.name ?? alias.route_id }) : 'inline'),
        h('td', { text: route ? strategyText(route) : '—' }),
        h('td', {}, route ? targetList(route) : '—'),
        h('td', { text: format.time(alias.updated_at) }));
    }))));
}

/** The routes and aliases of gateway.config.ts: read-only, each target with its breaker. */
function configTable(configured) {
  if (configured.length === 0) return h('p', { class: 'muted', text: 'gateway.config.ts declares no routes or model aliases.' });
  return h('div', { class: 'table-wrap' }, h('table', { class: 'config-routes' },
    h('thead', {}, h('tr', {}, ['Name', 'Kind', 'Strategy', 'Targets and breakers'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, configured.map((entry) => h('tr', { data: { configRoute: entry.name, kind: entry.kind } },
      h('th', { scope: 'row' }, h('code', { text: entry.name })),
      h('td', { text: entry.kind === 'model' ? 'model alias' : 'route' }),
      h('td', { text: strategyText(entry.route) }),
      h('td', {}, h('ul', { class: 'targets' }, entry.targets.map((target) => h('li', { data: { path: target.path } }, `${target.name} `, stateBadge(target),
        target.health_check ? h('span', { class: `probe probe-${target.health_check.status}`, data: { health: target.health_check.status }, text: `health ${target.health_check.status}` }) : null)))))))));
}

/** The JSON editor, folded under the form: for what the form has no control for (a cache, conditions, nested routes). */
const advanced = (editor) => h('details', { class: 'advanced' }, h('summary', { text: 'Advanced: edit as JSON' }), editor);

/** Stored routes (name, id, version, strategy, targets), the configuration's routes, the model aliases, and a form to store a route. */
export async function renderRoutes(view) {
  const [allRoutes, aliases, configured, catalog] = await Promise.all([
    api.get('/admin/routes').then((answer) => answer.data),
    api.get('/admin/models').then((answer) => answer.data),
    api.get('/admin/config-routes').then((answer) => answer.data),
    formCatalog(),
  ]);
  const byId = new Map(allRoutes.map((route) => [route.id, route]));
  // The team switcher's filter (the server already left out what the caller may not see).
  const routes = allRoutes.filter(inSelectedTeam);
  const table = routes.length === 0
    ? h('p', { class: 'muted', text: 'No stored routes yet.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'routes' },
      h('thead', {}, h('tr', {}, ['Name', 'Id', 'Version', 'Strategy', 'Targets', 'Updated', 'Team'].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, routes.map((stored) => h('tr', { data: { routeId: stored.id, routeName: stored.name, teamId: teamOf(stored) ?? 'organization' } },
        h('th', { scope: 'row' }, h('a', { href: `#/routes/${encodeURIComponent(stored.id)}`, text: stored.name ?? '(unnamed)' })),
        h('td', {}, h('code', { text: stored.id })),
        h('td', { class: 'number', text: stored.version }),
        h('td', { text: strategyText(stored.route) }),
        h('td', {}, targetList(stored.route)),
        h('td', { text: format.time(stored.updated_at) }),
        h('td', { class: 'team' }, teamCell(stored)))))));
  // New routes (the form's and the JSON editor's) belong to the team chosen here.
  const writable = may('routes.write');
  const ownerField = writable ? teamField('routes.write', { shared: true, hint: 'who owns the routes stored below; shared: every team may use them' }) : null;
  const ownerForm = ownerField ? h('div', { class: 'route-owner' }, ownerField) : null;
  const withTeam = (body) => {
    const choice = ownerForm?.querySelector('select')?.value;
    const team = choice ? (choice === 'organization' ? null : choice) : undefined;
    return team === undefined ? body : { ...body, team_id: team };
  };
  const opened = async (stored) => {
    location.hash = `#/routes/${encodeURIComponent(stored.id)}`;
  };
  const create = routeForm({
    title: 'New route',
    id: 'create-route-title',
    initial: { name: '', route: { strategy: { mode: 'fallback' }, targets: [{ name: 'primary', provider: catalog.providers[0] }] } },
    catalog,
    submitLabel: 'Create route',
    send: (body) => api.post('/admin/routes', withTeam(body)),
    done: opened,
  });
  const json = routeEditor({
    title: 'Store a route as JSON',
    id: 'create-route-json-title',
    initial: EXAMPLE,
    submitLabel: 'Store route',
    send: (body) => api.post('/admin/routes', withTeam(body)),
    done: opened,
  });
  replace(view,
    h('h1', { text: 'Routes' }),
    h('h2', { text: 'Stored routes' }), table,
    h('h2', { text: 'Routes in gateway.config.ts (read-only)' }), configTable(configured),
    h('h2', { text: 'Model aliases' }), aliasTable(aliases, byId),
    writable ? [ownerForm, create, advanced(json)] : null);
}

/** One stored route: its breakers, every version (newest first, with what changed), the form that stores a new version, and the JSON editor. */
export async function renderRouteDetail(view, id) {
  replace(view, h('p', { class: 'muted', text: 'Loading…' }));
  const [current, versions, state, catalog] = await Promise.all([
    api.get(`/admin/routes/${encodeURIComponent(id)}`),
    api.get(`/admin/routes/${encodeURIComponent(id)}/versions`).then((answer) => answer.data),
    api.get(`/admin/routes/${encodeURIComponent(id)}/state`),
    formCatalog(),
  ]);
  const writable = holdsIn('routes.write', teamOf(current));
  const newestFirst = [...versions].sort((a, b) => b.version - a.version);
  const byVersion = new Map(versions.map((version) => [version.version, version]));
  const stored = async (answer) => {
    await renderRouteDetail(view, id);
    notify(`Stored version ${answer.version} of ${answer.name ?? answer.id}.`);
  };
  const initial = { ...(current.name !== undefined ? { name: current.name } : {}), route: current.route };
  const edit = routeForm({
    title: 'Change this route',
    id: 'edit-route-title',
    initial,
    catalog,
    submitLabel: 'Store new version',
    send: (body) => api.put(`/admin/routes/${encodeURIComponent(id)}`, body),
    done: stored,
  });
  const json = routeEditor({
    title: 'Change this route as JSON',
    id: 'edit-route-json-title',
    initial,
    submitLabel: 'Store new version from JSON',
    send: (body) => api.put(`/admin/routes/${encodeURIComponent(id)}`, body),
    done: stored,
  });
  const remove = h('button', { type: 'button', class: 'danger', text: 'Delete route' });
  remove.addEventListener('click', async () => {
    if (!confirm(`Delete the route "${current.name ?? current.id}" and all its versions?`)) return;
    try {
      await api.delete(`/admin/routes/${encodeURIComponent(id)}`);
    } catch (failure) {
      // 409 while a virtual key or a model alias names it.
      notify(refusal(failure), 'error');
      return;
    }
    location.hash = '#/routes';
  });
  const refresh = h('button', { type: 'button', class: 'secondary', text: 'Refresh breakers' });
  refresh.addEventListener('click', () => renderRouteDetail(view, id));
  replace(view,
    h('p', {}, h('a', { href: '#/routes', text: '← Back to routes' })),
    h('h1', { text: `Route ${current.name ?? current.id}` }),
    h('dl', { class: 'pairs' },
      h('dt', { text: 'Id' }), h('dd', {}, h('code', { text: current.id })),
      h('dt', { text: 'Team' }), h('dd', { class: 'route-team', text: teamName(teamOf(current)) }),
      h('dt', { text: 'Current version' }), h('dd', { text: current.version }),
      h('dt', { text: 'Strategy' }), h('dd', { text: strategyText(current.route) }),
      h('dt', { text: 'Updated' }), h('dd', { text: format.time(current.updated_at) })),
    h('h2', { text: 'Targets' }), targetList(current.route),
    h('section', { 'aria-labelledby': 'breakers-title', id: 'route-breakers' },
      h('h2', { id: 'breakers-title', text: 'Circuit breakers' }),
      h('p', { class: 'muted', text: 'As this gateway instance sees them, for requests naming the route (x-gateway-config or a virtual key). An open target is skipped until its probe time; the next attempt after it is a half-open probe.' }),
      breakerTable(state.targets),
      state.aliases.map((alias) => breakerTable(alias.targets, `Through the model alias ${alias.alias} (breakers of its own)`)),
      h('div', { class: 'actions' }, refresh)),
    h('section', { 'aria-labelledby': 'versions-title', id: 'route-versions' },
      h('h2', { id: 'versions-title', text: `Versions (${versions.length})` }),
      newestFirst.map((version) => {
        const previous = byVersion.get(version.version - 1);
        return h('details', { class: 'version', open: version.version === current.version, data: { version: version.version } },
          h('summary', { text: `Version ${version.version}${version.name !== undefined ? ` · ${version.name}` : ''} · ${format.time(version.updated_at)}${version.version === current.version ? ' (current)' : ''}` }),
          jsonBlock(version.route),
          previous ? h('h3', { class: 'diff-title', text: `Changes from version ${previous.version}` }) : null,
          previous ? diffList(versionDiff(previous.route, version.route)) : null);
      })),
    writable ? [edit, advanced(json), h('div', { class: 'actions danger-zone' }, remove)] : null);
}
