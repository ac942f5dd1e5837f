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

export const format = {
  time: (value) => (value ? new Date(value).toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'medium' }) : '—'),
  ms: (value) => (value === null || value === undefined ? '—' : `${Math.round(value * 10) / 10} ms`),
  count: (value) => (value === null || value === undefined ? '—' : numberFormat.format(value)),
  usd: (value) => {
    if (value === null || value === undefined) return '—';
    const amount = Number(value);
    return `$${amount >= 1 || amount === 0 ? amount.toFixed(2) : amount >= 0.01 ? amount.toFixed(4) : amount.toFixed(6)}`;
  },
  /** A share from 0 to 1 as a percentage with one decimal. */
  percent: (value) => (value === null || value === undefined ? '—' : `${Math.round(Number(value) * 1000) / 10}%`),
};

/** Shows a short message in the live region (errors and confirmations). */
export function notify(message, kind = 'info') {
  const notice = document.getElementById('notice');
  replace(notice, message ? h('p', { class: `notice ${kind}`, text: message }) : null);
}
