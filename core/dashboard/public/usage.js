import { api } from './api.js';
import { lineChart, legend, pointTime } from './chart.js';
import { field, format, h, replace, select } from './dom.js';

const RANGES = [['hour', 'Last hour', 3600e3], ['day', 'Last day', 86400e3], ['week', 'Last week', 7 * 86400e3]];
const GROUPS = [['none', 'Everything'], ['provider', 'Provider'], ['model', 'Model'], ['key', 'Key']];
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

/** The response cache over the period: hit rate and what the hits saved (`usage.cache`). */
function cacheSummary(cache) {
  if (!cache || cache.hits + cache.misses === 0) return h('p', { class: 'muted cache-summary', text: 'Response cache: no cacheable requests in this period.' });
  return h(
    'p',
    { class: 'cache-summary', data: { hits: String(cache.hits), misses: String(cache.misses), saved: String(cache.saved_usd) } },
    `Response cache: ${format.percent(cache.hit_rate)} hit rate (${format.count(cache.hits)} of ${format.count(cache.hits + cache.misses)} lookups), ${format.usd(cache.saved_usd)} saved.`,
  );
}

/** Usage over time: one chart per measure, a line per group, and the totals as a table. */
export async function renderUsage(view, query) {
  const range = RANGES.find(([id]) => id === query.get('range')) ?? RANGES[1];
  const groupBy = GROUPS.find(([id]) => id === query.get('group_by'))?.[0] ?? 'none';
  const rangeSelect = select('range', RANGES.map(([id, label]) => [id, label]), range[0]);
  const groupSelect = select('group_by', GROUPS, groupBy);
  const form = h('form', { class: 'filters', 'aria-label': 'Usage options' }, field('Period', rangeSelect), field('Split by', groupSelect), h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Show' })));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/usage?range=${rangeSelect.value}&group_by=${groupSelect.value}`;
  });
  const body = h('div', {}, h('p', { class: 'muted', text: 'Loading…' }));
  replace(view, h('h1', { text: 'Usage' }), form, body);

  const usage = await api.get('/admin/usage', { range: range[0], group_by: groupBy });
  const series = (usage?.series ?? []).map((line) => ({ group: line.group ?? 'all', points: (line.points ?? []).map((point) => ({ ...point, time: pointTime(point.t) })) }));
  const bucketMs = (usage?.bucket_seconds ?? 60) * 1000;
  const end = Date.now();
  const start = end - range[2];
  const formatTime = range[0] === 'week'
    ? (time) => new Date(time).toLocaleDateString('en-GB', { day: '2-digit', month: 'short' })
    : range[0] === 'day'
      ? (time) => new Date(time).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })
      : (time) => new Date(time).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
  const hasPoints = series.some((line) => line.points.length > 0);
  replace(
    body,
    h('p', { class: 'muted', text: hasPoints ? `Buckets of ${bucketMs / 60e3} minute${bucketMs === 60e3 ? '' : 's'}.` : 'No requests in this period.' }),
    cacheSummary(usage?.cache),
    legend(series.map((line) => line.group)),
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
            points: line.points.map((point) => ({ time: point.time, value: valueOf(point, metric), marked: metric === 'cache_hit_rate' ? valueOf(point, metric) !== null : point.requests > 0 })),
          })),
        }),
      ),
    ),
    totalsTable(series),
  );
}

function totalsTable(series) {
  const sum = (points, name) => points.reduce((total, point) => total + (Number(point[name]) || 0), 0);
  return h(
    'table',
    { class: 'totals' },
    h('caption', { text: 'Totals for the period' }),
    h('thead', {}, h('tr', {}, ['Group', 'Requests', 'Errors', 'Prompt tokens', 'Completion tokens', 'Cost', 'Cache hit rate', 'Saved by the cache'].map((name) => h('th', { scope: 'col', text: name })))),
    h(
      'tbody',
      {},
      series.map((line) =>
        h(
          'tr',
          { data: { group: line.group } },
          h('th', { scope: 'row', text: line.group }),
          h('td', { class: 'number', text: format.count(sum(line.points, 'requests')) }),
          h('td', { class: 'number', text: format.count(sum(line.points, 'errors')) }),
          h('td', { class: 'number', text: format.count(sum(line.points, 'prompt_tokens')) }),
          h('td', { class: 'number', text: format.count(sum(line.points, 'completion_tokens')) }),
          h('td', { class: 'number', text: format.usd(sum(line.points, 'cost_usd')) }),
          h('td', { class: 'number cache-hit-rate', text: format.percent(hitRate(sum(line.points, 'cache_hits'), sum(line.points, 'cache_misses'))) }),
          h('td', { class: 'number cache-saved', text: format.usd(sum(line.points, 'cache_saved_usd')) }),
        ),
      ),
    ),
  );
}
