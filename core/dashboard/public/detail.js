import { api } from './api.js';
import { conversationOf } from './conversation.js';
import { format, h, replace } from './dom.js';
import { lastListHash, statusClass } from './logs.js';

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

const SKIP_REASONS = { breaker_open: 'breaker open', retry_budget: 'retry budget spent', attempt_cap: 'attempt cap reached' };

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
    routing.routing_ms ? h('p', { class: 'muted routing-time', text: `Routing time (failed attempts and the waits between them): ${format.ms(routing.routing_ms)}` }) : null,
    routing.skipped?.length ? h('p', { class: 'routing-skipped', text: `Passed over: ${routing.skipped.map((skip) => `${skip.target} (${SKIP_REASONS[skip.reason] ?? skip.reason})`).join(', ')}` }) : null,
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
    h('td', { class: 'attempt-error' }, attempt.errorCode ? h('code', { text: attempt.errorCode }) : attempt.message ? null : '—', attempt.message ? h('div', { class: 'muted', text: attempt.message }) : null),
    tokens,
    h('td', {}, answered ? h('span', { class: 'answered-mark', text: answered }) : null));
}

const CACHE_STATUSES = {
  HIT: 'served from the cache: an exact match of a stored answer',
  'SEMANTIC-HIT': 'served from the cache: a stored answer to a similar request',
  MISS: 'looked up, not found: the provider answered and the answer was stored',
  BYPASS: 'the cache was skipped (no-store, or a request it cannot replay)',
  REFRESH: 'not looked up: the provider’s new answer replaced the stored one',
};

/** The response cache's part: status in words, and what a hit saved. */
function cacheSection(record) {
  const status = record.cache_status;
  const hit = status === 'HIT' || status === 'SEMANTIC-HIT';
  const saved = record.cache_saved_usd;
  const savedKnown = saved !== null && saved !== undefined;
  return h('section', { 'aria-labelledby': 'd-cache', id: 'cache' }, h('h2', { id: 'd-cache', text: 'Response cache' }),
    status
      ? h('dl', { class: 'pairs' },
          h('dt', { text: 'Cache' }),
          h('dd', { data: { cacheStatus: status } }, h('span', { class: `cache-badge ${hit ? 'cache-hit' : 'cache-other'}`, text: status }), CACHE_STATUSES[status] ? ` ${CACHE_STATUSES[status]}` : null),
          hit || savedKnown
            ? [h('dt', { text: 'Saved by the cache' }), h('dd', { class: 'cache-saved', data: { usd: savedKnown ? saved : undefined }, text: savedKnown ? format.usd(saved) : 'unknown (no price for the stored answer)' })]
            : null)
      : h('p', { class: 'muted', text: 'The response cache did not apply to this request.' }));
}

/** Request fields a protocol translation left out because the provider cannot take them. */
function droppedSection(fields) {
  if (!Array.isArray(fields) || fields.length === 0) return null;
  return h('section', { 'aria-labelledby': 'd-dropped', id: 'dropped-fields' },
    h('h2', { id: 'd-dropped', text: 'Dropped fields' }),
    h('p', { class: 'muted', text: 'Fields of the request the provider cannot take, left out when the request was translated to its protocol:' }),
    h('ul', { class: 'chips' }, fields.map((name) => h('li', {}, h('code', { class: 'chip', text: name })))));
}

/** What a verdict did beyond its action: a denial's reason, a transform's counts, a failure and its fail mode, window checks, reused verdicts. */
function verdictDetail(verdict) {
  const notes = [];
  if (verdict.reason) notes.push(verdict.reason);
  if (verdict.changes && typeof verdict.changes === 'object') notes.push(Object.entries(verdict.changes).map(([kind, count]) => `${kind} × ${count}`).join(', '));
  if (verdict.failure) {
    const decided = verdict.onError === 'fail-open' ? 'fail-open let it through' : verdict.onError === 'fail-closed' ? 'fail-closed denied it' : 'its fail mode decided';
    notes.push(`the guardrail ${verdict.failure === 'timeout' ? 'timed out' : 'failed'}; ${decided}`);
  }
  if (verdict.checks) notes.push(`${verdict.checks} window checks`);
  if (verdict.cached) notes.push(`${verdict.cached} reused for identical text`);
  return notes.join(' · ') || '—';
}

