import { api } from './api.js';
import { field, format, h, replace, select } from './dom.js';
import { exportLinks, liveToggle } from './logs-live.js';
import { holdsAnywhere, selectedTeam, teamName, teamOf } from './session.js';

const PAGE_SIZE = 50;
const RANGES = [
  ['15m', 'Last 15 minutes', 15 * 60e3],
  ['1h', 'Last hour', 60 * 60e3],
  ['24h', 'Last 24 hours', 24 * 60 * 60e3],
  ['7d', 'Last 7 days', 7 * 24 * 60 * 60e3],
  ['30d', 'Last 30 days', 30 * 24 * 60 * 60e3],
  ['all', 'All time', null],
];
const TEXT_FILTERS = [
  ['provider', 'Provider'],
  ['model', 'Model'],
  ['key', 'Key id (or account)'],
  ['trace_id', 'Trace id'],
  ['metadata_key', 'Metadata key'],
  ['metadata_value', 'Metadata value'],
];
/** `status_class=errors` in the page's address is the API's `errors=true`: 4xx, 5xx and streams that broke after their 200. */
const STATUS_OPTIONS = [['', 'Any'], ['errors', 'All errors'], ['2xx', '2xx success'], ['4xx', '4xx client error'], ['5xx', '5xx server error']];
const FILTER_NAMES = ['q', 'range', 'from', 'to', 'status_class', ...TEXT_FILTERS.map(([name]) => name)];

// Cursors of the pages before the current one, for "Previous"; reset when the filters change.
let pageTrail = { filters: '', cursors: [] };
let lastListHash = '#/logs';

const filtersOf = (query) => {
  const filters = new URLSearchParams();
  for (const name of FILTER_NAMES) if (query.get(name)) filters.set(name, query.get(name));
  return filters;
};

/** The admin API query for the page's filters (the list's; the export and the tail take the same). */
function apiQuery(query) {
  const range = RANGES.find(([id]) => id === (query.get('range') ?? '24h')) ?? RANGES[2];
  const from = query.get('from') ? new Date(query.get('from')).toISOString() : range[2] ? new Date(Date.now() - range[2]).toISOString() : undefined;
  const answer = { from, to: query.get('to') ? new Date(query.get('to')).toISOString() : undefined, limit: String(PAGE_SIZE), cursor: query.get('cursor') ?? undefined };
  for (const name of ['status_class', 'q', ...TEXT_FILTERS.map(([item]) => item)]) answer[name] = query.get(name) ?? undefined;
  if (answer.status_class === 'errors') {
    answer.status_class = undefined;
    answer.errors = 'true';
  }
  return answer;
}

