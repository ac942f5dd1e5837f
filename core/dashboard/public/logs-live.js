// The logs list's export links and its live tail (server-sent events from /admin/logs/tail).
import { linkUrl } from './api.js';
import { h } from './dom.js';
import { holdsAnywhere } from './session.js';

/** Whether the user turned Live on; kept across filter changes and navigation until turned off. */
let liveWanted = false;
let source = null;

function closeSource() {
  source?.close();
  source = null;
}

// Leaving the list (or changing its filters) closes the tail; the list re-opens it with its new filters.
window.addEventListener('hashchange', closeSource);

/**
 * Links that download every row the filters select, as CSV or JSON lines, with the stored bodies
 * when "with bodies" is ticked. The server streams them page by page. A link cannot send the CSRF
 * header, so the token is added to the address only when the link is followed (it is not left in
 * the page).
 */
export function exportLinks(query) {
  const withBodies = h('input', { type: 'checkbox', class: 'export-bodies' });
  const address = (format, token) => linkUrl('/admin/logs/export', { ...query, format, bodies: withBodies.checked ? 'true' : undefined }, { token });
  const links = [];
  const link = (format, label) => {
    const anchor = h('a', { class: 'button-link export-link', href: address(format, false), download: '', data: { format }, text: label });
    // The token goes only into a link made for this click and dropped at once: the page's link never
    // carries it (restoring it after a timer raced whoever read the link meanwhile).
    anchor.addEventListener('click', (event) => {
      event.preventDefault();
      const once = h('a', { href: address(format, true), download: '', hidden: true });
      document.body.append(once);
      once.click();
      once.remove();
    });
    links.push([anchor, format]);
    return anchor;
  };
  withBodies.addEventListener('change', () => {
    for (const [anchor, format] of links) anchor.href = address(format, false);
  });
  return h('div', { class: 'export', role: 'group', 'aria-label': 'Export the filtered requests' },
    h('span', { class: 'muted', text: 'Export all matching:' }),
    // Exporting bodies needs logs.bodies (403 without it).
    holdsAnywhere('logs.bodies') ? h('label', { class: 'inline-check', title: 'Add the stored (redacted) request and response bodies' }, withBodies, ' with bodies') : null,
    link('csv', 'Export CSV'), link('jsonl', 'Export JSONL'));
}

/**
 * The Live toggle: while pressed, requests logged from now on that match the filters are added at
 * the top of the table as they arrive (`onRow`). `blocked` explains why it cannot run here.
 */
export function liveToggle({ query, blocked, onRow }) {
  closeSource();
  const button = h('button', { type: 'button', class: 'secondary live-toggle', 'aria-pressed': 'false', text: 'Live' });
  const state = h('span', { class: 'live-state muted', role: 'status', 'aria-live': 'polite' });
  let received = 0;

  const show = (on, message) => {
    button.setAttribute('aria-pressed', on ? 'true' : 'false');
    button.classList.toggle('on', on);
    state.textContent = message;
  };
  const start = () => {
    const { to: _to, ...tailQuery } = query;
    closeSource();
    received = 0;
    const events = new EventSource(linkUrl('/admin/logs/tail', tailQuery));
    source = events;
    show(true, 'Live: connecting…');
    events.addEventListener('ready', () => show(true, 'Live: waiting for new requests…'));
    events.addEventListener('log', (event) => {
      if (!button.isConnected) return closeSource();
      received++;
      onRow(JSON.parse(event.data));
      show(true, `Live: ${received} new request${received === 1 ? '' : 's'}.`);
    });
    events.addEventListener('store_error', () => show(true, 'Live: the log store did not answer; retrying…'));
    events.addEventListener('error', () => {
      if (source !== events) return;
      if (events.readyState === EventSource.CLOSED) {
        closeSource();
        show(false, 'Live stopped: the tail was refused (is the session still open?).');
      } else show(true, 'Live: reconnecting…');
    });
  };

  button.addEventListener('click', () => {
    liveWanted = !liveWanted;
    if (liveWanted) start();
    else {
      closeSource();
      show(false, received ? `Live off (${received} new request${received === 1 ? '' : 's'} shown).` : 'Live off.');
    }
  });
  if (blocked) {
    button.disabled = true;
    button.title = blocked;
    state.textContent = liveWanted ? blocked : '';
  } else if (liveWanted) start();
  return h('div', { class: 'live' }, button, state);
}
