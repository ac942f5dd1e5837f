import type { Context } from 'koa';
import type { Router } from '../http/router.js';
import type { Organization } from '../org/organization.js';
import { TEAM_RANK, type TeamRole } from '../org/permissions.js';
import type { TeamRecord, UserRecord } from '../org/records.js';
import { TakenError } from '../org/store.js';
import type { AdminGuard } from './guard.js';
import { noteAudit } from './guard.js';
import { jsonBody } from './json-body.js';

/**
 * SCIM 2.0 provisioning (RFC 7643/7644) at `/scim/v2`: the identity provider (Okta, Microsoft Entra
 * ID, …) creates, updates, suspends and removes users, and maps its groups to teams. Users are
 * matched by `userName` (their email); a group is a team (its `displayName` the team's name), its
 * members get the role a group rule gives that team, else `member`. `active: false` suspends a user
 * (their sessions and tokens stop at once); DELETE removes them. Authenticated with the SCIM token
 * (`GATEWAY_SCIM_TOKEN`) as a bearer token, or an admin credential holding `scim.provision`.
 */

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const CONTENT_TYPE = 'application/scim+json';

class ScimError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly scimType?: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

/** SCIM booleans arrive as JSON booleans, or (Entra ID) as the strings "True"/"False". */
const booleanOf = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : typeof value === 'string' ? value.toLowerCase() === 'true' : undefined);

/** `attribute eq "value"` (the only filter identity providers send for lookups); other filters are 400 `invalidFilter`. */
function parseFilter(filter: unknown): { attribute: string; value: string } | undefined {
  if (filter === undefined) return undefined;
  const match = typeof filter === 'string' ? /^\s*([A-Za-z.]+)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter) : null;
  if (!match) throw new ScimError(400, 'Only filters of the form `attribute eq "value"` are supported.', 'invalidFilter');
  return { attribute: match[1]!.toLowerCase(), value: match[2]!.replace(/\\(.)/g, '$1') };
}

function userResource(user: UserRecord, origin: string): Json {
  const [givenName, ...rest] = (user.name ?? '').split(' ');
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(user.external_id !== undefined ? { externalId: user.external_id } : {}),
    userName: user.email,
    displayName: user.name ?? user.email,
    ...(user.name ? { name: { givenName, familyName: rest.join(' '), formatted: user.name } } : {}),
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.status !== 'suspended',
    meta: { resourceType: 'User', created: user.created_at, lastModified: user.updated_at, location: `${origin}/scim/v2/Users/${user.id}` },
  };
}

function groupResource(team: TeamRecord, users: readonly UserRecord[], origin: string, withMembers = true): Json {
  return {
    schemas: [GROUP_SCHEMA],
    id: team.id,
    displayName: team.name,
    ...(withMembers ? { members: users.filter((user) => user.teams[team.id] !== undefined).map((user) => ({ value: user.id, display: user.email, $ref: `${origin}/scim/v2/Users/${user.id}` })) } : {}),
    meta: { resourceType: 'Group', created: team.created_at, lastModified: team.updated_at, location: `${origin}/scim/v2/Groups/${team.id}` },
  };
}

/** The user fields of a SCIM User body: email (userName, else the primary email), name, active, externalId. */
function userFields(body: Json): { email?: string; name?: string; active?: boolean; externalId?: string } {
  const emails = Array.isArray(body.emails) ? (body.emails as Json[]) : [];
  const primary = emails.find((email) => email.primary === true) ?? emails[0];
  const email = typeof body.userName === 'string' ? body.userName : typeof primary?.value === 'string' ? primary.value : undefined;
  const name = body.name as Json | undefined;
  const formatted = typeof name?.formatted === 'string' ? name.formatted : [name?.givenName, name?.familyName].filter((part) => typeof part === 'string' && part).join(' ');
  const display = typeof body.displayName === 'string' ? body.displayName : undefined;
  return {
    ...(email !== undefined ? { email: email.trim().toLowerCase() } : {}),
    ...((formatted || display) ? { name: (formatted || display)! } : {}),
    ...(booleanOf(body.active) !== undefined ? { active: booleanOf(body.active)! } : {}),
    ...(typeof body.externalId === 'string' ? { externalId: body.externalId } : {}),
  };
}

