import { api } from './api.js';
import { h, replace } from './dom.js';
import { teamName } from './session.js';

const limitsOf = (quota) =>
  [
    quota?.requests_per_minute !== undefined ? `${quota.requests_per_minute} requests/min` : undefined,
    quota?.tokens_per_minute !== undefined ? `${quota.tokens_per_minute} tokens/min` : undefined,
    quota?.max_concurrent !== undefined ? `${quota.max_concurrent} at once` : undefined,
    `wait ≤ ${quota?.max_wait_ms ?? 5000} ms`,
  ].filter(Boolean).join(', ');

const teamsTable = (teams) =>
  teams.length === 0
    ? h('p', { class: 'muted', text: 'No team in the current window.' })
    : h('table', { class: 'quota-teams' },
        h('thead', {}, h('tr', {}, ['Team', 'Weight', 'Active', 'Requests', 'Tokens', 'In flight'].map((name) => h('th', { scope: 'col', text: name })))),
        h('tbody', {}, teams.map((team) => h('tr', {},
          h('th', { scope: 'row', title: team.team, data: { team: team.team } }, teamName(team.team)),
          h('td', { text: String(team.weight) }),
          h('td', { text: team.active ? 'yes' : 'idle' }),
          h('td', { text: String(team.requests) }),
          h('td', { text: String(team.tokens) }),
          h('td', { text: String(team.concurrent) })))));

/** One quota: its limits, what each team holds in the shared window, and this instance's queue depth and waits. */
const quotaSection = (quota) =>
  h('section', { class: 'quota', data: { quota: quota.key } },
    h('h2', { text: quota.name }),
    h('p', { class: 'muted', text: `${quota.key} · ${limitsOf(quota.quota)}` }),
    h('dl', { class: 'quota-queue' },
      h('dt', { text: 'Waiting now' }), h('dd', { class: 'queue-depth', text: String(quota.queue_depth) }),
      h('dt', { text: 'Waits' }), h('dd', { text: `${quota.waits} (average ${quota.waits ? ((quota.wait_seconds_total / quota.waits) * 1000).toFixed(0) : 0} ms)` }),
      h('dt', { text: 'Granted' }), h('dd', { text: String(quota.granted) }),
      h('dt', { text: 'Refused (429)' }), h('dd', { text: String(quota.refused) })),
    teamsTable(quota.teams));

/** Providers' quotas shared between teams (docs/limits.md): read-only; they are set on credentials and route targets. */
export async function renderQuotas(view) {
  const quotas = await api.get('/admin/quotas');
  replace(view,
    h('h1', { text: 'Quotas' }),
    h('p', { class: 'muted', text: "Providers' quotas, shared between teams by their quota_weight. Teams: every instance's counts in the sliding window; queue and waits: this instance since it started." }),
    ...(quotas.data.length === 0 ? [h('p', { text: 'No credential or route target declares a quota.' })] : quotas.data.map(quotaSection)));
}
