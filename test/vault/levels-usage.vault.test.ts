import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { call, chat } from './level-cases.js';
import { fixedUsageHandler } from './vault-harness.js';

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