/** Mounts `/scim/v2`. */
/** What the SCIM routes share. */
function scimParts(dependencies: { guard: AdminGuard; organization: Organization }) {
  const { guard, organization } = dependencies;
  const { store } = organization;
  const body = jsonBody(1024 * 1024);
  const origin = (koa: Context) => `${koa.protocol}://${koa.host}`;
  const scim = guard.require('scim.provision');
  /** SCIM answers and errors in SCIM's shapes (`application/scim+json`, the Error schema). */
  const shaped = async (koa: Context, next: () => Promise<unknown>) => {
    try {
      await organization.ready();
      await next();
    } catch (error) {
      const status = error instanceof ScimError ? error.status : ((error as { status?: number }).status ?? 500);
      if (status === 401 || status === 403) throw error;
      koa.status = status;
      koa.body = { schemas: [ERROR_SCHEMA], status: String(status), ...(error instanceof ScimError && error.scimType ? { scimType: error.scimType } : {}), detail: (error as Error).message };
    }
    koa.type = CONTENT_TYPE;
  };
  const requestBody = (koa: Context): Json => {
    const value = (koa.request as { body?: unknown }).body;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ScimError(400, 'The body must be a JSON object.', 'invalidSyntax');
    return value as Json;
  };
  const user = async (id: string) => {
    const found = await store.user(id);
    if (!found) throw new ScimError(404, `No user ${id}.`);
    return found;
  };
  const team = async (id: string) => {
    const found = await store.team(id);
    if (!found) throw new ScimError(404, `No group ${id}.`);
    return found;
  };
  /** The role a group's members get in its team: the highest a group rule gives that team's name, else `member`. */
  const roleFor = (teamName: string): TeamRole =>
    organization.settings.groupRules
      .filter((rule) => rule.team === teamName && rule.teamRole !== undefined)
      .reduce<TeamRole>((best, rule) => (TEAM_RANK[rule.teamRole!] > TEAM_RANK[best] ? rule.teamRole! : best), 'member');

  const setMembers = async (teamRecord: TeamRecord, add: readonly string[], remove: readonly string[]) => {
    const role = roleFor(teamRecord.name);
    for (const id of add) {
      const member = await store.user(id);
      if (!member) throw new ScimError(400, `No user ${id} to add.`, 'invalidValue');
      if (member.teams[teamRecord.id] === undefined) await store.updateUser(id, { teams: { ...member.teams, [teamRecord.id]: role } });
    }
    for (const id of remove) {
      const member = await store.user(id);
      if (member?.teams[teamRecord.id] === undefined) continue;
      const { [teamRecord.id]: _removed, ...teams } = member.teams;
      await store.updateUser(id, { teams });
    }
  };
  const memberIds = (value: unknown): string[] => (Array.isArray(value) ? (value as Json[]).map((member) => String(member.value)) : []);

  return { store, body, origin, scim, shaped, requestBody, user, team, setMembers, memberIds };
}

/** Mounts `/scim/v2`. */
export function mountScim(router: Router, dependencies: { guard: AdminGuard; organization: Organization }): void {
  const parts = scimParts(dependencies);
  mountScimUsers(router, parts);
  mountScimGroups(router, parts);
}

