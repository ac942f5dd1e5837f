import { api } from './api.js';
import { field, format, h, replace, select } from './dom.js';

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
const FILTER_NAMES = ['range', 'from', 'to', 'status_class', ...TEXT_FILTERS.map(([name]) => name)];

// Cursors of the pages before the current one, for "Previous"; reset when the filters change.
let pageTrail = { filters: '', cursors: [] };
let lastListHash = '#/logs';

const filtersOf = (query) => {
  const filters = new URLSearchParams();
  for (const name of FILTER_NAMES) if (query.get(name)) filters.set(name, query.get(name));
  return filters;
};

/** The admin API query for the page's filters. */
function apiQuery(query) {
  const range = RANGES.find(([id]) => id === (query.get('range') ?? '24h')) ?? RANGES[2];
  const from = query.get('from') ? new Date(query.get('from')).toISOString() : range[2] ? new Date(Date.now() - range[2]).toISOString() : undefined;
  const answer = { from, to: query.get('to') ? new Date(query.get('to')).toISOString() : undefined, limit: String(PAGE_SIZE), cursor: query.get('cursor') ?? undefined };
  for (const name of ['status_class', ...TEXT_FILTERS.map(([item]) => item)]) answer[name] = query.get(name) ?? undefined;
  return answer;
}