/** The logs explorer: filters, one page of the table, cursor pagination, export and a live tail. */
export async function renderLogs(view, query) {
  const filters = filtersOf(query);
  if (pageTrail.filters !== filters.toString()) pageTrail = { filters: filters.toString(), cursors: [] };
  lastListHash = location.hash || '#/logs';

  const form = filterForm(query);
  const status = h('p', { class: 'muted', text: 'Loading…' });
  const tableHolder = h('div', { class: 'table-wrap' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const { limit: _limit, cursor: _cursor, ...setQuery } = apiQuery(query);
  const tools = h('div', { class: 'list-tools' });
  // The count sits in the tools' line (left of Live and the exports): one line less above the table.
  replace(view, h('h1', { text: 'Logs' }), form, tools, tableHolder, pager);
  replace(tools, status);

  let page;
  try {
    page = await api.get('/admin/logs', apiQuery(query));
  } catch (error) {
    status.className = 'notice error';
    status.setAttribute('role', 'alert');
    status.textContent = error.message;
    return;
  }
  // The team switcher's filter: the rows of the team's keys (a log row names its key, the key its team).
  const team = selectedTeam();
  const teamKeys = team ? await api.get('/admin/virtual-keys').then((answer) => new Set(answer.data.filter((key) => teamOf(key) === team).map((key) => key.id)), () => new Set()) : null;
  const ofTeam = (row) => !teamKeys || teamKeys.has(row.key_id);
  const rows = (page?.data ?? []).filter(ofTeam);
  const teamNote = team ? ` of team ${teamName(team)}` : '';
  status.textContent = rows.length === 0 ? `No requests${teamNote} match these filters${team && page?.data?.length ? ' on this page' : ''}.` : `Showing ${rows.length} request${rows.length === 1 ? '' : 's'}${teamNote}${pageTrail.cursors.length ? ` (page ${pageTrail.cursors.length + 1})` : ''}.`;
  const table = logTable(rows);
  if (rows.length) replace(tableHolder, table);

  // New rows arrive on the first page only, and only when the range has no end.
  const liveBlocked = query.get('cursor') ? 'Live is for the first page: go back to it.' : query.get('to') ? 'Live needs a range without an end (clear "To").' : null;
  replace(tools,
    status,
    liveToggle({ query: setQuery, blocked: liveBlocked, onRow: (row) => {
      if (!ofTeam(row)) return;
      if (!table.isConnected) replace(tableHolder, table);
      table.tBodies[0].prepend(logRow(row, true));
      // The table keeps at most a few pages' worth while live.
      while (table.tBodies[0].rows.length > PAGE_SIZE * 10) table.tBodies[0].lastElementChild.remove();
    } }),
    exportLinks(setQuery));

  const previous = h('button', { type: 'button', text: 'Previous', disabled: pageTrail.cursors.length === 0 });
  previous.addEventListener('click', () => {
    const target = new URLSearchParams(filters);
    const cursor = pageTrail.cursors.pop();
    if (cursor) target.set('cursor', cursor);
    location.hash = `#/logs?${target}`;
  });
  const next = h('button', { type: 'button', text: 'Next', disabled: !page?.next_cursor });
  next.addEventListener('click', () => {
    pageTrail.cursors.push(query.get('cursor') ?? '');
    const target = new URLSearchParams(filters);
    target.set('cursor', page.next_cursor);
    location.hash = `#/logs?${target}`;
  });
  replace(pager, previous, next);
}

/**
 * The filters, compact: two or three rows at 1280 px. What each field means is its tooltip (the
 * `title`, also its accessible description) rather than a line under it, so the table starts higher.
 */
function filterForm(query) {
  const range = select('range', RANGES.map(([id, label]) => [id, label]), query.get('range') ?? '24h');
  const statusClass = select('status_class', STATUS_OPTIONS, query.get('status_class') ?? '');
  statusClass.title = '"All errors": 4xx, 5xx and streams that broke after their 200';
  const input = (name, type = 'text', props = {}) => h('input', { name, type, value: query.get(name) ?? '', autocomplete: 'off', ...props });
  const search = 'every word, in the stored request and response bodies';
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter logs' },
    // Searching bodies needs logs.bodies (403 without it): the field is shown only to those who hold it.
    holdsAnywhere('logs.bodies') ? h('div', { class: 'search-field' }, field('Search bodies', input('q', 'search', { placeholder: 'words in request or response bodies', title: search }))) : null,
    field('Time range', range),
    field('Status', statusClass),
    field('From', input('from', 'datetime-local', { title: 'overrides the range' })),
    field('To', input('to', 'datetime-local')),
    TEXT_FILTERS.map(([name, label]) => field(label, input(name))),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Apply filters' }), h('a', { href: '#/logs', class: 'button-link', text: 'Clear' })),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const target = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (String(value).trim()) target.set(name, String(value).trim());
    location.hash = `#/logs?${target}`;
  });
  return form;
}

const statusClass = (status) => (status >= 500 ? 'status-5xx' : status >= 400 ? 'status-4xx' : 'status-2xx');

/** A link to the list with these filters (and every other one cleared but the range). */
const listLink = (filters) => `#/logs?${new URLSearchParams(filters)}`;

/** The caller: a link that filters the table by this key (the API filters by key id, or `account`). */
function keyCell(row) {
  const filter = row.key_id ?? (row.caller_type === 'account' ? 'account' : null);
  const label = row.key_name ?? row.key_id ?? row.caller_type ?? '—';
  if (!filter) return label;
  const target = new URLSearchParams(filtersOf(new URLSearchParams(location.hash.split('?')[1] ?? '')));
  target.set('key', filter);
  return h('a', { class: 'quiet', href: `#/logs?${target}`, title: `Only requests with ${label}`, text: label });
}