/** `/scim/v2/ServiceProviderConfig` and `/scim/v2/Users`. */
function mountScimUsers(router: Router, parts: ReturnType<typeof scimParts>): void {
  const { store, body, origin, scim, shaped, requestBody, user } = parts;
  router.get('/scim/v2/ServiceProviderConfig', scim, shaped, (koa) => {
    koa.body = {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
      patch: { supported: true },
      bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
      filter: { supported: true, maxResults: 200 },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: false },
      authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: 'GATEWAY_SCIM_TOKEN', primary: true }],
    };
  });

  router.get('/scim/v2/Users', scim, shaped, async (koa) => {
    const filter = parseFilter(koa.query.filter);
    const users = (await store.users()).filter((candidate) => {
      if (!filter) return true;
      if (filter.attribute === 'username' || filter.attribute === 'emails.value') return candidate.email === filter.value.toLowerCase();
      if (filter.attribute === 'externalid') return candidate.external_id === filter.value;
      if (filter.attribute === 'id') return candidate.id === filter.value;
      throw new ScimError(400, `Filtering users by ${filter.attribute} is not supported.`, 'invalidFilter');
    });
    koa.body = listOf(koa, users.map((entry) => userResource(entry, origin(koa))));
  });

  router.post('/scim/v2/Users', scim, shaped, body, async (koa) => {
    const fields = userFields(requestBody(koa));
    if (!fields.email || !/^[^\s@]+@[^\s@]+$/.test(fields.email)) throw new ScimError(400, 'userName must be the user\'s email address.', 'invalidValue');
    try {
      const created = await store.createUser({
        email: fields.email,
        ...(fields.name ? { name: fields.name } : {}),
        status: fields.active === false ? 'suspended' : 'active',
        source: 'scim',
        ...(fields.externalId ? { external_id: fields.externalId } : {}),
      });
      noteAudit(koa, { target: { type: 'user', id: created.id }, changes: { email: { after: created.email }, status: { after: created.status } } });
      koa.status = 201;
      koa.body = userResource(created, origin(koa));
    } catch (error) {
      if (error instanceof TakenError) throw new ScimError(409, error.message, 'uniqueness');
      throw error;
    }
  });

  router.get('/scim/v2/Users/:id', scim, shaped, async (koa) => {
    koa.body = userResource(await user(koa.params.id!), origin(koa));
  });

  const applyUser = async (koa: Context, current: UserRecord, fields: ReturnType<typeof userFields>) => {
    if (fields.email !== undefined && fields.email !== current.email) {
      try {
        await store.changeEmail(current.id, fields.email);
      } catch (error) {
        if (error instanceof TakenError) throw new ScimError(409, error.message, 'uniqueness');
        throw error;
      }
    }
    const status = fields.active === undefined ? undefined : fields.active ? 'active' : 'suspended';
    const updated = (await store.updateUser(current.id, { name: fields.name, status, external_id: fields.externalId }))!;
    noteAudit(koa, {
      changes: Object.fromEntries(
        [
          ['email', current.email, updated.email],
          ['status', current.status, updated.status],
          ['name', current.name, updated.name],
        ]
          .filter(([, before, after]) => before !== after)
          .map(([field, before, after]) => [field as string, { before: before ?? null, after: after ?? null }]),
      ),
    });
    koa.body = userResource(updated, origin(koa));
  };

  router.put('/scim/v2/Users/:id', scim, shaped, body, async (koa) => {
    const current = await user(koa.params.id!);
    await applyUser(koa, current, userFields(requestBody(koa)));
  });

  router.patch('/scim/v2/Users/:id', scim, shaped, body, async (koa) => {
    const current = await user(koa.params.id!);
    const fields = patchedUserFields(operationsOf(requestBody(koa)), current);
    await applyUser(koa, current, fields);
  });

  router.delete('/scim/v2/Users/:id', scim, shaped, async (koa) => {
    const current = await user(koa.params.id!);
    await store.deleteUser(current.id);
    noteAudit(koa, { changes: { email: { before: current.email, after: null } } });
    koa.status = 204;
  });

}

