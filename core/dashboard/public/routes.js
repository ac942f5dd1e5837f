import { api } from './api.js';
import { field, format, h, notify, replace } from './dom.js';

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

/** `fallback`, `loadbalance (least_busy)`, … */
const strategyText = (route) => (route?.strategy ? `${route.strategy.mode}${route.strategy.policy ? ` (${route.strategy.policy})` : ''}` : '—');

/** A target as one line: its name, then what it calls (a provider, a virtual key or a nested route). */
function targetText(target) {
  const through = target.route ? `nested ${strategyText(target.route)} route` : target.virtual_key ? 'a virtual key' : target.provider ?? 'the caller’s provider';
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

/** Stored routes (name, id, version, strategy, targets), the model aliases, and a form to store a route. */
export async function renderRoutes(view) {
  const [routes, aliases] = await Promise.all([
    api.get('/admin/routes').then((answer) => answer.data),
    api.get('/admin/models').then((answer) => answer.data),
  ]);
  const byId = new Map(routes.map((route) => [route.id, route]));
  const table = routes.length === 0
    ? h('p', { class: 'muted', text: 'No stored routes. Routes named in gateway.config.ts are not listed here.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'routes' },
      h('thead', {}, h('tr', {}, ['Name', 'Id', 'Version', 'Strategy', 'Targets', 'Updated'].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, routes.map((stored) => h('tr', { data: { routeId: stored.id, routeName: stored.name } },
        h('th', { scope: 'row' }, h('a', { href: `#/routes/${encodeURIComponent(stored.id)}`, text: stored.name ?? '(unnamed)' })),
        h('td', {}, h('code', { text: stored.id })),
        h('td', { class: 'number', text: stored.version }),
        h('td', { text: strategyText(stored.route) }),
        h('td', {}, targetList(stored.route)),
        h('td', { text: format.time(stored.updated_at) }))))));
  const create = routeEditor({
    title: 'Store a route',
    id: 'create-route-title',
    initial: EXAMPLE,
    submitLabel: 'Store route',
    send: (body) => api.post('/admin/routes', body),
    done: async (stored) => {
      location.hash = `#/routes/${encodeURIComponent(stored.id)}`;
    },
  });
  replace(view,
    h('h1', { text: 'Routes' }),
    h('h2', { text: 'Stored routes' }), table,
    h('h2', { text: 'Model aliases' }), aliasTable(aliases, byId),
    create);
}

/** One stored route: its current version, every version's JSON (newest first) and an editor that stores a new version. */
export async function renderRouteDetail(view, id) {
  replace(view, h('p', { class: 'muted', text: 'Loading…' }));
  const [current, versions] = await Promise.all([
    api.get(`/admin/routes/${encodeURIComponent(id)}`),
    api.get(`/admin/routes/${encodeURIComponent(id)}/versions`).then((answer) => answer.data),
  ]);
  const newestFirst = [...versions].sort((a, b) => b.version - a.version);
  const edit = routeEditor({
    title: 'Change this route',
    id: 'edit-route-title',
    initial: { ...(current.name !== undefined ? { name: current.name } : {}), route: current.route },
    submitLabel: 'Store new version',
    send: (body) => api.put(`/admin/routes/${encodeURIComponent(id)}`, body),
    done: async (stored) => {
      await renderRouteDetail(view, id);
      notify(`Stored version ${stored.version} of ${stored.name ?? stored.id}.`);
    },
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
  replace(view,
    h('p', {}, h('a', { href: '#/routes', text: '← Back to routes' })),
    h('h1', { text: `Route ${current.name ?? current.id}` }),
    h('dl', { class: 'pairs' },
      h('dt', { text: 'Id' }), h('dd', {}, h('code', { text: current.id })),
      h('dt', { text: 'Current version' }), h('dd', { text: current.version }),
      h('dt', { text: 'Strategy' }), h('dd', { text: strategyText(current.route) }),
      h('dt', { text: 'Updated' }), h('dd', { text: format.time(current.updated_at) })),
    h('h2', { text: 'Targets' }), targetList(current.route),
    h('section', { 'aria-labelledby': 'versions-title', id: 'route-versions' },
      h('h2', { id: 'versions-title', text: `Versions (${versions.length})` }),
      newestFirst.map((version) => h('details', { class: 'version', open: version.version === current.version, data: { version: version.version } },
        h('summary', { text: `Version ${version.version}${version.name !== undefined ? ` · ${version.name}` : ''} · ${format.time(version.updated_at)}${version.version === current.version ? ' (current)' : ''}` }),
        jsonBlock(version.route)))),
    edit,
    h('div', { class: 'actions danger-zone' }, remove));
}