/** A routed request's mark in the list: how many attempts, and the target that answered. */
function routedMark(row) {
  const attempts = row.routing?.attempts ?? [];
  if (attempts.length === 0) return null;
  const last = attempts[attempts.length - 1];
  const routeName = row.routing.route?.name ?? row.routing.route?.id ?? 'route';
  return h('span', { class: 'routed' },
    h('span', { class: 'route-badge', title: `Routed by ${routeName}`, text: `↪ ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}` }),
    h('span', { class: 'route-target', title: 'The target whose answer the client got', text: last.target }));
}

const failed = (row) => row.status >= 400 || Boolean(row.error_type);

/** Beside a failed request's status, on its line: its error code and message (the whole message on hover and in the detail). */
function errorNote(row) {
  if (!failed(row) || !(row.error_code || row.error_message || row.error_type)) return null;
  const message = row.error_message ?? row.error_type ?? '';
  return h('span', { class: 'error-note', title: message },
    row.error_code ? h('code', { class: 'error-code', text: row.error_code }) : null,
    row.outcome === 'stream_error' ? h('span', { class: 'mark mark-bad', text: 'stream broke' }) : null,
    h('span', { class: 'error-message', text: message }));
}

const CACHE_LABELS = { HIT: 'cache hit', 'SEMANTIC-HIT': 'semantic hit', MISS: 'cache miss', BYPASS: 'cache bypass', REFRESH: 'cache refresh' };

/** Small marks: streamed, what the response cache did. */
function marks(row) {
  const items = [];
  if (row.streaming) items.push(h('span', { class: 'mark mark-stream', title: 'Streamed (server-sent events)', text: 'stream' }));
  if (row.cache_status) {
    const hit = row.cache_status === 'HIT' || row.cache_status === 'SEMANTIC-HIT';
    const saved = hit && row.cache_saved_usd ? `, saved ${format.usd(row.cache_saved_usd)}` : '';
    items.push(h('span', { class: `mark ${hit ? 'mark-hit' : 'mark-cache'}`, title: `Response cache: ${row.cache_status}${saved}`, text: CACHE_LABELS[row.cache_status] ?? row.cache_status }));
  }
  return items;
}

/** The trace: a link to every request that carried this trace id, over all time. */
function traceCell(row) {
  if (!row.trace_id) return '—';
  const short = row.trace_id.length > 14 ? `…${row.trace_id.slice(-12)}` : row.trace_id;
  return h('a', { class: 'trace-link', href: listLink({ range: 'all', trace_id: row.trace_id }), title: `Every request of trace ${row.trace_id}`, 'aria-label': `Every request of trace ${row.trace_id}`, text: short });
}

/** One request as a table row; `fresh` marks a row the live tail added. */
function logRow(row, fresh = false) {
  return h(
    'tr',
    {
      class: fresh ? 'live-new' : null,
      data: { logId: row.id, traceId: row.trace_id, model: row.model, status: row.status, streaming: row.streaming ? 'true' : null, cache: row.cache_status, errorCode: row.error_code, failed: failed(row) ? 'true' : null },
    },
    h('td', { class: 'time' }, h('a', { class: 'open-detail', href: `#/logs/${encodeURIComponent(row.id)}`, text: format.listTime(row.time), title: format.time(row.time) })),
    h('td', {}, h('span', { class: `status ${statusClass(row.status)}`, text: row.status }), errorNote(row)),
    h('td', {}, row.provider ?? '—', routedMark(row)),
    h('td', { text: row.model ?? '—' }),
    h('td', { class: 'key' }, keyCell(row)),
    h('td', { class: 'number', text: format.ms(row.latency_ms) }),
    h('td', { class: 'number', text: format.count(row.total_tokens) }),
    h('td', { class: 'number', text: format.usd(row.cost_usd) }),
    h('td', { class: 'marks' }, marks(row)),
    h('td', {}, traceCell(row)),
  );
}

function logTable(rows) {
  const columns = ['Time', 'Status', 'Provider', 'Model', 'Key', 'Latency', 'Tokens', 'Cost', 'Marks', 'Trace'];
  return h(
    'table',
    { class: 'logs' },
    h('caption', { class: 'visually-hidden', text: 'Requests, newest first' }),
    h('thead', {}, h('tr', {}, columns.map((name) => h('th', { scope: 'col', text: name })))),
    h(
      'tbody',
      {},
      rows.map((row) => logRow(row)),
    ),
  );
}

/** For the detail view (detail.js): its back link, and the status colours. */
export { lastListHash, statusClass };
