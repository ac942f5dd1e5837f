import { api } from './api.js';
import { lineChart, legend, pointTime } from './chart.js';
import { field, format, h, replace, select } from './dom.js';
import { holdsAnywhere, teamList } from './session.js';

const RANGES = [['hour', 'Last hour', 3600e3], ['day', 'Last day', 86400e3], ['week', 'Last week', 7 * 86400e3], ['custom', 'Custom…', 0]];
const GROUPS = [['none', 'Everything'], ['team', 'Team'], ['user_id', 'User or service account'], ['key', 'Key'], ['user', 'End user'], ['metadata', 'Tag (metadata key)'], ['provider', 'Provider'], ['model', 'Model']];
const METRICS = [
  ['requests', 'Requests', format.count],
  ['errors', 'Errors', format.count],
  ['p50_ms', 'Latency p50', (value) => format.ms(value)],
  ['p95_ms', 'Latency p95', (value) => format.ms(value)],
  ['tokens', 'Tokens (prompt + completion)', format.count],
  ['cost_usd', 'Cost', format.usd],
  ['cache_hit_rate', 'Cache hit rate', format.percent],
  ['cache_saved_usd', 'Saved by the cache', format.usd],
];

// A bucket without requests has no latency (a gap, not 0 ms); its other measures are real zeros.
const valueOf = (point, metric) => {
  if (metric === 'tokens') return (point.prompt_tokens ?? 0) + (point.completion_tokens ?? 0);
  // The hit rate of the cache lookups (hits and misses) in the bucket; a gap when there were none.
  if (metric === 'cache_hit_rate') return hitRate(point.cache_hits, point.cache_misses);
  if ((metric === 'p50_ms' || metric === 'p95_ms') && !point.requests) return null;
  return point[metric];
};

const hitRate = (hits = 0, misses = 0) => (hits + misses > 0 ? hits / (hits + misses) : null);

/** What a group is called: a key's name (its id when it has none), "Account key", or the value itself. */
const groupLabel = (line) => line.label ?? (line.group === 'account' ? 'Account key' : line.group);

/**
 * Names for the groups the API answers by id: teams (the session's list), users' emails and service
 * accounts' names when the caller may read them (a group without a name keeps its id).
 */
async function ownerNames(groupBy) {
  if (groupBy === 'team') return new Map([['organization', 'Organization (shared keys)'], ...teamList().map((team) => [team.id, team.name])]);
  if (groupBy !== 'user_id') return new Map();
  const list = (permission, path) => (holdsAnywhere(permission) ? api.get(path).then((answer) => answer.data, () => []) : Promise.resolve([]));
  const [users, accounts] = await Promise.all([list('users.read', '/admin/users'), list('service_accounts.read', '/admin/service-accounts')]);
  return new Map([['(none)', 'No owner'], ...users.map((user) => [user.id, user.email]), ...accounts.map((account) => [account.id, `${account.name} (service account)`])]);
}

/** The API's rows with the names `ownerNames` found as their labels. */
const named = (rows, names) => rows.map((row) => (row.label === undefined && names.has(row.group) ? { ...row, label: names.get(row.group) } : row));

/** The response cache over the period: hit rate and what the hits saved (`usage.cache`). */
function cacheSummary(cache) {
  if (!cache || cache.hits + cache.misses === 0) return h('p', { class: 'muted cache-summary', text: 'Response cache: no cacheable requests in this period.' });
  return h(
    'p',
    { class: 'cache-summary', data: { hits: String(cache.hits), misses: String(cache.misses), saved: String(cache.saved_usd) } },
    `Response cache: ${format.percent(cache.hit_rate)} hit rate (${format.count(cache.hits)} of ${format.count(cache.hits + cache.misses)} lookups), ${format.usd(cache.saved_usd)} saved.`,
  );
}

/** `2026-11-20T10:00` in the browser's time zone, for a datetime-local field. */
const localInput = (time) => {
  if (!time) return '';
  const date = new Date(time);
  if (!Number.isFinite(date.getTime())) return '';
  const pad = (value) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
};

/** The period and split the URL asks for. */
function readQuery(query) {
  const custom = query.get('from') && query.get('to');
  const range = custom ? RANGES[3] : (RANGES.slice(0, 3).find(([id]) => id === query.get('range')) ?? RANGES[1]);
  const groupBy = query.get('group_by') ?? 'none';
  const metadataKey = groupBy.startsWith('metadata.') ? groupBy.slice('metadata.'.length) : '';
  const group = metadataKey ? 'metadata' : (GROUPS.find(([id]) => id === groupBy && id !== 'metadata')?.[0] ?? 'none');
  return { range, from: custom ? query.get('from') : undefined, to: custom ? query.get('to') : undefined, group, metadataKey, groupBy: metadataKey ? `metadata.${metadataKey}` : group };
}

/**
 * Usage: the headline figures against the previous period, the top spenders, one chart per measure
 * with a line per group, and the totals per group.
 */