function guardrailSection(guardrails) {
  return h('section', { 'aria-labelledby': 'd-guardrails', id: 'guardrails' }, h('h2', { id: 'd-guardrails', text: 'Guardrail verdicts' }),
    guardrails.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'guardrails' },
          h('thead', {}, h('tr', {}, ['Guardrail', 'Side', 'Verdict', 'Detail', 'Time'].map((name) => h('th', { scope: 'col', text: name })))),
          h('tbody', {}, guardrails.map((verdict) => h('tr', { data: { guardrail: verdict.guardrail, action: verdict.action } },
            h('th', { scope: 'row', text: verdict.guardrail || '(unnamed)' }),
            h('td', { text: verdict.side }),
            h('td', {}, h('span', { class: `verdict verdict-${verdict.action}`, text: verdict.action })),
            h('td', { text: verdictDetail(verdict) }),
            h('td', { class: 'number', text: format.ms(verdict.ms) }))))))
      : h('p', { class: 'muted', text: 'No guardrail ran.' }));
}

const SHAPES = {
  chat: 'Chat Completions',
  responses: 'Responses API: input and output items',
  messages: 'Messages API: content blocks',
  completion: 'Text completion',
  embed: 'Embeddings',
  image: 'Images',
};

/** One part of a turn. */
function partView(part, index) {
  switch (part.type) {
    case 'text':
      return h('div', { class: `part-text${part.refusal ? ' refusal' : ''}`, text: part.refusal ? `Refusal: ${part.text}` : part.text || '(empty)' });
    case 'reasoning':
      return h('details', { class: 'reasoning', open: true }, h('summary', { text: 'Reasoning' }), h('div', { class: 'part-text', text: part.text }));
    case 'tool_call':
      return h('div', { class: 'tool-call', data: { tool: part.name } },
        h('div', { class: 'part-head' }, 'Tool call ', h('strong', { class: 'tool-name', text: part.name }), part.id ? h('code', { class: 'call-id', text: part.id }) : null),
        part.arguments ? h('pre', { class: 'args', tabindex: '0' }, h('code', { text: part.arguments })) : null);
    case 'tool_result':
      return h('div', { class: `tool-result${part.error ? ' is-error' : ''}` },
        h('div', { class: 'part-head' }, part.error ? 'Tool error ' : 'Tool result ', part.name ? h('strong', { class: 'tool-name', text: part.name }) : null, part.id ? h('code', { class: 'call-id', text: part.id }) : null),
        h('pre', { class: 'args', tabindex: '0' }, h('code', { text: part.text || '(empty)' })),
        (part.images ?? []).map((image, at) => partView(image, at)));
    case 'image':
      return h('img', { class: 'thumb', src: part.src, alt: `Image ${index + 1}`, loading: 'lazy' });
    case 'link':
      return h('span', { class: 'chip chip-link', data: { kind: part.label } }, `${part.label}: `,
        h('a', { href: part.url, target: '_blank', rel: 'noopener noreferrer nofollow', title: 'External: not loaded by the dashboard', text: part.url.length > 80 ? `${part.url.slice(0, 77)}…` : part.url }));
    case 'vectors':
      return h('p', { class: 'vectors', data: { count: part.count, dimensions: part.dimensions } }, `${part.count} vector${part.count === 1 ? '' : 's'} of ${part.dimensions} dimensions `, h('span', { class: 'muted', text: '(the values are not shown)' }));
    default:
      return h('span', { class: 'chip', data: { kind: part.kind } }, h('span', { class: 'chip-kind', text: part.kind }), ` ${part.label === part.kind ? '' : part.label}`);
  }
}

function turnList(turns, label) {
  if (!turns) return null;
  if (turns.length === 0) return h('p', { class: 'muted', text: 'Nothing.' });
  return h('ol', { class: 'turns', 'aria-label': label }, turns.map((turn) =>
    h('li', { class: 'turn', data: { role: turn.role, item: turn.item } },
      h('div', { class: 'turn-head' },
        h('span', { class: 'role', text: turn.role }),
        turn.name ? h('span', { class: 'muted', text: turn.name }) : null,
        turn.item && turn.item !== 'message' ? h('code', { class: 'item-type', text: turn.item }) : null,
        turn.streamed ? h('span', { class: 'chip', text: 'streamed' }) : null,
        turn.finish ? h('span', { class: 'muted finish', text: `finish: ${turn.finish}` }) : null),
      h('div', { class: 'parts' }, turn.parts.map(partView)))));
}

