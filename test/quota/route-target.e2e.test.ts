import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, FIXED_MESSAGES, fixedUsageHandler } from '../vault/vault-harness.js';

// A route target's own `quota` (docs/limits.md): it applies to the attempts sent to that target,
// and a fallback route moves on to its next target when the quota has no room in time.

let fake: Fake;
let backup: Fake;
let gateway: TestGateway;
test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  backup = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({
    routes: {
      limited: { strategy: { mode: 'single' }, targets: [{ name: 'only', provider: 'openai', custom_host: fake.baseUrl, quota: { requests_per_minute: 1, max_wait_ms: 0 } }] },
      spill: {
        strategy: { mode: 'fallback' },
        targets: [
          { name: 'first', provider: 'openai', custom_host: fake.baseUrl, quota: { requests_per_minute: 1, max_wait_ms: 0 } },
          { name: 'second', provider: 'openai', custom_host: backup.baseUrl },
        ],
      },
    },
  });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
  await backup?.close();
});

const chat = async (route: string) => {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-config': route },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10 }),
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as any };
};

test.serial('a route target with a quota: the second request in the minute is refused (max_wait_ms 0), and /admin/quotas shows the target', async (t) => {
  t.is((await chat('limited')).status, 200);
  const refused = await chat('limited');
  t.is(refused.status, 429);
  t.is(refused.json.error.code, 'quota_wait_exceeded');
  t.truthy(refused.headers.get('retry-after'));
  const quotas = (await admin(gateway, 'GET', '/admin/quotas')).json;
  const entry = quotas.data.find((quota: { key: string }) => quota.key === 'route:route:limited/targets[0]');
  t.truthy(entry, JSON.stringify(quotas));
  t.is(entry.refused, 1);
  t.deepEqual(entry.teams.map((team: { team: string; requests: number }) => [team.team, team.requests]), [['organization', 1]]);
});

test.serial("refusals by a target's quota do not count against its circuit breaker", async (t) => {
  // The minute of the first test is still full: every request is refused by the quota, never 503 no_healthy_target.
  for (let index = 0; index < 8; index++) t.is((await chat('limited')).json.error.code, 'quota_wait_exceeded', `request ${index}`);
});

test.serial('a fallback route moves on to its next target when the first one has no room in its quota', async (t) => {
  t.is((await chat('spill')).status, 200);
  const before = backup.requests.length;
  const second = await chat('spill');
  t.is(second.status, 200);
  t.is(second.headers.get('x-gateway-route-target'), 'second');
  t.is(backup.requests.length, before + 1);
});

test('a route target quota is checked: 400 invalid_route naming the field', async (t) => {
  const answer = await admin(gateway, 'POST', '/admin/routes', { name: 'bad-quota', route: { targets: [{ provider: 'openai', quota: { tokens_per_minute: 0 } }] } });
  t.is(answer.status, 400);
  t.is(answer.json.error.code, 'invalid_route');
  t.regex(answer.json.error.param, /targets\[0\]\.quota\.tokens_per_minute$/);
});
