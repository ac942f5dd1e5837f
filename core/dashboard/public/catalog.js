import { api } from './api.js';
import { h, replace } from './dom.js';

/** The property names of a plugin's params schema (what its factory takes), or an em dash. */
const paramNames = (plugin) => Object.keys(plugin.params?.properties ?? {}).join(', ') || '—';

/** Guardrail manifests carry no display name: their id names them (the policies view shows which policies use them). */
const guardrailTable = (guardrails) =>
  h('table', { class: 'plugins guardrails' },
    h('caption', { text: 'Guardrails' }),
    h('thead', {}, h('tr', {}, ['Id', 'Version', 'Judges', 'Description', 'Parameters'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, guardrails.map((plugin) => h('tr', { data: { pluginId: plugin.id } },
      h('th', { scope: 'row' }, h('code', { text: plugin.id })),
      h('td', { text: plugin.version ?? '—' }),
      h('td', { text: (plugin.stages ?? []).join(', ') || '—' }),
      h('td', { text: plugin.description ?? '' }),
      h('td', { text: paramNames(plugin) })))));

const providerTable = (providers) =>
  h('table', { class: 'plugins providers' },
    h('caption', { text: 'Providers' }),
    h('thead', {}, h('tr', {}, ['Id', 'Name', 'Version', 'Description', 'Operations'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, providers.map((plugin) => h('tr', { data: { pluginId: plugin.id } },
      h('th', { scope: 'row' }, h('code', { text: plugin.id })),
      h('td', { text: plugin.name ?? plugin.id }),
      h('td', { text: plugin.version ?? '—' }),
      h('td', { text: plugin.description ?? '' }),
      h('td', { text: plugin.operations.join(', ') || 'pass-through only' })))));

/** Plugins, read-only: they are declared in gateway.config.ts. Policies have their own view. */
export async function renderCatalog(view) {
  const plugins = await api.get('/admin/plugins');
  replace(view,
    h('h1', { text: 'Plugins' }),
    h('p', { class: 'muted' }, 'Read-only: plugins are declared in code (gateway.config.ts). The guardrail policies built from them are under ', h('a', { href: '#/policies', text: 'Policies' }), '.'),
    h('div', { class: 'table-wrap' }, providerTable(plugins.providers)),
    h('div', { class: 'table-wrap' }, guardrailTable(plugins.guardrails)));
}