export async function renderUsage(view, query) {
  const state = readQuery(query);
  const rangeSelect = select('range', RANGES.map(([id, label]) => [id, label]), state.range[0]);
  const fromInput = h('input', { type: 'datetime-local', name: 'from', step: '1', value: localInput(state.from) });
  const toInput = h('input', { type: 'datetime-local', name: 'to', step: '1', value: localInput(state.to) });
  const groupSelect = select('group_by', GROUPS, state.group);
  const metadataInput = h('input', { type: 'text', name: 'metadata_key', value: state.metadataKey, autocomplete: 'off', spellcheck: 'false', maxlength: '128' });
  const fromField = field('From', fromInput);
  const toField = field('To', toInput);
  const metadataField = field('Metadata key', metadataInput, 'A key of x-gateway-metadata');
  const toggle = () => {
    fromField.hidden = toField.hidden = rangeSelect.value !== 'custom';
    metadataField.hidden = groupSelect.value !== 'metadata';
  };
  rangeSelect.addEventListener('change', toggle);
  groupSelect.addEventListener('change', toggle);
  toggle();
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Usage options' },
    field('Period', rangeSelect),
    fromField,
    toField,
    field('Split by', groupSelect),
    metadataField,
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Show' })),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    if (rangeSelect.value === 'custom') {
      const from = new Date(fromInput.value);
      const to = new Date(toInput.value);
      if (!fromInput.value || !toInput.value || !(to > from)) {
        (fromInput.value ? toInput : fromInput).setCustomValidity('Give a start before the end.');
        form.reportValidity();
        return;
      }
      params.set('from', from.toISOString());
      params.set('to', to.toISOString());
    } else params.set('range', rangeSelect.value);
    if (groupSelect.value === 'metadata') {
      if (!metadataInput.value.trim()) {
        metadataInput.setCustomValidity('Name the metadata key to split by.');
        form.reportValidity();
        return;
      }
      params.set('group_by', `metadata.${metadataInput.value.trim()}`);
    } else params.set('group_by', groupSelect.value);
    location.hash = `#/usage?${params}`;
  });
  for (const input of [fromInput, toInput, metadataInput]) input.addEventListener('input', () => input.setCustomValidity(''));
  const body = h('div', {}, h('p', { class: 'muted', text: 'Loading…' }));
  replace(view, h('h1', { text: 'Usage' }), form, body);

  const period = state.from ? { from: new Date(state.from).toISOString(), to: new Date(state.to).toISOString() } : { range: state.range[0] };
  const [usage, summary, names] = await Promise.all([api.get('/admin/usage', { ...period, group_by: state.groupBy }), api.get('/admin/usage/summary', period), ownerNames(state.groupBy)]);
  const series = named(usage?.series ?? [], names).map((line) => ({ group: line.group ?? 'all', label: groupLabel(line), points: (line.points ?? []).map((point) => ({ ...point, time: pointTime(point.t) })) }));
  const bucketMs = (usage?.bucket_seconds ?? 60) * 1000;
  const start = Date.parse(usage.from);
  const end = Date.parse(usage.to);
  const formatTime = end - start > 2 * 86400e3 ? format.date : format.clock;
  const hasPoints = series.some((line) => line.points.some((point) => point.requests > 0));
  const bucketText = bucketMs >= 3600e3 ? `${bucketMs / 3600e3} hour${bucketMs === 3600e3 ? '' : 's'}` : `${bucketMs / 60e3} minute${bucketMs === 60e3 ? '' : 's'}`;
  replace(
    body,
    headline(summary, state.range),
    topLists(summary?.top),
    h('h2', { text: 'Over time' }),
    h('p', { class: 'muted', text: hasPoints ? `Buckets of ${bucketText}; times in ${format.zone()}.` : 'No requests in this period.' }),
    cacheSummary(usage?.cache),
    legend(series.map((line) => ({ group: line.group, label: line.label }))),
    h(
      'div',
      { class: 'charts' },
      METRICS.map(([metric, title, formatValue]) =>
        lineChart({
          title,
          metric,
          xDomain: [Math.min(start, ...series.flatMap((line) => line.points.map((point) => point.time))), end],
          formatValue,
          formatTime,
          series: series.map((line) => ({
            group: line.group,
            label: line.label,
            points: line.points.map((point) => ({ time: point.time, value: valueOf(point, metric), marked: metric === 'cache_hit_rate' ? valueOf(point, metric) !== null : point.requests > 0 })),
          })),
        }),
      ),
    ),
    totalsTable(named(usage?.totals ?? [], names), GROUPS.find(([id]) => id === state.group)?.[1] ?? 'Group', state.metadataKey),
  );
}

