import test from 'ava';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';

// SCIM 2.0 provisioning with the requests Okta and Microsoft Entra ID send (their documented
// shapes): lookups by filter, creation, PATCH operations (Okta's value objects, Entra ID's paths,
// capitalised ops and string booleans), group membership, deprovisioning. A suspended user's
// session and tokens stop at once.

const SCIM_TOKEN = 'scim-token-0123456789abcdefghijklmnopqrstuvwxyz';
let gw: TestGateway;

test.before(async () => {
  gw = await startGateway({ organization: { groupRules: [{ group: 'unused', team: 'Platform', teamRole: 'team_admin' }] } }, { GATEWAY_SCIM_TOKEN: SCIM_TOKEN });
});
test.after.always(async () => gw?.close());

async function scim(method: string, path: string, body?: unknown, token = SCIM_TOKEN) {
  const response = await fetch(`${gw.url}/scim/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', json: text ? JSON.parse(text) : undefined };
}

const admin = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${gw.url}${path}`, { method, headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, json: (await response.json().catch(() => undefined)) as any };
};

test.serial('without the SCIM token: 401; a wrong token: 401', async (t) => {
  t.is((await fetch(`${gw.url}/scim/v2/Users`)).status, 401);
  t.is((await scim('GET', '/Users', undefined, 'wrong-token-0123456789abcdefghijklmnop')).status, 401);
  const config = await scim('GET', '/ServiceProviderConfig');
  t.is(config.status, 200);
  t.true(config.json.patch.supported);
});

test.serial('Okta: look up, create, deactivate with a value object, reactivate, groups push membership', async (t) => {
  const lookup = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ada@example.com"')}&startIndex=1&count=100`);
  t.is(lookup.status, 200);
  t.regex(lookup.type, /application\/scim\+json/);
  t.is(lookup.json.totalResults, 0);
  const created = await scim('POST', '/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: 'ada@example.com',
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ primary: true, value: 'ada@example.com', type: 'work' }],
    displayName: 'Ada Lovelace',
    active: true,
  });
  t.is(created.status, 201);
  t.is(created.json.userName, 'ada@example.com');
  t.true(created.json.active);
  const again = await scim('POST', '/Users', { userName: 'ADA@example.com', active: true });
  t.is(again.status, 409);
  t.is(again.json.scimType, 'uniqueness');

  const group = await scim('POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Platform', members: [] });
  t.is(group.status, 201);
  const added = await scim('PATCH', `/Groups/${group.json.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: [{ value: created.json.id, display: 'ada@example.com' }] }] });
  t.true(added.status === 200 || added.status === 204);
  const user = await admin('GET', `/admin/users/${created.json.id}`);
  t.deepEqual(user.json.teams, [{ team_id: group.json.id, role: 'team_admin' }], "the group rule's role for that team");
  t.is(user.json.source, 'scim');

  const deactivated = await scim('PATCH', `/Users/${created.json.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] });
  t.is(deactivated.status, 200);
  t.false(deactivated.json.active);
  t.is((await admin('GET', `/admin/users/${created.json.id}`)).json.status, 'suspended');
  t.true((await scim('PATCH', `/Users/${created.json.id}`, { Operations: [{ op: 'replace', value: { active: true } }] })).json.active);

  const removed = await scim('PATCH', `/Groups/${group.json.id}`, { Operations: [{ op: 'remove', path: `members[value eq "${created.json.id}"]` }] });
  t.true(removed.status === 200 || removed.status === 204);
  t.deepEqual((await admin('GET', `/admin/users/${created.json.id}`)).json.teams, []);
  const byName = await scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Platform"')}`);
  t.is(byName.json.Resources[0].id, group.json.id);
});

test.serial('Entra ID: string booleans, capitalised ops and paths, externalId, deprovisioning', async (t) => {
  const created = await scim('POST', '/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId: 'entra-object-1',
    userName: 'grace@example.com',
    active: true,
    displayName: 'Grace Hopper',
    emails: [{ primary: true, type: 'work', value: 'grace@example.com' }],
    name: { formatted: 'Grace Hopper', familyName: 'Hopper', givenName: 'Grace' },
  });
  t.is(created.status, 201);
  const byExternal = await scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "entra-object-1"')}`);
  t.is(byExternal.json.Resources[0].id, created.json.id);
  const patched = await scim('PATCH', `/Users/${created.json.id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [
      { op: 'Replace', path: 'name.familyName', value: 'Murray Hopper' },
      { op: 'Replace', path: 'active', value: 'False' },
    ],
  });
  t.is(patched.status, 200);
  t.false(patched.json.active);
  t.is(patched.json.name.formatted, 'Grace Murray Hopper');
  const group = await scim('POST', '/Groups', { displayName: 'Research', members: [{ value: created.json.id }] });
  t.is(group.json.members.length, 1);
  const removeAll = await scim('PATCH', `/Groups/${group.json.id}`, { Operations: [{ op: 'Remove', path: 'members', value: [{ value: created.json.id }] }] });
  t.true(removeAll.status === 200 || removeAll.status === 204);
  const gone = await scim('DELETE', `/Users/${created.json.id}`);
  t.is(gone.status, 204);
  const missing = await scim('GET', `/Users/${created.json.id}`);
  t.is(missing.status, 404);
  t.deepEqual(missing.json.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  t.is((await admin('GET', `/admin/users/${created.json.id}`)).status, 404);
  const badFilter = await scim('GET', `/Users?filter=${encodeURIComponent('userName sw "g"')}`);
  t.is(badFilter.status, 400);
  t.is(badFilter.json.scimType, 'invalidFilter');
});

test.serial('a user suspended by SCIM loses their dashboard session at once', async (t) => {
  const invited = await admin('POST', '/admin/users', { email: 'linus@example.com', role: 'auditor' });
  const landing = await fetch(invited.json.invitation.url, { redirect: 'manual' });
  const cookie = landing.headers.get('set-cookie')!.split(';')[0]!;
  const session = (await (await fetch(`${gw.url}/dashboard/session`, { headers: { cookie } })).json()) as { csrf_token: string };
  const read = () => fetch(`${gw.url}/admin/virtual-keys`, { headers: { cookie, 'x-gateway-csrf': session.csrf_token } });
  t.is((await read()).status, 200);
  t.is((await scim('PATCH', `/Users/${invited.json.id}`, { Operations: [{ op: 'replace', path: 'active', value: false }] })).status, 200);
  t.is((await read()).status, 401);
});
