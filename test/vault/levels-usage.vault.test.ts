import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { call, chat } from './level-cases.js';
import { FIXED_COST_USD, fixedUsageHandler } from './vault-harness.js';

/** `/admin/usage?group_by=team` and `group_by=user_id` (the gateway user or service account owning each key). */
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test.serial('usage grouped by team and by the keys\' owner (user or service account); group_by=user still means the end user', async (t) => {
  const created = async (path: string, body: unknown) => (await call(gateway, 'POST', path, body)).json;
  const [search, ads] = [await created('/admin/teams', { name: 'usage-search' }), await created('/admin/teams', { name: 'usage-ads' })];
  const user = await created('/admin/users', { email: 'owner@example.com' });
  const account = await created('/admin/service-accounts', { name: 'ci', team_id: ads.id });
  const key = async (fields: object) => (await created('/admin/virtual-keys', { name: `k-${Math.random()}`, provider: 'openai', provider_key: 'sk-usage-secret-0123456789', custom_host: fake.baseUrl, ...fields })).key as string;
  const userKey = await key({ team_id: search.id, user_id: user.id });
  const accountKey = await key({ team_id: ads.id, service_account_id: account.id });
  const sharedKey = await key({ team_id: null });
  for (let index = 0; index < 3; index++) t.is((await chat(gateway, userKey, { user: 'alice' })).status, 200);
  for (let index = 0; index < 2; index++) t.is((await chat(gateway, accountKey)).status, 200);
  t.is((await chat(gateway, sharedKey)).status, 200);
  const requestsBy = async (groupBy: string) => {
    const deadline = Date.now() + 5000;
    for (;;) {
      const answer = await call(gateway, 'GET', `/admin/usage?range=hour&group_by=${groupBy}`);
      t.is(answer.status, 200, JSON.stringify(answer.json));
      const totals = Object.fromEntries((answer.json.totals as Array<{ group: string; requests: number }>).map((row) => [row.group, row.requests]));
      if (Object.values(totals).reduce((sum, value) => sum + value, 0) >= 6 || Date.now() > deadline) return totals;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  t.like(await requestsBy('team'), { [search.id]: 3, [ads.id]: 2, organization: 1 });
  t.like(await requestsBy('user_id'), { [user.id]: 3, [account.id]: 2, '(none)': 1 });
  t.like(await requestsBy('user'), { alice: 3 });
});

test.serial('budget alerts at every level: 80 % and 100 % of a team budget, and a user\'s soft budget (which refuses nothing)', async (t) => {
  const created = async (path: string, body: unknown) => (await call(gateway, 'POST', path, body)).json;
  const team = await created('/admin/teams', { name: 'alerted-team', limits: { budget_usd: 5 * FIXED_COST_USD, budget_period: 'week' } });
  const user = await created('/admin/users', { email: 'soft@example.com', limits: { soft_budget_usd: 2 * FIXED_COST_USD } });
  const { key } = (await created('/admin/virtual-keys', { name: 'alerted', provider: 'openai', provider_key: 'sk-alert-secret-0123456789', custom_host: fake.baseUrl, team_id: team.id, user_id: user.id })) as { key: string };
  const statuses: number[] = [];
  for (let index = 0; index < 6; index++) statuses.push((await chat(gateway, key)).status);
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 403], 'the team budget refuses the sixth; the soft budget refused nothing');
  const deadline = Date.now() + 5000;
  let alerts: Array<Record<string, any>> = [];
  while (alerts.length < 3 && Date.now() < deadline) {
    alerts = (await call(gateway, 'GET', '/admin/alerts')).json.data.filter((alert: { level: string }) => alert.level !== 'key');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const teamAlerts = alerts.filter((alert) => alert.key_id === `team:${team.id}`);
  t.deepEqual(teamAlerts.map((alert) => alert.threshold).sort(), [100, 80]);
  t.like(teamAlerts[0], { type: 'budget.threshold', level: 'team', key_name: 'alerted-team', period: 'week' });
  const soft = alerts.filter((alert) => alert.key_id === `user:${user.id}`);
  t.is(soft.length, 1);
  t.like(soft[0], { type: 'budget.soft', level: 'user', key_name: 'soft@example.com', threshold: 100, budget_usd: 2 * FIXED_COST_USD });
});

test.serial('limits on teams, users, service accounts and the organization are validated: a 400 names the field', async (t) => {
  const team = await call(gateway, 'POST', '/admin/teams', { name: 'bad-limits', limits: { tags: { feature: { search: { budget_usd: -1 } } } } });
  t.is(team.status, 400);
  t.is(team.json.error.param, 'limits.tags.feature.search.budget_usd');
  const user = await call(gateway, 'POST', '/admin/users', { email: 'bad@example.com', limits: { end_users: { budget_usd: 1 } } });
  t.is(user.status, 400);
  t.is(user.json.error.param, 'limits.end_users', 'end-user rules belong on a team or key');
  const organization = await call(gateway, 'PATCH', '/admin/organization', { limits: { max_concurrent: 1.5 } });
  t.is(organization.status, 400);
  t.is(organization.json.error.param, 'limits.max_concurrent');
  const period = await call(gateway, 'PATCH', '/admin/organization', { limits: { budget_period: 'week' } });
  t.is(period.json.error.param, 'limits.budget_period');
  t.like((await call(gateway, 'GET', '/admin/organization')).json, { limits: null, limits_usage: null }, 'nothing was stored');
});