/** The headline figures: each against the previous period, with the change in words and an arrow. */
function headline(summary, range) {
  if (!summary) return null;
  const { current, previous } = summary;
  const before = range[0] === 'custom' ? 'previous period' : `previous ${range[0]}`;
  const cards = [
    ['cost_usd', 'Spend', format.usd, 'relative', 'neutral'],
    ['requests', 'Requests', format.count, 'relative', 'neutral'],
    ['error_rate', 'Error rate', format.percent, 'points', 'lower'],
    ['p95_ms', 'Latency p95', format.ms, 'relative', 'lower'],
    ['cache_hit_rate', 'Cache hit rate', format.percent, 'points', 'higher'],
    ['cache_saved_usd', 'Saved by the cache', format.usd, 'relative', 'higher'],
  ];
  return h(
    'section',
    { class: 'headline', 'aria-labelledby': 'headline-title' },
    h('h2', { id: 'headline-title', text: 'Headline figures' }),
    h('p', { class: 'muted period', text: `${format.time(current.from)} – ${format.time(current.to)}, against the ${before}: ${format.time(previous.from)} – ${format.time(previous.to)}.` }),
    h(
      'ul',
      { class: 'figures' },
      cards.map(([name, title, formatValue, kind, better]) => {
        const change = delta(current[name], previous[name], kind);
        // Colour repeats what the words say (better or worse); spend and requests are neither.
        const tone = better === 'neutral' || (change.direction !== 'up' && change.direction !== 'down') ? 'neutral' : (change.direction === 'up') === (better === 'higher') ? 'good' : 'bad';
        return h(
          'li',
          { class: 'figure', data: { metric: name, value: current[name] ?? '', previous: previous[name] ?? '', direction: change.direction } },
          h('span', { class: 'figure-title', text: title }),
          h('strong', { class: 'figure-value', text: formatValue(current[name]) }),
          h('span', { class: `figure-delta ${tone}`, text: `${change.text} vs ${before} (${formatValue(previous[name])})` }),
        );
      }),
    ),
  );
}

/** The change from `previous` to `current`: relative (percent) or in percentage points (rates). */
function delta(current, previous, kind) {
  const known = (value) => value !== null && value !== undefined;
  if (!known(current) || !known(previous)) return { direction: 'none', text: '– no comparison' };
  const difference = current - previous;
  if (Math.abs(difference) < 1e-12) return { direction: 'same', text: '= no change' };
  const direction = difference > 0 ? 'up' : 'down';
  const arrow = direction === 'up' ? '▲ up' : '▼ down';
  if (kind === 'points') return { direction, text: `${arrow} ${Math.round(Math.abs(difference) * 1000) / 10} points` };
  if (previous === 0) return { direction: 'new', text: '▲ up from nothing' };
  return { direction, text: `${arrow} ${Math.round((Math.abs(difference) / Math.abs(previous)) * 1000) / 10}%` };
}

/** The 10 keys, end users and models with the most spend in the period. */
function topLists(top) {
  if (!top) return null;
  const list = (title, rows, name) =>
    h(
      'section',
      { class: 'top-list', data: { list: name }, 'aria-labelledby': `top-${name}` },
      h('h3', { id: `top-${name}`, text: title }),
      rows.length === 0
        ? h('p', { class: 'muted', text: 'None in this period.' })
        : h(
            'ol',
            {},
            rows.map((row) =>
              h(
                'li',
                { data: { group: row.group, cost: row.cost_usd } },
                h('span', { class: 'top-name', title: row.label ? row.group : undefined, text: groupLabel(row) }),
                h('span', { class: 'top-figure', text: `${format.usd(row.cost_usd)} · ${format.count(row.requests)} request${row.requests === 1 ? '' : 's'}` }),
              ),
            ),
          ),
    );
  return h(
    'div',
    { class: 'top-lists' },
    list('Top keys by spend', top.keys ?? [], 'keys'),
    list('Top end users by spend', top.users ?? [], 'users'),
    list('Top models by spend', top.models ?? [], 'models'),
  );
}

function totalsTable(totals, groupTitle, metadataKey) {
  const columns = ['Requests', 'Errors', 'Error rate', 'Latency p50', 'Latency p95', 'Prompt tokens', 'Completion tokens', 'Cost', 'Cache hit rate', 'Saved by the cache'];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'totals' },
      h('caption', { text: 'Totals for the period' }),
      h('thead', {}, h('tr', {}, [metadataKey ? `Metadata: ${metadataKey}` : groupTitle === 'Everything' ? 'Group' : groupTitle, ...columns].map((name) => h('th', { scope: 'col', text: name })))),
      h(
        'tbody',
        {},
        totals.map((row) =>
          h(
            'tr',
            { data: { group: row.group } },
            h('th', { scope: 'row', title: row.label ? row.group : undefined, text: groupLabel(row) }),
            h('td', { class: 'number requests', text: format.count(row.requests) }),
            h('td', { class: 'number errors', text: format.count(row.errors) }),
            h('td', { class: 'number error-rate', text: format.percent(row.error_rate) }),
            h('td', { class: 'number p50', text: format.ms(row.p50_ms) }),
            h('td', { class: 'number p95', text: format.ms(row.p95_ms) }),
            h('td', { class: 'number', text: format.count(row.prompt_tokens) }),
            h('td', { class: 'number', text: format.count(row.completion_tokens) }),
            h('td', { class: 'number cost', text: format.usd(row.cost_usd) }),
            h('td', { class: 'number cache-hit-rate', text: format.percent(row.cache_hit_rate) }),
            h('td', { class: 'number cache-saved', text: format.usd(row.cache_saved_usd) }),
          ),
        ),
      ),
    ),
  );
}
