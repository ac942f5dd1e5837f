import { api } from './api.js';
import { format, h, replace, select } from './dom.js';

/** The windows offered for the verdict counts, in hours (the API takes 1 to 2160). */
const WINDOWS = [['1', 'Last hour'], ['24', 'Last 24 hours'], ['168', 'Last 7 days'], ['720', 'Last 30 days']];
const ACTIONS = ['allow', 'deny', 'transform'];
const ACTION_TEXT = { allow: 'allow', deny: 'deny', transform: 'transform (redact)' };

/** A guardrail's params as `key: value` pairs (objects and lists as JSON); `[hidden]` for write-only ones, as the API sends them. */
function paramsText(params) {
  if (params === undefined || params === null) return 'defaults';
  if (typeof params !== 'object' || Array.isArray(params)) return JSON.stringify(params);
  const entries = Object.entries(params);
  if (entries.length === 0) return 'defaults';
  return entries.map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`).join('; ');
}

/** Both sides of a policy as one table: side, order, guardrail id, params, fail mode and time budget. */
function chainTable(policy) {
  const steps = [...policy.input.map((step, index) => ({ ...step, side: 'input', index })), ...policy.output.map((step, index) => ({ ...step, side: 'output', index }))];
  if (steps.length === 0) return h('p', { class: 'muted', text: 'No guardrails.' });
  return h('div', { class: 'table-wrap' }, h('table', { class: 'chain' },
    h('caption', { text: `Chain (${policy.mode === 'parallel' ? 'guardrails of a side run in parallel' : 'in order'})` }),
    h('thead', {}, h('tr', {}, ['Side', '#', 'Guardrail', 'Parameters', 'On error', 'Time budget'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, steps.map((step) => h('tr', { data: { side: step.side, guardrail: step.guardrail } },
      h('td', { text: step.side }),
      h('td', { class: 'number', text: step.index + 1 }),
      h('th', { scope: 'row' }, h('code', { text: step.guardrail })),
      h('td', { class: 'params', text: paramsText(step.params) }),
      h('td', { text: step.onError }),
      h('td', { class: 'number', text: format.ms(step.timeoutMs) }))))));
}

const keyLinks = (keys) => keys.map((key, index) => [index > 0 ? ', ' : '', h('a', { href: '#/keys', class: 'policy-key', data: { keyId: key.id }, text: key.name })]);

/** The keys naming the policy, and for the default policy those naming none (and the account key). */
function usedBy(policy) {
  const named = policy.keys.length ? keyLinks(policy.keys) : 'no virtual key names it';
  return h('dl', { class: 'pairs used-by' },
    h('dt', { text: 'Keys naming it' }), h('dd', { class: 'keys-named' }, named),
    policy.default ? [h('dt', { text: 'As the default' }), h('dd', { class: 'keys-default' }, policy.default_keys.length ? keyLinks(policy.default_keys) : 'no key without a policy', ' and the account key')] : null);
}

/** Requests judged, denied and transformed, then each guardrail and side by action. */
function verdictTable(counts) {
  if (!counts || counts.requests === 0) return h('p', { class: 'muted verdicts-empty', text: 'No request was judged in this window.' });
  const rows = new Map();
  for (const verdict of counts.verdicts) {
    const key = `${verdict.side}\u0000${verdict.guardrail}`;
    const row = rows.get(key) ?? { side: verdict.side, guardrail: verdict.guardrail, allow: 0, deny: 0, transform: 0 };
    row[verdict.action] = (row[verdict.action] ?? 0) + verdict.count;
    rows.set(key, row);
  }
  return [
    h('p', { class: 'verdict-totals', text: `${format.count(counts.requests)} requests judged · ${format.count(counts.denied)} denied · ${format.count(counts.transformed)} transformed` }),
    h('div', { class: 'table-wrap' }, h('table', { class: 'verdicts' },
      h('thead', {}, h('tr', {}, ['Side', 'Guardrail', ...ACTIONS.map((action) => ACTION_TEXT[action])].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, [...rows.values()].map((row) => h('tr', { data: { side: row.side, guardrail: row.guardrail } },
        h('td', { text: row.side }),
        h('th', { scope: 'row' }, h('code', { text: row.guardrail })),
        ACTIONS.map((action) => h('td', { class: 'number', data: { action }, text: format.count(row[action]) }))))))),
  ];
}

/** Each configured policy: its chains with params, the keys that use it and its verdicts over a window (24 h by default). */
export async function renderPolicies(view, query) {
  const hours = WINDOWS.some(([value]) => value === query?.get('hours')) ? query.get('hours') : '24';
  const [{ policies, defaultPolicy }, verdicts] = await Promise.all([api.get('/admin/policies'), api.get('/admin/policies/verdicts', { hours })]);
  const byPolicy = new Map(verdicts.data.map((entry) => [entry.policy, entry]));
  const windowSelect = select('hours', WINDOWS, hours);
  windowSelect.id = 'verdict-window';
  windowSelect.addEventListener('change', () => {
    location.hash = `#/policies?hours=${windowSelect.value}`;
  });
  replace(view,
    h('h1', { text: 'Policies' }),
    h('p', { class: 'muted', text: `Declared in gateway.config.ts (read-only). ${defaultPolicy ? `The default policy, ${defaultPolicy}, applies to keys naming none and to the account key.` : 'No default policy: keys naming none are not judged.'}` }),
    h('div', { class: 'inline' }, h('label', { for: 'verdict-window', text: 'Verdicts of' }), windowSelect,
      h('span', { class: 'muted', text: `${format.time(verdicts.from)} to ${format.time(verdicts.to)}, from the request log` })),
    policies.length === 0
      ? h('p', { class: 'muted', text: 'No policies declared.' })
      : policies.map((policy) => h('section', { class: 'policy', 'aria-labelledby': `policy-${policy.name}`, data: { policy: policy.name } },
        h('h2', { id: `policy-${policy.name}` }, policy.name, policy.default ? h('span', { class: 'badge', text: 'default' }) : null),
        policy.description ? h('p', { class: 'description', text: policy.description }) : null,
        chainTable(policy),
        h('h3', { text: 'Used by' }),
        usedBy(policy),
        h('h3', { text: 'Verdicts' }),
        verdictTable(byPolicy.get(policy.name)))));
}