/** `/scim/v2/Groups`: teams and their members. */
function mountScimGroups(router: Router, parts: ReturnType<typeof scimParts>): void {
  const { store, body, origin, scim, shaped, requestBody, team, setMembers, memberIds } = parts;
  router.get('/scim/v2/Groups', scim, shaped, async (koa) => {
    const filter = parseFilter(koa.query.filter);
    const [teams, users] = await Promise.all([store.teams(), store.users()]);
    const found = teams.filter((candidate) => {
      if (!filter) return true;
      if (filter.attribute === 'displayname') return candidate.name.toLowerCase() === filter.value.toLowerCase();
      if (filter.attribute === 'id') return candidate.id === filter.value;
      throw new ScimError(400, `Filtering groups by ${filter.attribute} is not supported.`, 'invalidFilter');
    });
    const withMembers = !String(koa.query.excludedAttributes ?? '').split(',').includes('members');
    koa.body = listOf(koa, found.map((entry) => groupResource(entry, users, origin(koa), withMembers)));
  });

  router.post('/scim/v2/Groups', scim, shaped, body, async (koa) => {
    const group = requestBody(koa);
    if (typeof group.displayName !== 'string' || !group.displayName.trim()) throw new ScimError(400, 'displayName is required.', 'invalidValue');
    const name = group.displayName.trim();
    // A group whose name is an existing team's is that team (teams created by hand can be provisioned).
    const existing = (await store.teams()).find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
    const created = existing ?? (await store.createTeam({ name, description: 'Provisioned by SCIM.' }));
    await setMembers(created, memberIds(group.members), []);
    noteAudit(koa, { target: { type: 'team', id: created.id }, changes: { name: { after: created.name } } });
    koa.status = 201;
    koa.body = groupResource(created, await store.users(), origin(koa));
  });

  router.get('/scim/v2/Groups/:id', scim, shaped, async (koa) => {
    koa.body = groupResource(await team(koa.params.id!), await store.users(), origin(koa));
  });

  router.put('/scim/v2/Groups/:id', scim, shaped, body, async (koa) => {
    const current = await team(koa.params.id!);
    const group = requestBody(koa);
    if (typeof group.displayName === 'string' && group.displayName.trim() && group.displayName.trim() !== current.name) await store.updateTeam(current.id, { name: group.displayName.trim() });
    const wanted = new Set(memberIds(group.members));
    const present = (await store.users()).filter((member) => member.teams[current.id] !== undefined).map((member) => member.id);
    await setMembers(current, [...wanted].filter((id) => !present.includes(id)), present.filter((id) => !wanted.has(id)));
    koa.body = groupResource((await store.team(current.id))!, await store.users(), origin(koa));
  });

  router.patch('/scim/v2/Groups/:id', scim, shaped, body, async (koa) => {
    const current = await team(koa.params.id!);
    for (const operation of operationsOf(requestBody(koa))) {
      const path = operation.path?.toLowerCase();
      const filtered = /^members\[value eq "([^"]+)"\]$/i.exec(operation.path ?? '');
      if (operation.op === 'add' && path === 'members') await setMembers(current, memberIds(operation.value), []);
      else if (operation.op === 'remove' && filtered) await setMembers(current, [], [filtered[1]!]);
      else if (operation.op === 'remove' && path === 'members') {
        const ids = memberIds(operation.value);
        await setMembers(current, [], ids.length > 0 ? ids : (await store.users()).filter((member) => member.teams[current.id] !== undefined).map((member) => member.id));
      } else if (operation.op === 'replace' && path === 'members') {
        const wanted = new Set(memberIds(operation.value));
        const present = (await store.users()).filter((member) => member.teams[current.id] !== undefined).map((member) => member.id);
        await setMembers(current, [...wanted].filter((id) => !present.includes(id)), present.filter((id) => !wanted.has(id)));
      } else if (operation.op === 'replace' && (path === 'displayname' || path === undefined)) {
        const name = path === undefined ? (operation.value as Json)?.displayName : operation.value;
        if (typeof name === 'string' && name.trim() && name.trim() !== current.name) await store.updateTeam(current.id, { name: name.trim() });
      } else throw new ScimError(400, `The operation ${operation.op} ${operation.path ?? ''} is not supported on groups.`, 'invalidValue');
    }
    noteAudit(koa, { target: { type: 'team', id: current.id } });
    if (koa.query.excludedAttributes === undefined && koa.get('prefer') !== 'return=minimal') koa.body = groupResource((await store.team(current.id))!, await store.users(), origin(koa));
    else koa.status = 204;
  });

  router.delete('/scim/v2/Groups/:id', scim, shaped, async (koa) => {
    const current = await team(koa.params.id!);
    // The group's members leave the team; the team itself stays (it may own keys and credentials).
    const members = (await store.users()).filter((member) => member.teams[current.id] !== undefined).map((member) => member.id);
    await setMembers(current, [], members);
    koa.status = 204;
  });
}