/** The chat view: the request's turns and the answer's, in the shape of the API called. */
export function chatView(record) {
  const conversation = conversationOf(record);
  return h('div', { class: 'chat-view', data: { shape: conversation.shape ?? 'none' } },
    h('p', { class: 'muted shape', text: `${SHAPES[conversation.shape] ?? 'No chat view for this operation'} · ${record.method ?? ''} ${record.path ?? ''}` }),
    conversation.tools.length ? h('p', { class: 'tools-offered' }, 'Tools offered: ', conversation.tools.map((name, index) => [index ? ', ' : '', h('code', { text: name })])) : null,
    conversation.problems.map((problem) => h('p', { class: 'notice', text: problem })),
    conversation.request ? [h('h3', { text: 'Request' }), turnList(conversation.request, 'Request')] : null,
    conversation.answer ? [h('h3', { text: 'Answer' }), turnList(conversation.answer, 'Answer')] : null);
}

/**
 * Tabs (WAI-ARIA pattern): buttons in a tablist, the selected one in the tab order, arrow keys
 * and Home/End move between them; each panel is `hidden` unless selected.
 */
function tabs(label, entries) {
  const buttons = [];
  const panels = [];
  const select = (chosen, focus) => {
    entries.forEach((_, index) => {
      buttons[index].setAttribute('aria-selected', String(index === chosen));
      buttons[index].tabIndex = index === chosen ? 0 : -1;
      panels[index].hidden = index !== chosen;
    });
    if (focus) buttons[chosen].focus();
  };
  entries.forEach(([id, title, content], index) => {
    buttons.push(h('button', { type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': `panel-${id}`, class: 'tab', text: title }));
    panels.push(h('div', { role: 'tabpanel', id: `panel-${id}`, 'aria-labelledby': `tab-${id}`, class: 'tab-panel' }, content));
    buttons[index].addEventListener('click', () => select(index, false));
    buttons[index].addEventListener('keydown', (event) => {
      const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: entries.length - 1 };
      if (!(event.key in moves)) return;
      event.preventDefault();
      select((moves[event.key] + entries.length) % entries.length, true);
    });
  });
  select(0, false);
  return [h('div', { role: 'tablist', 'aria-label': label, class: 'tabs' }, buttons), panels];
}

/** One request: timings, tokens, caller, cache, routing, guardrail verdicts, and its bodies as a chat and as stored. */
export async function renderLogDetail(view, id) {
  replace(view, h('p', { class: 'muted', text: 'Loading…' }));
  const record = await api.get(`/admin/logs/${encodeURIComponent(id)}`);
  const metadata = Object.entries(record.metadata ?? {});
  const guardrails = record.guardrails ?? [];
  const bodiesLogged = Boolean(record.request_body || record.response_body);
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
      ])),
      cacheSection(record),
      h('section', { 'aria-labelledby': 'd-meta' }, h('h2', { id: 'd-meta', text: 'Metadata' }), metadata.length ? pairs(metadata.map(([key, value]) => [key, String(value)])) : h('p', { class: 'muted', text: 'None.' })),
    ),
    routingSection(record.routing),
    droppedSection(record.dropped_fields),
    guardrailSection(guardrails),
    h('section', { 'aria-labelledby': 'd-bodies', class: 'bodies' },
      h('h2', { id: 'd-bodies', text: 'Request and answer' }),
      bodiesLogged ? null : h('p', { class: 'muted', text: record.bodies_withheld
        ? 'The bodies are withheld: reading stored bodies needs the logs.bodies permission besides your role.'
        : 'Bodies were not logged for this request (body logging off for it, its key, or the operation).' }),
      tabs('Request and answer', [
        ['chat', 'Chat view', chatView(record)],
        ['raw', 'Raw JSON', [
          h('section', { 'aria-labelledby': 'd-request-body', class: 'body-section', id: 'request-body' }, h('h3', { id: 'd-request-body', text: 'Request body' }), prettyBody(record.request_body)),
          h('section', { 'aria-labelledby': 'd-response-body', class: 'body-section', id: 'response-body' }, h('h3', { id: 'd-response-body', text: 'Response body' }), prettyBody(record.response_body)),
        ]],
      ])),
  );
}
