import { api, linkUrl } from './api.js';
import { field, format, h, replace } from './dom.js';

const PAGE_SIZE = 50;
const FILTERS = [
  ['actor', 'Actor', 'type:id, or an id or a type alone (cli, account)'],
  ['action', 'Action', 'one action (keys.update), or a family (keys.*)'],
  ['target', 'Target', 'type:id (virtual-key:vk_1), or an id alone'],
];

// Cursors of the pages before the current one, for "Newer"; reset when the filters change.
let pageTrail = { filters: '', cursors: [] };

const filtersOf = (query) => {
  const filters = new URLSearchParams();
  for (const [name] of FILTERS) if (query.get(name)) filters.set(name, query.get(name));
  return filters;
};

const actorText = (actor) => [actor.type, actor.label ?? actor.id].filter(Boolean).join(': ');
const targetText = (target) => (target ? `${target.type} ${target.id}` : '—');

/** The changed fields as `field: before → after` lines (values as JSON). */
function changesText(changes) {
  if (!changes || Object.keys(changes).length === 0) return '—';
  const show = (value) => (value === undefined ? '∅' : JSON.stringify(value));
  return Object.entries(changes).map(([name, change]) => `${name}: ${show(change.before)} → ${show(change.after)}`).join('\n');
}

function auditTable(events) {
  return h('table', { class: 'audit' },
    h('thead', {}, h('tr', {}, ['#', 'Time', 'Actor', 'Action', 'Target', 'Outcome', 'From', 'Changes', 'Hash'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, events.map((event) => h('tr', { data: { seq: event.seq, outcome: event.outcome } },
      h('td', { class: 'number', text: event.seq }),
      h('td', { text: format.listTime(event.time) }),
      h('td', { text: actorText(event.actor) }),
      h('th', { scope: 'row' }, h('code', { text: event.action })),
      h('td', { text: targetText(event.target) }),
      h('td', { class: `outcome-${event.outcome}`, text: event.outcome }),
      h('td', { text: event.address ?? '—', title: event.user_agent ?? undefined }),
      h('td', { class: 'changes', text: changesText(event.changes) }),
      h('td', {}, h('code', { title: `hash ${event.hash}\nprevious ${event.prev_hash}`, text: event.hash.slice(0, 12) }))))));
}

/** The chain's state, from GET /admin/audit/verify, on demand (it reads the whole chain). */
function verifyControl() {
  const result = h('span', { class: 'muted', role: 'status', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', text: 'Verify the chain' });
  button.addEventListener('click', async () => {
    button.disabled = true;
    result.textContent = 'Verifying…';
    try {
      const answer = await api.get('/admin/audit/verify');
      result.className = answer.ok ? 'verify-ok' : 'notice error';
      result.textContent = answer.ok ? `Whole: ${format.count(answer.count)} events.` : `Broken at seq ${answer.seq}${answer.id ? ` (id ${answer.id})` : ''}: ${answer.reason}`;
    } catch (error) {
      result.className = 'notice error';
      result.textContent = error.message;
    } finally {
      button.disabled = false;
    }
  });
  return h('div', { class: 'inline verify' }, button, result);
}

/** The audit trail: filters, one page newest first, paging, the JSON-lines export and the chain's verification. */
export async function renderAudit(view, query) {
  const filters = filtersOf(query);
  if (pageTrail.filters !== filters.toString()) pageTrail = { filters: filters.toString(), cursors: [] };
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter audit events' },
    FILTERS.map(([name, label, title]) => field(label, h('input', { name, type: 'text', value: query.get(name) ?? '', autocomplete: 'off', title }))),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Apply filters' }), h('a', { href: '#/audit', class: 'button-link', text: 'Clear' })));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const target = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (String(value).trim()) target.set(name, String(value).trim());
    location.hash = `#/audit?${target}`;
  });
  const status = h('p', { class: 'muted', text: 'Loading…' });
  const tableHolder = h('div', { class: 'table-wrap' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const exportLink = h('a', { href: linkUrl('/admin/audit/export'), class: 'button-link', download: '', text: 'Export (JSON lines)' });
  replace(view,
    h('h1', { text: 'Audit' }),
    h('p', { class: 'muted', text: 'Every change and sign-in, newest first. Each event carries the hash of the one before it: a changed, removed or inserted event breaks the chain (llm-gateway audit verify on the host checks it too).' }),
    form, h('div', { class: 'list-tools' }, status, verifyControl(), exportLink), tableHolder, pager);

  const page = await api.get('/admin/audit', { ...Object.fromEntries(filters), limit: String(PAGE_SIZE), cursor: query.get('cursor') ?? undefined });
  const events = page?.data ?? [];
  status.textContent = events.length === 0 ? 'No audit events match these filters.' : `Showing ${events.length} event${events.length === 1 ? '' : 's'}${pageTrail.cursors.length ? ` (page ${pageTrail.cursors.length + 1})` : ''}.`;
  if (events.length) replace(tableHolder, auditTable(events));
  const newer = h('button', { type: 'button', text: 'Newer', disabled: pageTrail.cursors.length === 0 });
  newer.addEventListener('click', () => {
    const target = new URLSearchParams(filters);
    const cursor = pageTrail.cursors.pop();
    if (cursor) target.set('cursor', cursor);
    location.hash = `#/audit?${target}`;
  });
  const older = h('button', { type: 'button', text: 'Older', disabled: !page?.next_cursor });
  older.addEventListener('click', () => {
    pageTrail.cursors.push(query.get('cursor') ?? '');
    const target = new URLSearchParams(filters);
    target.set('cursor', page.next_cursor);
    location.hash = `#/audit?${target}`;
  });
  replace(pager, newer, older);
}
