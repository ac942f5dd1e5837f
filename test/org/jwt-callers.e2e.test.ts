import test from 'ava';
import { regex } from '../../plugins/guardrails/regex/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { type FakeIssuer, type IssuerKey, issuerKey, mint, startIssuer } from '../identity/jwks-issuer.js';
import { admin } from '../vault/vault-harness.js';

// JWT callers through the organization (no mapper injected): a token whose `sub` is a service
// account's `jwt_subject` acts as that service account (its team's policy, its route, the route's
// credential); other tokens are mapped by `organization.jwtRules`, or refused.

const AUDIENCE = 'llm-gateway';
const SECRET = 'sk-search-team-upstream-0123456789';
let fake: Fake;
let issuer: FakeIssuer;
let key: IssuerKey;
let gateway: TestGateway;

test.before(async () => {
  key = await issuerKey('org-key');
  fake = await startFake();
  issuer = await startIssuer([key]);
  gateway = await startGateway({
    auth: { jwt: [{ issuer: issuer.url, audience: AUDIENCE }] },
    policies: { 'no-secrets': { input: [regex({ pattern: 'classified' })] } },
    organization: { jwtRules: [{ claim: 'repository', equals: 'acme/search', team: 'search', route: 'search-route' }] },
  });
  const team = await admin(gateway, 'POST', '/admin/teams', { name: 'search', guardrail_policy: 'no-secrets' });
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'search-openai', provider: 'openai', api_key: SECRET, team_id: team.json.id });
  const route = await admin(gateway, 'POST', '/admin/routes', { name: 'search-route', team_id: team.json.id, route: { targets: [{ provider: 'openai', credential: credential.json.id, custom_host: fake.baseUrl }] } });
  if (route.status !== 201) throw new Error(JSON.stringify(route.json));
  const account = await admin(gateway, 'POST', '/admin/service-accounts', { name: 'ci', team_id: team.json.id, jwt_subject: 'ci-pipeline', route: 'search-route' });
  if (account.status !== 201) throw new Error(JSON.stringify(account.json));
});

test.after.always(async () => {
  await gateway?.close();
  await issuer?.close();
  await fake?.close();
});

async function chat(token: string, content = 'hi') {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
  });
  return { status: response.status, json: (await response.json()) as any };
}

test.serial("a service account's token takes its route with the team's credential; the token never goes upstream", async (t) => {
  const token = await mint(key, { iss: issuer.url, aud: AUDIENCE, sub: 'ci-pipeline' });
  const before = fake.requests.length;
  const answer = await chat(token);
  t.is(answer.status, 200, JSON.stringify(answer.json));
  t.is(fake.requests.length, before + 1);
  const upstream = fake.requests.at(-1)!;
  t.is(upstream.headers.authorization, `Bearer ${SECRET}`);
  t.false(JSON.stringify(upstream.headers).includes(token));
  const [entry] = (await gateway.waitForEntries(1)).slice(-1);
  t.like(entry, { callerType: 'service-account' });
});

test.serial("the team's guardrail policy applies to its service account's calls", async (t) => {
  const token = await mint(key, { iss: issuer.url, aud: AUDIENCE, sub: 'ci-pipeline' });
  const before = fake.requests.length;
  const denied = await chat(token, 'the classified plans');
  t.is(denied.status, 400);
  t.is(denied.json.error.code, 'guardrail_denied');
  t.is(fake.requests.length, before, 'nothing sent upstream');
});

test.serial('a claims rule maps a token to a team and its route; a token nothing maps is 401', async (t) => {
  const ruled = await chat(await mint(key, { iss: issuer.url, aud: AUDIENCE, sub: 'build-42', repository: 'acme/search' }));
  t.is(ruled.status, 200, JSON.stringify(ruled.json));
  const unmapped = await chat(await mint(key, { iss: issuer.url, aud: AUDIENCE, sub: 'stranger', repository: 'acme/other' }));
  t.is(unmapped.status, 401);
  t.is(unmapped.json.error.code, 'jwt_not_mapped');
});

test.serial("a JWT caller is limited at its service account's level and its team's (claims rules: the team's)", async (t) => {
  const accounts = (await admin(gateway, 'GET', '/admin/service-accounts')).json.data as Array<{ id: string; jwt_subject?: string; team_id: string }>;
  const account = accounts.find((candidate) => candidate.jwt_subject === 'ci-pipeline')!;
  t.is((await admin(gateway, 'PATCH', `/admin/service-accounts/${account.id}`, { limits: { requests_per_minute: 2 } })).status, 200);
  // Records on the request path are kept a second.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const token = await mint(key, { iss: issuer.url, aud: AUDIENCE, sub: 'ci-pipeline' });
  const statuses = [];
  for (let index = 0; index < 3; index++) statuses.push((await chat(token)).status);
  t.deepEqual(statuses, [200, 200, 429]);
  const refused = await chat(token);
  t.like(refused.json.error, { code: 'rate_limit_exceeded', budget: { level: 'user', level_id: account.id, limit: 'requests_per_minute' } });

  t.is((await admin(gateway, 'PATCH', `/admin/teams/${account.team_id}`, { limits: { max_concurrent: 0 } })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const ruled = await chat(await mint(key, { iss: issuer.url, aud: AUDIENCE, sub: 'build-43', repository: 'acme/search' }));
  t.is(ruled.status, 429, 'a claims rule\'s caller is charged to its team');
  t.like(ruled.json.error.budget, { level: 'team', level_id: account.team_id, limit: 'max_concurrent' });
  await admin(gateway, 'PATCH', `/admin/teams/${account.team_id}`, { limits: null });
  await admin(gateway, 'PATCH', `/admin/service-accounts/${account.id}`, { limits: null });
});
