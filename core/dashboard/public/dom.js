// Every element is built with createElement and textContent: data is never parsed as HTML.

/**
 * Builds an element. `props`: `class`, `text`, `on` ({event: handler}), `data` ({key: value} for
 * data-* attributes), anything else becomes an attribute (false/null/undefined are skipped).
 */
export function h(tag, props = {}, ...children) {
  return build(document.createElement(tag), props, children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Same as {@link h} for SVG elements. */
export function s(tag, props = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

function build(element, props, children) {
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') element.textContent = String(value);
    else if (name === 'on') for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    else if (name === 'data') for (const [key, item] of Object.entries(value)) { if (item !== undefined && item !== null) element.dataset[key] = String(item); }
    else if (name === 'class') element.setAttribute('class', value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces a node's children. */
export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** A labelled form control; `control` is an input/select element. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id, text: label }), control, hint ? h('small', { text: hint }) : null);
}

/** `<select>` with `[value, label]` options. */
export function select(name, options, value) {
  return h('select', { name }, options.map(([optionValue, label]) => h('option', { value: optionValue, selected: optionValue === value, text: label })));
}

const numberFormat = new Intl.NumberFormat('en-US');
const dollars = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
// Three significant digits below $1: an embedding's $0.0000021 reads as that, not as $0.000000.
const cents = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });

/**
 * One date format for every view: the browser's locale and time zone, the month as a word (so a
 * date never reads day-first in one place and month-first in another), and the zone named.
 */
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
/** The logs list's shorter form of the same (one line in a dense row): the year only when it is not this one. */
const listTimeFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
const dateFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const clockFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/** A USD amount: 2 decimals from $1, 3 significant digits below (at least 2 decimals). */
function usd(value) {
  if (value === null || value === undefined || value === '') return '—';
  const amount = Number(value);
  if (!Number.isFinite(amount)) return '—';
  const size = Math.abs(amount);
  let text = size >= 1 || size === 0 ? dollars.format(size) : cents.format(size);
  const decimals = text.split('.')[1]?.length ?? 0;
  if (decimals < 2) text = `${text}${decimals === 0 ? '.' : ''}${'0'.repeat(2 - decimals)}`;
  return `${amount < 0 ? '-' : ''}$${text}`;
}

const present = (value) => value !== null && value !== undefined && value !== '';

export const format = {
  /** Date and time with the time zone, in the browser's locale. */
  time: (value) => (present(value) ? dateTimeFormat.format(new Date(value)) : '—'),
  /** Date and time for a row of the logs list: as `time`, without the year when it is the current one. */
  listTime: (value) => {
    if (!present(value)) return '—';
    const date = new Date(value);
    return (date.getFullYear() === new Date().getFullYear() ? listTimeFormat : dateTimeFormat).format(date);
  },
  /** Month and day (axis labels of long periods). */
  date: (value) => (present(value) ? dateFormat.format(new Date(value)) : '—'),
  /** Hours and minutes (axis labels of short periods). */
  clock: (value) => (present(value) ? clockFormat.format(new Date(value)) : '—'),
  /** The browser's time zone as the formats name it (e.g. `UTC`, `CET`). */
  zone: () => dateTimeFormat.formatToParts(new Date()).find((part) => part.type === 'timeZoneName')?.value ?? '',
  ms: (value) => (value === null || value === undefined ? '—' : `${Math.round(value * 10) / 10} ms`),
  count: (value) => (value === null || value === undefined ? '—' : numberFormat.format(value)),
  usd,
  /** Same as `usd`. */
  cost: usd,
  /** A share from 0 to 1 as a percentage with one decimal. */
  percent: (value) => (value === null || value === undefined ? '—' : `${Math.round(Number(value) * 1000) / 10}%`),
};

/** Shows a short message in the live region (errors and confirmations). */
export function notify(message, kind = 'info') {
  const notice = document.getElementById('notice');
  replace(notice, message ? h('p', { class: `notice ${kind}`, text: message }) : null);
}
