import test from 'ava';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { ORG_ROLE_PERMISSIONS, type OrgRole, type Permission, TEAM_ROLE_PERMISSIONS, type TeamRole } from '../../core/org/permissions.js';

// Teams, users, roles and scoping through the real admin API: every admin route walked with every
// role (compared with the permission each declares), cross-team isolation answering 404,
// escalations refused with 403, suspension ending a session and a token at once, and the
// one-time invitation link.

interface Session {
  readonly cookie: string;
  readonly csrf: string;
}

let gw: TestGateway;

test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

async function call(method: string, path: string, body?: unknown, auth: { key?: string; session?: Session } = { key: ACCOUNT_KEY }) {
  const headers: Record<string, string> = {};
  if (auth.key) headers['x-gateway-api-key'] = auth.key;
  if (auth.session) {
    headers.cookie = auth.session.cookie;
    headers['x-gateway-csrf'] = auth.session.csrf;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  const controller = new AbortController();
  const response = await fetch(`${gw.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: controller.signal, redirect: 'manual' });
  // The live tail never ends: its status and headers are the answer.
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: response.status, json: undefined as any };
  }
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, headers: response.headers };
}

/** Follows an invitation link like a browser: the cookie it sets, then the page's CSRF token. */
async function signIn(invitationUrl: string): Promise<Session> {
  const landing = await fetch(invitationUrl, { redirect: 'manual' });
  if (landing.status !== 302) throw new Error(`invitation answered ${landing.status}`);
  const cookie = landing.headers.get('set-cookie')!.split(';')[0]!;
  const session = (await (await fetch(`${gw.url}/dashboard/session`, { headers: { cookie } })).json()) as { csrf_token: string };
  return { cookie, csrf: session.csrf_token };
}

/** A user with an organization role, or a role in a team, signed in through their invitation. */
async function person(email: string, grant: { role?: OrgRole; team?: string; teamRole?: TeamRole }): Promise<{ id: string; session: Session }> {
  let created;
  if (grant.team) {
    created = await call('POST', `/admin/teams/${grant.team}/members`, { email, role: grant.teamRole });
    if (created.status !== 201) throw new Error(JSON.stringify(created.json));
    return { id: created.json.user.id, session: await signIn(created.json.invitation.url) };
  }
  created = await call('POST', '/admin/users', { email, ...(grant.role ? { role: grant.role } : {}) });
  if (created.status !== 201) throw new Error(JSON.stringify(created.json));
  return { id: created.json.id, session: await signIn(created.json.invitation.url) };
}

test.serial('every admin route declares a permission, and each role gets exactly what the matrix says', async (t) => {
  const routes = gw.gateway.adminRoutes.filter((route) => route.permission !== null);
  t.true(routes.length >= 50, `${routes.length} admin routes`);
  const team = await call('POST', '/admin/teams', { name: 'matrix-team' });
  t.is(team.status, 201);
  const principals: Array<{ label: string; session: Session; holds: (permission: Permission) => boolean }> = [];
  for (const role of ['owner', 'admin', 'auditor'] as const) {
    const user = await person(`matrix-${role}@example.com`, { role });
    principals.push({ label: role, session: user.session, holds: (permission) => ORG_ROLE_PERMISSIONS[role].has(permission) });
  }
  for (const teamRole of ['team_admin', 'member', 'viewer'] as const) {
    const user = await person(`matrix-${teamRole}@example.com`, { team: team.json.id, teamRole });
    principals.push({ label: teamRole, session: user.session, holds: (permission) => TEAM_ROLE_PERMISSIONS[teamRole].has(permission) });
  }
  const mismatches: string[] = [];
  for (const route of routes) {
    const path = route.path.replace(/:([a-z]+)/g, 'does-not-exist');
    for (const principal of principals) {
      const expected = route.permission === 'signed-in' || principal.holds(route.permission as Permission);
      // An empty body for writes: a caller with the permission gets 400 or 404, never 401 or 403.
      const answer = await call(route.method, path, ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined, { session: principal.session });
      const allowed = answer.status !== 401 && answer.status !== 403;
      if (allowed !== expected) mismatches.push(`${principal.label} ${route.method} ${route.path}: ${answer.status} ${JSON.stringify(answer.json?.error?.message ?? '')}`);
    }
  }
  t.deepEqual(mismatches, []);
});

test.serial('another team is invisible: its keys, credentials and routes are left out of lists and answer 404', async (t) => {
  const a = await call('POST', '/admin/teams', { name: 'team-a' });
  const b = await call('POST', '/admin/teams', { name: 'team-b' });
  const adminA = await person('lead-a@example.com', { team: a.json.id, teamRole: 'team_admin' });
  const adminB = await person('lead-b@example.com', { team: b.json.id, teamRole: 'team_admin' });
  const asA = { session: adminA.session };
  const asB = { session: adminB.session };

  const credential = await call('POST', '/admin/credentials', { name: 'a-openai', provider: 'openai', api_key: 'sk-team-a-secret-0123456789' }, asA);
  t.is(credential.status, 201, JSON.stringify(credential.json));
  t.is(credential.json.team_id, a.json.id, 'a team admin creates in their team without naming it');
  const key = await call('POST', '/admin/virtual-keys', { name: 'a-key', provider: 'openai', credential_id: credential.json.id }, asA);
  t.is(key.status, 201, JSON.stringify(key.json));
  const route = await call('POST', '/admin/routes', { name: 'a-route', route: { targets: [{ provider: 'openai', credential: credential.json.id }] } }, asA);
  t.is(route.status, 201, JSON.stringify(route.json));

  for (const [list, id] of [
    ['/admin/credentials', credential.json.id],
    ['/admin/virtual-keys', key.json.id],
    ['/admin/routes', route.json.id],
  ] as const) {
    const seenByB = await call('GET', list, undefined, asB);
    t.is(seenByB.status, 200);
    t.false(seenByB.json.data.some((entry: { id: string }) => entry.id === id), `${list} of team B leaves out team A's object`);
    t.true((await call('GET', list, undefined, asA)).json.data.some((entry: { id: string }) => entry.id === id));
    t.is((await call('GET', `${list}/${id}`, undefined, asB)).status, 404);
    t.is((await call('DELETE', `${list}/${id}`, undefined, asB)).status, 404);
  }
  t.is((await call('PATCH', `/admin/virtual-keys/${key.json.id}`, { name: 'stolen' }, asB)).status, 404);
  t.is((await call('GET', `/admin/virtual-keys/${key.json.id}/usage`, undefined, asB)).status, 404);
  t.is((await call('GET', `/admin/teams/${a.json.id}`, undefined, asB)).status, 404);
  const teamsOfB = await call('GET', '/admin/teams', undefined, asB);
  t.deepEqual(teamsOfB.json.data.map((entry: { id: string }) => entry.id), [b.json.id]);

  // Attaching team A's credential or route to a key of team B: answered as for one that does not exist.
  const attachCredential = await call('POST', '/admin/virtual-keys', { name: 'b-key', provider: 'openai', credential_id: credential.json.id }, asB);
  const attachMissing = await call('POST', '/admin/virtual-keys', { name: 'b-key', provider: 'openai', credential_id: 'cred_does_not_exist' }, asB);
  t.is(attachCredential.status, 404);
  t.is(attachMissing.status, 404);
  t.is(attachCredential.json.error.param, 'credential_id');
  t.not(attachCredential.status, 201);
  const attachRoute = await call('POST', '/admin/virtual-keys', { name: 'b-key', route: route.json.id }, asB);
  t.is(attachRoute.status, 404);
  t.like(attachRoute.json.error, { param: 'route', code: 'route_not_found' });
  // A key for team A made by team B's admin: team A is invisible to it.
  const intoA = await call('POST', '/admin/virtual-keys', { name: 'b-into-a', provider: 'openai', provider_key: 'sk-x-0123456789', team_id: a.json.id }, asB);
  t.is(intoA.status, 404);
  t.is(intoA.json.error.code, 'team_not_found');
});

