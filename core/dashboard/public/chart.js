import { format, h, s } from './dom.js';

export const PALETTE = ['#1f6fd1', '#d1491f', '#2a9d4b', '#8a3fd1', '#c28a00', '#0f8f8f', '#c2185b', '#5d6d7e'];

const WIDTH = 560;
const HEIGHT = 200;
const MARGIN = { top: 12, right: 12, bottom: 28 };
/** Width of a character of the axis labels (10px system font; digits and `$,.%` are narrower). */
const CHAR_WIDTH = 6.2;

/** Time of a point: ISO string, or seconds / milliseconds since the epoch. */
export const pointTime = (t) => (typeof t === 'number' ? (t < 1e12 ? t * 1000 : t) : Date.parse(t));

function ticks(max, count) {
  if (max <= 0) return [0];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough) ?? rough;
  const values = [];
  for (let value = 0; ; value += step) {
    values.push(Math.round(value * 1e9) / 1e9);
    if (value >= max) break;
  }
  return values;
}

/**
 * A line chart as SVG: one line per series through its finite values, and a circle per marked point
 * (a bucket with traffic) carrying `data-t`, `data-value` and `data-group` (so the drawn data can be
 * checked) and a `<title>` for hover. `series`: `[{ group, label?, points: [{ time, value, marked }] }]`;
 * `xDomain`: `[startMs, endMs]`.
 */
export function lineChart({ title, metric, series, xDomain, formatValue, formatTime }) {
  const allValues = series.flatMap((line) => line.points.map((point) => point.value)).filter((value) => typeof value === 'number' && Number.isFinite(value));
  const yTicks = ticks(Math.max(0, ...allValues), 4);
  const yMax = yTicks[yTicks.length - 1] || 1;
  const yLabels = yTicks.map((value) => formatValue(value));
  // The value axis is as wide as its longest label, so no label is cut off at the left edge.
  const left = Math.max(32, Math.ceil(10 + CHAR_WIDTH * Math.max(...yLabels.map((label) => label.length))));
  const [x0, x1] = xDomain;
  const innerWidth = WIDTH - left - MARGIN.right;
  const innerHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (time) => left + ((time - x0) / Math.max(1, x1 - x0)) * innerWidth;
  const y = (value) => MARGIN.top + innerHeight - (value / yMax) * innerHeight;
  const xTicks = Array.from({ length: 5 }, (_, index) => x0 + ((x1 - x0) * index) / 4);

  const svg = s(
    'svg',
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'chart', role: 'img', 'aria-label': `${title} over time`, data: { metric } },
    yTicks.map((value, index) => [
      s('line', { x1: left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value), class: 'grid' }),
      s('text', { x: left - 6, y: y(value) + 4, 'text-anchor': 'end', class: 'tick y-tick', text: yLabels[index] }),
    ]),
    // The first time label starts at the axis and the last one ends at the edge: neither is cut off.
    xTicks.map((time, index) =>
      s('text', { x: x(time), y: HEIGHT - 8, 'text-anchor': index === 0 ? 'start' : index === xTicks.length - 1 ? 'end' : 'middle', class: 'tick x-tick', text: formatTime(time) }),
    ),
    series.map((line, index) => {
      const color = PALETTE[index % PALETTE.length];
      const points = line.points.filter((point) => typeof point.value === 'number' && Number.isFinite(point.value)).sort((a, b) => a.time - b.time);
      return s(
        'g',
        { class: 'series', data: { group: line.group } },
        points.length > 1 ? s('polyline', { points: points.map((point) => `${x(point.time)},${y(point.value)}`).join(' '), fill: 'none', stroke: color, 'stroke-width': 2 }) : null,
        points.filter((point) => point.marked !== false).map((point) =>
          s(
            'circle',
            { cx: x(point.time), cy: y(point.value), r: 3, fill: color, class: 'point', data: { t: new Date(point.time).toISOString(), value: point.value, group: line.group } },
            s('title', { text: `${line.label ?? line.group}: ${formatValue(point.value)} at ${format.time(point.time)}` }),
          ),
        ),
      );
    }),
  );
  return h('figure', { class: 'chart-card' }, h('figcaption', { text: title }), svg);
}

/** The colour key shared by the charts; `groups` are names, or `{ group, label }`. */
export function legend(groups) {
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Series' },
    groups.map((group, index) =>
      h('li', {}, s('svg', { width: 12, height: 12, 'aria-hidden': 'true' }, s('rect', { width: 12, height: 12, rx: 2, fill: PALETTE[index % PALETTE.length] })), typeof group === 'string' ? group : (group.label ?? group.group)),
    ),
  );
}