/** The logs explorer: filters, one page of the table, cursor pagination. */
export async function renderLogs(view, query) {
  const filters = filtersOf(query);
  if (pageTrail.filters !== filters.toString()) pageTrail = { filters: filters.toString(), cursors: [] };
  lastListHash = location.hash || '#/logs';

  const form = filterForm(query);
  const status = h('p', { class: 'muted', text: 'Loading…' });
  const tableHolder = h('div', { class: 'table-wrap' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  replace(view, h('h1', { text: 'Logs' }), form, status, tableHolder, pager);

  let page;
  try {
    page = await api.get('/admin/logs', apiQuery(query));
  } catch (error) {
    status.className = 'notice error';
    status.setAttribute('role', 'alert');
    status.textContent = error.message;
    return;
  }
  const rows = page?.data ?? [];
  status.textContent = rows.length === 0 ? 'No requests match these filters.' : `Showing ${rows.length} request${rows.length === 1 ? '' : 's'}${pageTrail.cursors.length ? ` (page ${pageTrail.cursors.length + 1})` : ''}.`;
  if (rows.length) replace(tableHolder, logTable(rows));

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

function filterForm(query) {
  const range = select('range', RANGES.map(([id, label]) => [id, label]), query.get('range') ?? '24h');
  const statusClass = select('status_class', [['', 'Any'], ['2xx', '2xx success'], ['4xx', '4xx client error'], ['5xx', '5xx server error']], query.get('status_class') ?? '');
  const input = (name, type = 'text') => h('input', { name, type, value: query.get(name) ?? '', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter logs' },
    field('Time range', range),
    field('From', input('from', 'datetime-local'), 'overrides the range'),
    field('To', input('to', 'datetime-local')),
    field('Status', statusClass),
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

function logTable(rows) {
  const columns = ['Time', 'Status', 'Provider', 'Model', 'Key', 'Latency', 'Tokens', 'Cost'];
  return h(
    'table',
    { class: 'logs' },
    h('caption', { class: 'visually-hidden', text: 'Requests, newest first' }),
    h('thead', {}, h('tr', {}, columns.map((name) => h('th', { scope: 'col', text: name })))),
    h(
      'tbody',
      {},
      rows.map((row) =>
        h(
          'tr',
          { data: { logId: row.id, traceId: row.trace_id, model: row.model, status: row.status } },
          h('td', {}, h('a', { class: 'open-detail', href: `#/logs/${encodeURIComponent(row.id)}`, text: format.time(row.time), title: `Trace ${row.trace_id ?? ''}` })),
          h('td', {}, h('span', { class: `status ${statusClass(row.status)}`, text: row.status })),
          h('td', {}, row.provider ?? '—', routedMark(row)),
          h('td', { text: row.model ?? '—' }),
          h('td', {}, keyCell(row)),
          h('td', { class: 'number', text: format.ms(row.latency_ms) }),
          h('td', { class: 'number', text: format.count(row.total_tokens) }),
          h('td', { class: 'number', text: format.usd(row.cost_usd) }),
        ),
      ),
    ),
  );
}

/** Shows a body: JSON pretty-printed, anything else as received. */
function prettyBody(body) {
  if (body === null || body === undefined || body === '') return h('p', { class: 'muted', text: 'Not logged.' });
  let text = String(body);
  try {
    text = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON (a stream or a truncated body): shown as is.
  }
  return h('pre', { class: 'body', tabindex: '0' }, h('code', { text }));
}

const pairs = (entries) =>
  h('dl', { class: 'pairs' }, entries.filter(([, value]) => value !== undefined).map(([term, value]) => [h('dt', { text: term }), h('dd', { text: value ?? '—' })]));

const ROUTE_SOURCES = { header: 'x-gateway-config header', inline: 'inline in the request', key: 'the virtual key', alias: 'model alias' };

/** A routed request's route (name, stored id and version, where it came from) and its attempts in order; nothing for a plain request. */
function routingSection(routing) {
  if (!routing?.attempts?.length) return null;
  const route = routing.route ?? {};
  const attempts = routing.attempts;
  const routeLink = route.id ? h('a', { href: `#/routes/${encodeURIComponent(route.id)}`, text: route.id }) : undefined;
  return h('section', { 'aria-labelledby': 'd-routing', id: 'routing' },
    h('h2', { id: 'd-routing', text: 'Route and attempts' }),
    h('dl', { class: 'pairs route-pairs' },
      route.name !== undefined ? [h('dt', { text: 'Route' }), h('dd', { text: route.name })] : null,
      routeLink ? [h('dt', { text: 'Stored route' }), h('dd', {}, routeLink)] : null,
      route.version !== undefined ? [h('dt', { text: 'Version' }), h('dd', { text: route.version })] : null,
      route.source !== undefined ? [h('dt', { text: 'Source' }), h('dd', { text: ROUTE_SOURCES[route.source] ?? route.source })] : null),
    h('div', { class: 'table-wrap' }, h('table', { class: 'attempts' },
      h('caption', { text: `${attempts.length} upstream attempt${attempts.length === 1 ? '' : 's'}, in order` }),
      h('thead', {}, h('tr', {}, ['#', 'Target', 'Provider', 'Model', 'Status', 'Latency', 'Error code', 'Tokens', 'Answer'].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, attempts.map((attempt, index) => attemptRow(attempt, index, index === attempts.length - 1))))));
}

/** One attempt; the last one's answer is what the client got, and it is marked so. */
function attemptRow(attempt, index, last) {
  const usage = attempt.usage;
  const tokens = usage ? h('td', { class: 'number', title: `${format.count(usage.prompt_tokens)} prompt + ${format.count(usage.completion_tokens)} completion`, text: format.count(usage.total_tokens) }) : h('td', { class: 'number', text: '—' });
  const answered = last ? (attempt.status < 400 ? '✓ answered' : '→ returned to the client') : undefined;
  return h('tr', { class: last ? 'answered' : null, data: { target: attempt.target, status: attempt.status, answered: last ? 'true' : null } },
    h('td', { class: 'number', text: index + 1 }),
    h('th', { scope: 'row', text: attempt.target }),
    h('td', { text: attempt.provider ?? '—' }),
    h('td', { text: attempt.model ?? '—' }),
    h('td', {}, h('span', { class: `status ${statusClass(attempt.status)}`, text: attempt.status })),
    h('td', { class: 'number', text: format.ms(attempt.latencyMs) }),
    h('td', {}, attempt.errorCode ? h('code', { text: attempt.errorCode }) : '—'),
    tokens,
    h('td', {}, answered ? h('span', { class: 'answered-mark', text: answered }) : null));
}

/** One request: timings, tokens, caller, guardrail verdicts and the redacted bodies. */
export async function renderLogDetail(view, id) {
  replace(view, h('p', { class: 'muted', text: 'Loading…' }));
  const record = await api.get(`/admin/logs/${encodeURIComponent(id)}`);
  const metadata = Object.entries(record.metadata ?? {});
  const guardrails = record.guardrails ?? [];
  replace(
    view,
    h('p', {}, h('a', { href: lastListHash, text: '← Back to logs' })),
    h('h1', {}, `${record.method ?? ''} ${record.path ?? ''} `, h('span', { class: `status ${statusClass(record.status)}`, text: record.status })),
    h(
      'div',
      { class: 'detail-grid' },
      h('section', { 'aria-labelledby': 'd-request' }, h('h2', { id: 'd-request', text: 'Request' }), pairs([
        ['Time', format.time(record.time)],
        ['Trace id', record.trace_id],
        ['Provider', record.provider],
        ['Model', record.model],
        ['Operation', record.operation],
        ['Caller', record.key_name ?? record.key_id ?? record.caller_type],
        ['Streaming', record.streaming ? 'yes' : 'no'],
        ['Outcome', record.outcome],
        ...(record.error_type ? [['Error', `${record.error_type}${record.error_code ? ` (${record.error_code})` : ''}: ${record.error_message ?? ''}`]] : []),
      ])),
      h('section', { 'aria-labelledby': 'd-timings' }, h('h2', { id: 'd-timings', text: 'Timings' }), pairs([
        ['Total', format.ms(record.latency_ms)],
        ['Gateway', format.ms(record.gateway_ms)],
        ['Upstream', format.ms(record.upstream_ms)],
        ['Time to first token', format.ms(record.ttft_ms)],
      ])),
      h('section', { 'aria-labelledby': 'd-usage' }, h('h2', { id: 'd-usage', text: 'Tokens and cost' }), pairs([
        ['Prompt', format.count(record.prompt_tokens)],
        ['Completion', format.count(record.completion_tokens)],
        ['Cached', format.count(record.cached_tokens)],
        ['Reasoning', format.count(record.reasoning_tokens)],
        ['Total', format.count(record.total_tokens)],
        ['Cost', format.usd(record.cost_usd)],
        ['Cache', record.cache_status ?? '—'],
        ['Saved by the cache', format.usd(record.cache_saved_usd)],
      ])),
      h('section', { 'aria-labelledby': 'd-meta' }, h('h2', { id: 'd-meta', text: 'Metadata' }), metadata.length ? pairs(metadata.map(([key, value]) => [key, String(value)])) : h('p', { class: 'muted', text: 'None.' })),
    ),
    routingSection(record.routing),
    h('section', { 'aria-labelledby': 'd-guardrails' }, h('h2', { id: 'd-guardrails', text: 'Guardrail verdicts' }),
      guardrails.length
        ? h('table', { class: 'guardrails' },
            h('thead', {}, h('tr', {}, ['Guardrail', 'Side', 'Verdict', 'Time'].map((name) => h('th', { scope: 'col', text: name })))),
            h('tbody', {}, guardrails.map((verdict) => h('tr', {}, h('td', { text: verdict.guardrail }), h('td', { text: verdict.side }), h('td', { text: verdict.action }), h('td', { class: 'number', text: format.ms(verdict.ms) })))))
        : h('p', { class: 'muted', text: 'No guardrail ran.' })),
    h('section', { 'aria-labelledby': 'd-request-body', class: 'body-section', id: 'request-body' }, h('h2', { id: 'd-request-body', text: 'Request body' }), prettyBody(record.request_body)),
    h('section', { 'aria-labelledby': 'd-response-body', class: 'body-section', id: 'response-body' }, h('h2', { id: 'd-response-body', text: 'Response body' }), prettyBody(record.response_body)),
  );
}
