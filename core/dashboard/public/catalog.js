import { api } from './api.js';
import { h, replace } from './dom.js';

const pluginTable = (caption, plugins, extra) =>
  h('table', { class: 'plugins' },
    h('caption', { text: caption }),
    h('thead', {}, h('tr', {}, ['Id', 'Name', 'Version', 'Description', extra?.[0]].filter(Boolean).map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, plugins.map((plugin) => h('tr', {},
      h('th', { scope: 'row' }, h('code', { text: plugin.id })),
      h('td', { text: plugin.name ?? '—' }),
      h('td', { text: plugin.version ?? '—' }),
      h('td', { text: plugin.description ?? '' }),
      extra ? h('td', { text: extra[1](plugin) }) : null))));

/** A policy's steps as `GET /admin/policies` lists them (`input` and `output`, each `{guardrail}`). */
const describeSteps = (label, steps) => (steps.length ? `${label}: ${steps.map((step) => step.guardrail).join(' → ')}` : '');
const describePolicy = (policy) => [describeSteps('input', policy.input), describeSteps('output', policy.output)].filter(Boolean).join('; ') || 'no guardrails';

/** Plugins and policies, read-only: they are declared in gateway.config.ts. */
export async function renderCatalog(view) {
  const plugins = await api.get('/admin/plugins');
  const { policies } = await api.get('/admin/policies');
  replace(view,
    h('h1', { text: 'Plugins and policies' }),
    h('p', { class: 'muted', text: 'Read-only: plugins and policies are declared in code (gateway.config.ts).' }),
    pluginTable('Providers', plugins.providers, ['Operations', (plugin) => plugin.operations.join(', ')]),
    pluginTable('Guardrails', plugins.guardrails),
    h('section', { 'aria-labelledby': 'policies-title' },
      h('h2', { id: 'policies-title', text: 'Policies' }),
      policies.length === 0
        ? h('p', { class: 'muted', text: 'No policies declared.' })
        : h('ul', { class: 'policies' }, policies.map((policy) => h('li', {},
          h('strong', { text: policy.name }),
          ': ',
          describePolicy(policy))))));
}