test.serial('escalations are refused with 403 and a clear message; nothing changes', async (t) => {
  const team = await call('POST', '/admin/teams', { name: 'team-escalate' });
  const other = await call('POST', '/admin/teams', { name: 'team-other' });
  const lead = await person('lead-esc@example.com', { team: team.json.id, teamRole: 'team_admin' });
  const member = await person('member-esc@example.com', { team: team.json.id, teamRole: 'member' });
  const admin = await person('admin-esc@example.com', { role: 'admin' });
  const asLead = { session: lead.session };

  // A team admin cannot grant an organization role, nor raise their own role.
  const orgGrant = await call('POST', '/admin/users', { email: 'x@example.com', role: 'admin' }, asLead);
  t.is(orgGrant.status, 403);
  const self = await call('POST', `/admin/teams/${team.json.id}/members`, { email: 'lead-esc@example.com', role: 'team_admin' }, asLead);
  t.is(self.status, 403);
  t.regex(self.json.error.message, /own role/);
  // A service account in another team: that team is invisible (404).
  const elsewhere = await call('POST', '/admin/service-accounts', { name: 'ci', team_id: other.json.id }, asLead);
  t.is(elsewhere.status, 404);
  // A member cannot add members nor grant themselves team_admin.
  const memberGrant = await call('POST', `/admin/teams/${team.json.id}/members`, { email: 'member-esc@example.com', role: 'team_admin' }, { session: member.session });
  t.is(memberGrant.status, 403);
  // An admin cannot grant owner, nor suspend an owner.
  const ownerGrant = await call('PATCH', `/admin/users/${member.id}`, { role: 'owner' }, { session: admin.session });
  t.is(ownerGrant.status, 403);
  t.regex(ownerGrant.json.error.message, /owner/);
  const owner = await person('owner-esc@example.com', { role: 'owner' });
  t.is((await call('PATCH', `/admin/users/${owner.id}`, { status: 'suspended' }, { session: admin.session })).status, 403);
  // A token cannot carry a permission its user lacks.
  const widerToken = await call('POST', '/admin/tokens', { name: 'wide', permissions: ['users.write'] }, asLead);
  t.is(widerToken.status, 403);
  // Nothing changed.
  const after = await call('GET', `/admin/users/${member.id}`);
  t.is(after.json.role, null);
  t.deepEqual(after.json.teams, [{ team_id: team.json.id, role: 'member' }]);
});

