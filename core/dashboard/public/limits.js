// Limits at every level (docs/limits.md#levels): what a team, user, service account or the
// organization has used of each limit, a small form to set a team's or the organization's, and how
// an alert names its level.
import { field, format, h, replace, select } from './dom.js';

/** Exactly the periods `limits.budget_period` accepts; `total` is the API's default. */
export const BUDGET_PERIODS = [['total', 'In total'], ['day', 'Per UTC day'], ['week', 'Per UTC week (from Monday)'], ['month', 'Per UTC month']];
const PERIOD_WORDS = { total: 'in total', day: 'today (UTC)', week: 'this week (UTC)', month: 'this month (UTC)' };

/** The levels an alert or a refusal names, as the page writes them. */
export const LEVEL_LABELS = { organization: 'Organization', team: 'Team', user: 'User or service account', key: 'Key', end_user: 'End user', tag: 'Tag' };

/** The limit fields of every level, in the order the panel and the form show them. */
const NUMBER_FIELDS = [
  ['budget_usd', 'Budget (USD)', 'any'],
  ['soft_budget_usd', 'Soft budget (USD)', 'any', 'alerts only, refuses nothing'],
  ['requests_per_minute', 'Requests per minute', '1'],
  ['requests_per_day', 'Requests per day', '1'],
  ['tokens_per_minute', 'Tokens per minute', '1', 'input + output'],
  ['max_concurrent', 'Max concurrent requests', '1'],
];

/** One row of the panel: what it is, used of limit, a meter, when it frees up. */
function limitRow(name, label, used, limit, formatValue, resets, note) {
  const share = limit > 0 ? used / limit : used > 0 ? 1 : 0;
  const state = share >= 1 ? 'full' : share >= 0.8 ? 'warn' : 'ok';
  return h('tr', { data: { limit: name, used: String(used), limitValue: String(limit), state } },
    h('th', { scope: 'row', text: label }),
    h('td', { class: 'used', text: `${formatValue(used)} of ${formatValue(limit)}` }),
    h('td', { class: 'bar' }, h('meter', { min: '0', max: '1', low: '0.8', high: '0.9999', optimum: '0', value: String(Math.min(share, 1)), 'aria-label': `${label}: ${format.percent(share)} used` }),
      state === 'full' ? h('strong', { class: 'exhausted', text: ' reached' }) : null),
    h('td', { class: 'resets', text: resets }),
    h('td', { class: 'muted', text: note ?? '' }));
}

const resetText = (resetsAt) => (resetsAt ? `resets ${format.time(resetsAt)}` : 'never resets');

/**
 * A "Limits" panel from a `limits_usage` answer (`GET /admin/teams/{id}` and the others): each limit
 * set, used against limit, a bar, and when it resets; "No limits set." when there are none.
 */
export function limitsPanel(title, usage, { id = 'limits', subject } = {}) {
  const rows = [];
  if (usage?.budget) {
    const budget = usage.budget;
    rows.push(limitRow('budget', `Budget ${PERIOD_WORDS[budget.period] ?? budget.period}`, budget.spent_usd, budget.limit_usd, format.usd, resetText(budget.resets_at),
      budget.reserved_usd > 0 ? `${format.usd(budget.reserved_usd)} reserved by requests in flight` : ''));
  }
  if (usage?.soft_budget) {
    const soft = usage.soft_budget;
    rows.push(limitRow('soft_budget', `Soft budget ${PERIOD_WORDS[soft.period] ?? soft.period}`, soft.spent_usd, soft.limit_usd, format.usd, resetText(soft.resets_at), 'alerts only'));
  }
  if (usage?.requests_per_minute) rows.push(limitRow('requests_per_minute', 'Requests per minute', usage.requests_per_minute.used, usage.requests_per_minute.limit, format.count, 'sliding 60 s window'));
  if (usage?.requests_per_day) rows.push(limitRow('requests_per_day', 'Requests per day', usage.requests_per_day.used, usage.requests_per_day.limit, format.count, resetText(usage.requests_per_day.resets_at)));
  if (usage?.tokens_per_minute) rows.push(limitRow('tokens_per_minute', 'Tokens per minute', usage.tokens_per_minute.used, usage.tokens_per_minute.limit, format.count, 'sliding 60 s window', 'input + output'));
  if (usage?.max_concurrent) rows.push(limitRow('max_concurrent', 'Concurrent requests', usage.max_concurrent.in_flight, usage.max_concurrent.limit, format.count, 'in flight now'));
  const titleId = `${id}-title`;
  return h('section', { class: 'limits-panel', id, 'aria-labelledby': titleId, data: { subject } },
    h('h2', { id: titleId, text: title }),
    rows.length === 0
      ? h('p', { class: 'muted no-limits', text: 'No limits set.' })
      : h('div', { class: 'table-wrap' }, h('table', { class: 'limits' },
          h('thead', {}, h('tr', {}, ['Limit', 'Used', '', 'Resets', ''].map((name, index) => h('th', { scope: 'col', text: name, 'aria-label': index === 2 ? 'Share used' : index === 4 ? 'Note' : undefined })))),
          h('tbody', {}, rows))));
}

