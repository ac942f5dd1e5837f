import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, createKey, fixedUsageHandler } from '../vault/vault-harness.js';
import { regex } from '../../plugins/guardrails/regex/index.js';

// A team's lists bound every key of the team at request time, and its policy is the default of its
// keys; a change to the team applies within a second; an admin token is never sent upstream.

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({ policies: { 'no-secrets': { input: [regex({ pattern: 'classified' })] } } });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test.serial("a team's allowed models bound its keys; its guardrail policy is their default; a change applies within a second", async (t) => {
  const team = await admin(gateway, 'POST', '/admin/teams', { name: 'limited', allowed_models: ['gpt-4o*'], guardrail_policy: 'no-secrets' });
  t.is(team.status, 201, team.text);
  const key = await createKey(t, gateway, { name: 'limited-key', provider: 'openai', provider_key: 'sk-limited-0123456789', custom_host: fake.baseUrl, team_id: team.json.id });
  t.is((await chatWithKey(gateway, key.key, { model: 'gpt-4o-mini' })).status, 200);
  const refused = await chatWithKey(gateway, key.key, { model: 'o3' });
  t.is(refused.status, 403);
  t.like(refused.json.error, { code: 'model_not_allowed', param: 'model' });
  t.regex(refused.json.error.message, /Team limited/);
  const sent = fake.requests.length;
  const denied = await chatWithKey(gateway, key.key, { messages: [{ role: 'user', content: 'the classified plans' }] });
  t.is(denied.status, 400, "the team's policy applies to a key without its own");
  t.is(denied.json.error.code, 'guardrail_denied');
  t.is(fake.requests.length, sent, 'nothing sent upstream');

  t.is((await admin(gateway, 'PATCH', `/admin/teams/${team.json.id}`, { allowed_models: null })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.is((await chatWithKey(gateway, key.key, { model: 'o3' })).status, 200, 'the team no longer limits models');
});

test.serial('a team may not be given a provider outside its allowed_providers', async (t) => {
  const team = await admin(gateway, 'POST', '/admin/teams', { name: 'openai-only', allowed_providers: ['openai'] });
  t.is(team.status, 201, team.text);
  t.is((await admin(gateway, 'POST', '/admin/teams', { name: 'bad', allowed_providers: ['nope'] })).status, 400);
  const key = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'ok-provider', provider: 'openai', provider_key: 'sk-x-0123456789', custom_host: fake.baseUrl, team_id: team.json.id });
  t.is(key.status, 201, key.text);
  t.is((await admin(gateway, 'PATCH', `/admin/teams/${team.json.id}`, { allowed_providers: [] })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const refused = await chatWithKey(gateway, key.json.key);
  t.is(refused.status, 403);
  t.is(refused.json.error.code, 'provider_not_allowed');
});

test.serial('an admin token sent to a provider route is refused and never forwarded', async (t) => {
  const user = await admin(gateway, 'POST', '/admin/users', { email: 'tok-leak@example.com', role: 'auditor' });
  const landing = await fetch(user.json.invitation.url, { redirect: 'manual' });
  const cookie = landing.headers.get('set-cookie')!.split(';')[0]!;
  const session = (await (await fetch(`${gateway.url}/dashboard/session`, { headers: { cookie } })).json()) as { csrf_token: string };
  const created = await fetch(`${gateway.url}/admin/tokens`, { method: 'POST', headers: { cookie, 'x-gateway-csrf': session.csrf_token, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'leak' }) });
  const { token } = (await created.json()) as { token: string };
  const sent = fake.requests.length;
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(response.status, 401);
  t.is(fake.requests.length, sent);
  t.false(JSON.stringify(fake.requests).includes(token));
});

test.serial("a team's viewer reads usage summed over its team's keys only; an organization reader over every key", async (t) => {
  const team = await admin(gateway, 'POST', '/admin/teams', { name: 'usage-team' });
  const inside = await createKey(t, gateway, { name: 'usage-inside', provider: 'openai', provider_key: 'sk-usage-in-0123456789', custom_host: fake.baseUrl, team_id: team.json.id });
  const outside = await createKey(t, gateway, { name: 'usage-outside', provider: 'openai', provider_key: 'sk-usage-out-0123456789', custom_host: fake.baseUrl });
  for (let index = 0; index < 3; index++) t.is((await chatWithKey(gateway, inside.key)).status, 200);
  for (let index = 0; index < 2; index++) t.is((await chatWithKey(gateway, outside.key)).status, 200);
  await gateway.gateway.flushLogs();
  const member = await admin(gateway, 'POST', `/admin/teams/${team.json.id}/members`, { email: 'usage-viewer@example.com', role: 'viewer' });
  const landing = await fetch(member.json.invitation.url, { redirect: 'manual' });
  const cookie = landing.headers.get('set-cookie')!.split(';')[0]!;
  const session = (await (await fetch(`${gateway.url}/dashboard/session`, { headers: { cookie } })).json()) as { csrf_token: string };
  const asViewer = async (path: string) => (await fetch(`${gateway.url}${path}`, { headers: { cookie, 'x-gateway-csrf': session.csrf_token } })).json() as Promise<any>;
  const summary = await asViewer('/admin/usage/summary?range=hour');
  t.is(summary.current.requests, 3, "the team's three requests, not the others'");
  t.deepEqual(summary.top.keys.map((entry: { group: string }) => entry.group), [inside.id]);
  const byKey = await asViewer('/admin/usage?range=hour&group_by=key');
  t.deepEqual(byKey.totals.map((entry: { group: string }) => entry.group), [inside.id]);
  const organization = await admin(gateway, 'GET', '/admin/usage/summary?range=hour');
  t.true(organization.json.current.requests >= 5, 'the account key sees every key');
});
