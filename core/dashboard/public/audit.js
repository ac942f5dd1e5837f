// The audit trail (`GET /admin/audit`): filters, newest first, cursor paging, each event's changes
// as before → after, and a JSONL export link.
import { api, linkUrl } from './api.js';
import { field, format, h, replace } from './dom.js';

const PAGE_SIZE = 50;
const TEXT_FILTERS = [['actor', 'Actor', 'a user id or email, a service account, or account'], ['action', 'Action', 'e.g. POST /admin/teams'], ['target', 'Target', 'an object id']];
const FILTER_NAMES = [...TEXT_FILTERS.map(([name]) => name), 'since', 'until'];

// Cursors of the pages before the current one, for "Previous"; reset when the filters change.
let pageTrail = { filters: '', cursors: [] };

const filtersOf = (query) => {
  const filters = new URLSearchParams();
  for (const name of FILTER_NAMES) if (query.get(name)) filters.set(name, query.get(name));
  return filters;
};

/** The API's query: the page's filters, dates as ISO 8601. */
function apiQuery(query) {
  const answer = {};
  for (const [name] of TEXT_FILTERS) answer[name] = query.get(name) ?? undefined;
  for (const name of ['since', 'until']) answer[name] = query.get(name) ? new Date(query.get(name)).toISOString() : undefined;
  return answer;
}

/** A value of a change, short: JSON for what is not a string, "—" for none. */
const valueText = (value) => (value === undefined || value === null ? '—' : typeof value === 'string' ? value : JSON.stringify(value));

function changesCell(changes) {
  const entries = Object.entries(changes ?? {});
  if (entries.length === 0) return h('span', { class: 'muted', text: '—' });
  return h('ul', { class: 'plain changes' }, entries.map(([name, change]) => h('li', { data: { field: name } },
    h('code', { text: name }), ': ',
    h('span', { class: 'before', text: valueText(change?.before) }), ' → ',
    h('span', { class: 'after', text: valueText(change?.after) }))));
}

const actorText = (actor) => (actor ? actor.label ?? (actor.id ? `${actor.type} ${actor.id}` : actor.type) : '—');
const targetText = (target) => (target ? `${target.type}${target.id ? ` ${target.id}` : ''}` : '—');

function eventRow(event) {
  return h('tr', { data: { eventId: event.id, seq: event.seq, outcome: event.outcome } },
    h('td', { class: 'time', text: format.time(event.time) }),
    h('td', { class: 'actor', title: event.actor?.id ?? '', text: actorText(event.actor) }),
    h('td', { class: 'action' }, h('code', { text: event.action })),
    h('td', { class: 'target', text: targetText(event.target) }),
    h('td', { class: 'changes-cell' }, changesCell(event.changes)),
    h('td', { class: 'outcome', text: event.outcome ?? '—' }),
    h('td', { text: event.address ?? '—' }),
    h('td', { class: 'number', text: event.seq ?? '' }));
}

function filterForm(query) {
  const input = (name, type = 'text') => h('input', { name, type, value: query.get(name) ?? '', autocomplete: 'off' });
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter audit events' },
    TEXT_FILTERS.map(([name, label, hint]) => {
      const control = input(name);
      control.title = hint;
      return field(label, control);
    }),
    field('Since', input('since', 'datetime-local')),
    field('Until', input('until', 'datetime-local')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Apply' }), h('a', { class: 'button-link', href: '#/audit', text: 'Clear' })));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const target = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (String(value).trim()) target.set(name, String(value).trim());
    location.hash = `#/audit?${target}`;
  });
  return form;
}

/** The Audit page. */
export async function renderAudit(view, query) {
  const filters = filtersOf(query);
  if (pageTrail.filters !== filters.toString()) pageTrail = { filters: filters.toString(), cursors: [] };
  const status = h('p', { class: 'muted', text: 'Loading…' });
  replace(view, h('h1', { text: 'Audit trail' }), filterForm(query), status);
  let page;
  try {
    page = await api.get('/admin/audit', { ...apiQuery(query), limit: String(PAGE_SIZE), cursor: query.get('cursor') ?? undefined });
  } catch (error) {
    status.className = 'notice error';
    status.setAttribute('role', 'alert');
    status.textContent = error.status === 404
      ? 'The audit trail is not available on this gateway yet: GET /admin/audit answered 404 (Not Found).'
      : `Could not read the audit trail: ${error.message}`;
    return;
  }
  const events = page?.data ?? [];
  status.textContent = events.length === 0 ? 'No audit events match these filters.' : `Showing ${events.length} event${events.length === 1 ? '' : 's'}, newest first${pageTrail.cursors.length ? ` (page ${pageTrail.cursors.length + 1})` : ''}.`;
  const exportLink = h('a', { class: 'button-link audit-export', href: linkUrl('/admin/audit/export', apiQuery(query)), download: 'audit.jsonl', text: 'Export (JSONL)' });
  const table = events.length === 0 ? null : h('div', { class: 'table-wrap' }, h('table', { class: 'audit' },
    h('caption', { class: 'visually-hidden', text: 'Audit events, newest first' }),
    h('thead', {}, h('tr', {}, ['Time', 'Actor', 'Action', 'Target', 'Changes (before → after)', 'Outcome', 'Address', 'Seq'].map((name) => h('th', { scope: 'col', text: name })))),
    h('tbody', {}, events.map(eventRow))));
  const previous = h('button', { type: 'button', class: 'secondary', text: 'Previous', disabled: pageTrail.cursors.length === 0 });
  previous.addEventListener('click', () => {
    const target = new URLSearchParams(filters);
    const cursor = pageTrail.cursors.pop();
    if (cursor) target.set('cursor', cursor);
    location.hash = `#/audit?${target}`;
  });
  const next = h('button', { type: 'button', class: 'secondary', text: 'Next', disabled: !page?.next_cursor });
  next.addEventListener('click', () => {
    pageTrail.cursors.push(query.get('cursor') ?? '');
    const target = new URLSearchParams(filters);
    target.set('cursor', page.next_cursor);
    location.hash = `#/audit?${target}`;
  });
  replace(view, h('h1', { text: 'Audit trail' }), filterForm(query), h('div', { class: 'list-tools' }, status, exportLink), table, h('nav', { class: 'pager', 'aria-label': 'Pages' }, previous, next));
}