/** The user fields a SCIM PATCH sets: Okta's value objects (no path) and Entra ID's single attributes by path. */
function patchedUserFields(operations: ReturnType<typeof operationsOf>, current: UserRecord): ReturnType<typeof userFields> {
  const fields: ReturnType<typeof userFields> & Json = {};
  for (const operation of operations) {
    const op = operation.op;
    if (op !== 'replace' && op !== 'add') throw new ScimError(400, `The operation ${op} is not supported on users.`, 'invalidValue');
    // Without a path the value is an object of attributes (Okta); with one, a single attribute (Entra ID).
    const values: Json = operation.path === undefined ? ((operation.value as Json) ?? {}) : { [operation.path]: operation.value };
    for (const [path, value] of Object.entries(values)) {
      const attribute = path.toLowerCase();
      if (attribute === 'active') fields.active = booleanOf(value);
      else if (attribute === 'username') fields.email = String(value).trim().toLowerCase();
      else if (attribute === 'externalid') fields.externalId = String(value);
      else if (attribute === 'displayname' || attribute === 'name.formatted') fields.name = String(value);
      else if (attribute === 'name.givenname') fields.name = [String(value), (current.name ?? '').split(' ').slice(1).join(' ')].filter(Boolean).join(' ');
      else if (attribute === 'name.familyname') fields.name = [(current.name ?? '').split(' ')[0], String(value)].filter(Boolean).join(' ');
      else if (attribute === 'name' && value && typeof value === 'object') Object.assign(fields, userFields({ name: value }));
      // Other attributes (phone numbers, addresses, enterprise extension) are not kept: accepted and ignored.
    }
  }
  return fields;
}

/** A PATCH body's operations, with `op` lower-cased (Entra ID sends `Replace`, `Add`). */
function operationsOf(body: Json): Array<{ op: string; path?: string; value?: unknown }> {
  const operations = body.Operations ?? body.operations;
  if (!Array.isArray(operations)) throw new ScimError(400, 'A PATCH body needs Operations.', 'invalidSyntax');
  return (operations as Json[]).map((operation) => ({
    op: String(operation.op ?? '').toLowerCase(),
    ...(typeof operation.path === 'string' ? { path: operation.path } : {}),
    ...('value' in operation ? { value: operation.value } : {}),
  }));
}

/** A ListResponse page (`startIndex` 1-based, `count`). */
function listOf(koa: Context, resources: readonly Json[]): Json {
  const start = Math.max(1, Number.parseInt(String(koa.query.startIndex ?? '1'), 10) || 1);
  const count = Math.min(200, Math.max(0, Number.parseInt(String(koa.query.count ?? '100'), 10) || 100));
  const page = resources.slice(start - 1, start - 1 + count);
  return { schemas: [LIST_SCHEMA], totalResults: resources.length, startIndex: start, itemsPerPage: page.length, Resources: page };
}