test.serial('a member sees and changes only their own keys; a viewer reads the team keys without changing them', async (t) => {
  const team = await call('POST', '/admin/teams', { name: 'team-members' });
  const lead = await person('lead-m@example.com', { team: team.json.id, teamRole: 'team_admin' });
  const member = await person('member-m@example.com', { team: team.json.id, teamRole: 'member' });
  const viewer = await person('viewer-m@example.com', { team: team.json.id, teamRole: 'viewer' });
  const leadKey = await call('POST', '/admin/virtual-keys', { name: 'lead-key', provider: 'openai', provider_key: 'sk-lead-0123456789' }, { session: lead.session });
  const own = await call('POST', '/admin/virtual-keys', { name: 'member-key', provider: 'openai', provider_key: 'sk-member-0123456789' }, { session: member.session });
  t.is(own.status, 201, JSON.stringify(own.json));
  t.is(own.json.user_id, member.id, "a member's key is theirs");
  const listed = await call('GET', '/admin/virtual-keys', undefined, { session: member.session });
  t.deepEqual(listed.json.data.map((entry: { id: string }) => entry.id), [own.json.id]);
  t.is((await call('GET', `/admin/virtual-keys/${leadKey.json.id}`, undefined, { session: member.session })).status, 404);
  const viewed = await call('GET', '/admin/virtual-keys', undefined, { session: viewer.session });
  t.deepEqual(viewed.json.data.map((entry: { id: string }) => entry.id).sort(), [leadKey.json.id, own.json.id].sort());
  t.false(JSON.stringify(viewed.json).includes('sk-'), 'no secret in the listing');
  t.is((await call('DELETE', `/admin/virtual-keys/${own.json.id}`, undefined, { session: viewer.session })).status, 403);
  t.is((await call('DELETE', `/admin/virtual-keys/${own.json.id}`, undefined, { session: member.session })).status, 204);
});