/** Short text of a limits object (a table cell): `$10.00/day · 60 req/min`; "none" without limits. */
export function limitsSummary(limits) {
  if (!limits) return 'none';
  const parts = [];
  if (limits.budget_usd !== undefined) parts.push(`${format.usd(limits.budget_usd)}${limits.budget_period && limits.budget_period !== 'total' ? `/${limits.budget_period}` : ' total'}`);
  if (limits.soft_budget_usd !== undefined) parts.push(`soft ${format.usd(limits.soft_budget_usd)}`);
  if (limits.requests_per_minute !== undefined) parts.push(`${format.count(limits.requests_per_minute)} req/min`);
  if (limits.requests_per_day !== undefined) parts.push(`${format.count(limits.requests_per_day)} req/day`);
  if (limits.tokens_per_minute !== undefined) parts.push(`${format.count(limits.tokens_per_minute)} tokens/min`);
  if (limits.max_concurrent !== undefined) parts.push(`${format.count(limits.max_concurrent)} at once`);
  if (limits.end_users) parts.push('end-user rule');
  if (limits.tags) parts.push('tag rules');
  return parts.join(' · ') || 'none';
}

/**
 * The small form for a team's or the organization's limits: budget, period, soft budget, requests per
 * minute and day, tokens per minute, max concurrent. Empty fields are not set; rules the form does
 * not show (`end_users`, `tags`) are kept. `save(limits | null)` sends it; its error is shown in the
 * form, on the field the API names (`param`).
 */
export function limitsForm({ title, id, limits, save }) {
  const current = limits ?? {};
  const inputs = Object.fromEntries(NUMBER_FIELDS.map(([name, , step]) => [name, h('input', { type: 'number', min: '0', step, name, value: current[name] ?? '' })]));
  const period = select('budget_period', BUDGET_PERIODS, current.budget_period ?? 'total');
  const error = h('p', { class: 'notice error form-error', role: 'alert', id: `${id}-error`, hidden: true });
  const titleId = `${id}-title`;
  const fields = NUMBER_FIELDS.map(([name, label, , hint]) => field(label, inputs[name], hint));
  fields.splice(1, 0, field('Budget period', period, 'what the budget and soft budget count'));
  const form = h('form', { class: 'editor limits-form', id, 'aria-labelledby': titleId },
    h('h2', { id: titleId, text: title }),
    h('div', { class: 'grid' }, fields),
    error,
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Save limits' })));
  const clearError = () => {
    error.hidden = true;
    replace(error);
    for (const control of [...Object.values(inputs), period]) {
      control.removeAttribute('aria-invalid');
      control.removeAttribute('aria-describedby');
    }
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError();
    const next = {};
    for (const [name] of NUMBER_FIELDS) if (inputs[name].value !== '') next[name] = Number(inputs[name].value);
    if ((next.budget_usd !== undefined || next.soft_budget_usd !== undefined) && period.value !== 'total') next.budget_period = period.value;
    if (current.end_users) next.end_users = current.end_users;
    if (current.tags) next.tags = current.tags;
    try {
      await save(Object.keys(next).length ? next : null);
    } catch (failure) {
      error.hidden = false;
      replace(error, failure.message);
      const param = failure.body?.error?.param;
      const name = typeof param === 'string' ? param.replace(/^limits\./, '') : '';
      const control = inputs[name] ?? (name === 'budget_period' ? period : null);
      if (control) {
        control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', error.id);
        control.focus();
      }
    }
  });
  return form;
}

/**
 * Whose an alert is: the subject's name (`key_name`), after its level for every level but a key's
 * (the keys page lists keys: "Team search", "End user alice", "my-key").
 */
export function alertSubject(alert) {
  const level = alert.level ?? 'key';
  return h('span', { class: 'alert-subject' },
    level === 'key' ? null : h('span', { class: 'alert-level', text: `${LEVEL_LABELS[level] ?? level} ` }),
    h('strong', { text: alert.key_name }));
}

/** What an alert says happened: a soft budget reached, 80 % of a budget, or all of it. */
export function alertText(alert) {
  if (alert.type === 'budget.soft') return 'reached its soft budget';
  return alert.threshold === 100 ? 'spent its whole budget' : `reached ${alert.threshold} % of its budget`;
}