test.serial('personal tokens: shown once, carry at most their permissions, stop at once when revoked or the user is suspended', async (t) => {
  const auditor = await person('auditor-tok@example.com', { role: 'auditor' });
  const created = await call('POST', '/admin/tokens', { name: 'cli', expires_in_days: 30 }, { session: auditor.session });
  t.is(created.status, 201, JSON.stringify(created.json));
  const token: string = created.json.token;
  t.regex(token, /^gtok-/);
  const listed = await call('GET', '/admin/tokens', undefined, { session: auditor.session });
  t.false(JSON.stringify(listed.json).includes(token), 'the value is shown once only');
  t.is((await call('GET', '/admin/virtual-keys', undefined, { key: token })).status, 200, 'an auditor reads');
  // Using a token for an admin read is an audit event too (at most one a minute per token).
  const uses = (await call('GET', `/admin/audit?action=tokens.use&target=token:${created.json.id}`)).json.data;
  t.is(uses.length, 1);
  t.like(uses[0], { actor: { type: 'user', id: auditor.id, token_id: created.json.id }, outcome: 'success' });
  t.is((await call('POST', '/admin/teams', { name: 'nope' }, { key: token })).status, 403, 'an auditor changes nothing');
  const bearer = await fetch(`${gw.url}/admin/users`, { headers: { authorization: `Bearer ${token}` } });
  t.is(bearer.status, 200, 'Authorization: Bearer works too');
  const narrow = await call('POST', '/admin/tokens', { name: 'narrow', permissions: ['keys.read'] }, { session: auditor.session });
  t.is((await call('GET', '/admin/users', undefined, { key: narrow.json.token })).status, 403, 'a token listing permissions carries only those');
  t.is((await call('GET', '/admin/virtual-keys', undefined, { key: narrow.json.token })).status, 200);
  const used = (await call('GET', '/admin/tokens', undefined, { session: auditor.session })).json.data.find((entry: { id: string }) => entry.id === created.json.id);
  t.truthy(used.last_used_at, 'last use is listed');

  const suspended = await call('PATCH', `/admin/users/${auditor.id}`, { status: 'suspended' });
  t.is(suspended.status, 200);
  const refusedToken = await call('GET', '/admin/virtual-keys', undefined, { key: token });
  t.is(refusedToken.status, 401);
  t.is(refusedToken.json.error.code, 'user_suspended');
  t.is((await call('GET', '/admin/virtual-keys', undefined, { session: auditor.session })).status, 401, 'the session ends too');
  await call('PATCH', `/admin/users/${auditor.id}`, { status: 'active' });
  t.is((await call('GET', '/admin/virtual-keys', undefined, { key: token })).status, 200);
  t.is((await call('DELETE', `/admin/tokens/${created.json.id}`, undefined, { session: auditor.session })).status, 204);
  t.is((await call('GET', '/admin/virtual-keys', undefined, { key: token })).status, 401, 'revoked');
});

test.serial('an invitation link signs its user in once; a used link is refused', async (t) => {
  const created = await call('POST', '/admin/users', { email: 'once@example.com' });
  t.is(created.json.status, 'invited');
  const url: string = created.json.invitation.url;
  const session = await signIn(url);
  const me = await call('GET', '/admin/me', undefined, { session });
  t.is(me.status, 200);
  t.is(me.json.user.email, 'once@example.com');
  t.is(me.json.user.status, 'active');
  t.deepEqual(me.json.permissions, []);
  t.is((await fetch(url, { redirect: 'manual' })).status, 410);
  t.is((await call('GET', '/admin/virtual-keys', undefined, { session })).status, 403, 'a user with no role reads nothing');
});

test.serial('data stored before teams belongs to the default team and keeps working', async (t) => {
  const teams = await call('GET', '/admin/teams');
  t.true(teams.json.data.some((team: { id: string }) => team.id === 'default'));
  t.is((await call('DELETE', '/admin/teams/default')).status, 409);
  const key = await call('POST', '/admin/virtual-keys', { name: 'legacy', provider: 'openai', provider_key: 'sk-legacy-0123456789' });
  t.is(key.json.team_id, 'default', 'an account-key caller creates in default unless it names a team');
});

test.serial('every changing admin route writes exactly one audit event, named from the route, whatever its outcome; the chain verifies', async (t) => {
  const changing = gw.gateway.adminRoutes.filter((route) => route.permission !== null && route.method !== 'GET');
  t.true(changing.length >= 30, `${changing.length} changing routes`);
  const viewer = await person('audit-walk@example.com', { role: 'auditor' });
  const problems: string[] = [];
  for (const route of changing) {
    const path = route.path.replace(/:([a-z]+)/g, 'does-not-exist');
    for (const auth of [{ key: ACCOUNT_KEY }, { session: viewer.session }]) {
      const before = await gw.gateway.audit.verify();
      const answer = await call(route.method, path, ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined, auth);
      const after = await gw.gateway.audit.verify();
      if (!before.ok || !after.ok) throw new Error('the chain broke');
      if (after.count - before.count !== 1) problems.push(`${route.method} ${route.path} (${answer.status}): ${after.count - before.count} events`);
    }
  }
  t.deepEqual(problems, []);
  const latest = await call('GET', `/admin/audit?limit=2`);
  t.is(latest.status, 200);
  const [denied] = latest.json.data;
  t.is(denied.actor.type, 'user', 'the last call was the auditor’s');
  t.is(denied.outcome, 'denied');
  const created = await call('POST', '/admin/teams', { name: 'audited-team' });
  const event = (await call('GET', `/admin/audit?action=teams.create&limit=1`)).json.data[0];
  t.like(event, { action: 'teams.create', outcome: 'success', target: { type: 'team', id: created.json.id } });
  t.deepEqual(event.changes.name, { after: 'audited-team' });
  t.is(event.actor.type, 'account');
  t.true((await gw.gateway.audit.verify()).ok);
});

test.serial('audit events never hold a secret: a credential created and rotated leaves no trace of its value', async (t) => {
  const secret = 'sk-audit-secret-value-0123456789';
  const credential = await call('POST', '/admin/credentials', { name: 'audited-credential', provider: 'openai', api_key: secret });
  await call('POST', `/admin/credentials/${credential.json.id}/rotate`, { api_key: `${secret}-rotated` });
  const key = await call('POST', '/admin/virtual-keys', { name: 'audited-key', provider: 'openai', credential_id: credential.json.id });
  await call('PATCH', `/admin/virtual-keys/${key.json.id}`, { limits: { requests_per_minute: 5 } });
  const exported = await fetch(`${gw.url}/admin/audit/export`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
  const text = await exported.text();
  t.true(text.includes('audited-credential'));
  t.false(text.includes(secret));
  t.false(text.includes(key.json.key));
  const patch = text.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((event) => event.action === 'virtual-keys.update' && event.target?.id === key.json.id);
  t.deepEqual(patch.changes.limits, { after: { requests_per_minute: 5 } }, 'a field that was absent has no before');
});

test.serial("a team admin reads the audit events of its team's objects only; the whole chain is an organization reader's", async (t) => {
  const a = await call('POST', '/admin/teams', { name: 'audit-team-a' });
  const b = await call('POST', '/admin/teams', { name: 'audit-team-b' });
  const adminA = await person('audit-lead-a@example.com', { team: a.json.id, teamRole: 'team_admin' });
  const adminB = await person('audit-lead-b@example.com', { team: b.json.id, teamRole: 'team_admin' });
  const key = await call('POST', '/admin/virtual-keys', { name: 'audited-a-key', provider: 'openai', provider_key: 'sk-audit-a-0123456789' }, { session: adminA.session });
  t.is(key.status, 201);
  await call('PATCH', `/admin/virtual-keys/${key.json.id}`, { name: 'audited-a-key-renamed' }, { session: adminA.session });
  const seenByA = await call('GET', '/admin/audit?limit=200', undefined, { session: adminA.session });
  t.is(seenByA.status, 200);
  const ofKey = seenByA.json.data.filter((event: any) => event.target?.id === key.json.id);
  t.deepEqual(ofKey.map((event: any) => event.action), ['virtual-keys.update', 'virtual-keys.create']);
  t.true(seenByA.json.data.every((event: any) => event.target?.team === a.json.id), 'only team A objects');
  const seenByB = await call('GET', '/admin/audit?limit=200', undefined, { session: adminB.session });
  t.false(seenByB.json.data.some((event: any) => event.target?.id === key.json.id));
  t.is((await call('GET', '/admin/audit/export', undefined, { session: adminA.session })).status, 403);
  const owner = await call('GET', `/admin/audit?target=${key.json.id}`);
  t.is(owner.json.data.length, 2, 'an organization reader sees them too');
  t.true((await gw.gateway.audit.verify()).ok);
});
