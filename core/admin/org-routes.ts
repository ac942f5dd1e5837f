import { parseLevelLimits, parseTeamLimits } from './limits-input.js';
import type { LevelLimits } from '../vault/records.js';
import { parseMcpGrant } from './mcp-servers.js';
import type { Context } from 'koa';
import { invalid, optionalEnum, requireString } from '../api/validate.js';
import { errors } from '../errors.js';
import type { Router } from '../http/router.js';
import type { Access } from '../org/access.js';
import type { Organization } from '../org/organization.js';
import { GRANTABLE_EXTRAS, isPermission, ORG_RANK, ORG_ROLES, type OrgRole, type Permission, TEAM_ROLES, type TeamRole } from '../org/permissions.js';
import { DEFAULT_TEAM, type ServiceAccountRecord, type TeamRecord } from '../org/records.js';
import { accessOf, type AdminGuard, noteAudit } from './guard.js';
import { checkOrgGrant, checkQuotaWeight, checkTeamGrant, changesOf, emailOf, highestOrgRank, metadataOf, onlyFields, publicTeam, publicToken, publicUser, refused, rethrowConflict, stringList, tokenInput } from './org-input.js';
import { jsonBody, requestJson } from './json-body.js';
import { requireRecordName } from './virtual-keys-input.js';

export interface OrganizationAdminDependencies {
  readonly guard: AdminGuard;
  readonly organization: Organization;
  readonly providerIds: () => readonly string[];
  readonly policyExists: (name: string) => boolean;
  /** The stored route's id for an id or a name, when it exists. */
  readonly routeId: (idOrName: string) => Promise<string | undefined>;
  /** What a team owns (keys, credentials, routes): a team that owns anything is not deleted. */
  readonly ownedBy: (team: string) => Promise<number>;
  /** The gateway's public origin for invitation links (else the request's). */
  readonly publicUrl?: string;
  /** What a team, user, service account or the organization has used of its limits (core/vault/level-usage.ts). */
  readonly limitsUsage?: (subject: { level: 'organization' | 'team' | 'user'; id: string; serviceAccount?: boolean }, limits: LevelLimits) => Promise<unknown>;
}

const BODY_LIMIT = 256 * 1024;

const teamNotFound = (id: string) => errors.notFound(`No team with id "${id}".`, { code: 'team_not_found' });
const userNotFound = (id: string) => errors.notFound(`No user with id "${id}".`, { code: 'user_not_found' });
const accountNotFound = (id: string) => errors.notFound(`No service account with id "${id}".`, { code: 'service_account_not_found' });
const tokenNotFound = (id: string) => errors.notFound(`No token with id "${id}".`, { code: 'token_not_found' });
/**
 * The organization's admin API: teams and their members, users and invitations, service accounts,
 * personal access tokens, and `GET /admin/me`. Every route declares its permission; objects of a
 * team the caller cannot see answer 404; granting more than one holds is 403.
 */
export function mountOrganizationAdmin(router: Router, dependencies: OrganizationAdminDependencies): void {
  const { guard, organization } = dependencies;
  const { store } = organization;
  const body = jsonBody(BODY_LIMIT);
  const ready = async (_koa: Context, next: () => Promise<unknown>) => {
    await organization.ready();
    await next();
  };

  /** A team the caller may read (404 otherwise, existing or not). */
  const visibleTeam = async (access: Access, id: string, permission: Permission = 'teams.read'): Promise<TeamRecord> => {
    const team = await store.team(id);
    if (!team || !(access.holds(permission, id) || access.holds('teams.read', id))) throw teamNotFound(id);
    access.touch(id);
    return team;
  };

  const teamInput = (raw: Record<string, unknown>, creating: boolean) => {
    onlyFields(raw, ['name', 'description', 'metadata', 'allowed_providers', 'allowed_models', 'allowed_routes', 'allowed_credentials', 'guardrail_policy', 'limits', 'mcp', 'quota_weight']);
    if (raw.limits !== undefined && raw.limits !== null) parseTeamLimits(raw.limits);
    checkQuotaWeight(raw, creating);
    if (creating || raw.name !== undefined) requireRecordName(raw.name);
    if (raw.description !== undefined && raw.description !== null) requireString(raw.description, 'description', { max: 2048 });
    metadataOf(raw.metadata);
    const providers = stringList(raw.allowed_providers, 'allowed_providers');
    for (const [index, provider] of (providers ?? []).entries()) {
      if (!dependencies.providerIds().includes(provider)) throw invalid(`unknown provider "${provider}".`, { param: `allowed_providers[${index}]` });
    }
    stringList(raw.allowed_models, 'allowed_models');
    stringList(raw.allowed_routes, 'allowed_routes');
    stringList(raw.allowed_credentials, 'allowed_credentials');
    if (typeof raw.guardrail_policy === 'string' && !dependencies.policyExists(raw.guardrail_policy)) {
      throw invalid(`no guardrail policy named "${raw.guardrail_policy}" is configured.`, { param: 'guardrail_policy' });
    } else if (raw.guardrail_policy !== undefined && raw.guardrail_policy !== null && typeof raw.guardrail_policy !== 'string') {
      throw invalid('expected a policy name.', { param: 'guardrail_policy' });
    }
    // The team's MCP grant adds to each of its keys' own (docs/mcp.md); null on a PATCH removes it.
    if (raw.mcp !== undefined && !(raw.mcp === null && !creating)) raw.mcp = parseMcpGrant(raw.mcp);
    return raw;
  };

  const withMembers = async (team: TeamRecord) => {
    const users = await store.users();
    return {
      ...publicTeam(team),
      members: users.filter((user) => user.teams[team.id] !== undefined).map((user) => ({ user_id: user.id, email: user.email, role: user.teams[team.id], status: user.status })),
    };
  };

  // Service accounts

  const visibleAccount = async (access: Access, id: string): Promise<ServiceAccountRecord> => {
    const account = await store.serviceAccount(id);
    if (!account || !access.holds('service_accounts.read', account.team_id)) throw accountNotFound(id);
    access.touch(account.team_id);
    return account;
  };

  const accountInput = async (access: Access, raw: Record<string, unknown>, team: string) => {
    if (raw.limits !== undefined && raw.limits !== null) parseLevelLimits(raw.limits);
    if (raw.jwt_subject !== undefined && raw.jwt_subject !== null) requireString(raw.jwt_subject, 'jwt_subject', { nonEmpty: true, max: 512 });
    optionalEnum(raw.role, 'role', TEAM_ROLES);
    if (raw.role !== undefined) checkTeamGrant(access, team, raw.role as TeamRole);
    if (raw.route !== undefined && raw.route !== null) {
      const id = await dependencies.routeId(requireString(raw.route, 'route', { nonEmpty: true, max: 256 }));
      if (id === undefined) throw invalid(`no stored route with id or name "${String(raw.route)}".`, { param: 'route' });
      raw.route = id;
    }
  };

  /** A one-time invitation link for a user. */
  const invitationFor = async (koa: Context, userId: string): Promise<{ url: string; expires_at: string }> => {
    const { token, expiresAt } = await store.invite(userId, organization.settings.invitationTtlMs);
    return { url: `${dependencies.publicUrl ?? `${koa.protocol}://${koa.host}`}/dashboard/invitations/${token}`, expires_at: expiresAt };
  };
  const parts = { guard, store, body, ready, dependencies, organization, visibleTeam, teamInput, withMembers, invitationFor, visibleAccount, accountInput };
  for (const mount of [mountOrganization, mountTeams, mountMembers, mountUsers, mountTokens, mountServiceAccounts]) mount(router, parts);
}

/** What a subject with limits has used of them (null without limits). */
async function usageOf(dependencies: OrganizationAdminDependencies, subject: Parameters<NonNullable<OrganizationAdminDependencies['limitsUsage']>>[0], limits: LevelLimits | undefined): Promise<unknown> {
  return limits === undefined || dependencies.limitsUsage === undefined ? null : dependencies.limitsUsage(subject, limits);
}

/** The organization's own limits (the level above every team). */
function mountOrganization(router: Router, parts: Parts): void {
  const { guard, store, body, ready } = parts;
  router.get('/admin/organization', guard.require('teams.read'), ready, async (koa) => {
    const limits = (await store.organizationLimits()) ?? null;
    koa.body = { limits, limits_usage: await usageOf(parts.dependencies, { level: 'organization', id: 'organization' }, limits ?? undefined) };
  });

  router.patch('/admin/organization', guard.require('organization.write'), ready, body, async (koa) => {
    const raw = requestJson(koa);
    onlyFields(raw, ['limits']);
    if (raw.limits === undefined) throw invalid('give limits (an object, or null to remove them).', { param: 'limits' });
    const before = (await store.organizationLimits()) ?? null;
    const limits = raw.limits === null ? null : parseLevelLimits(raw.limits);
    await store.setOrganizationLimits(limits);
    noteAudit(koa, { target: { type: 'organization', id: 'organization' }, changes: { limits: { before, after: limits } } });
    koa.body = { limits };
  });
}

/** What the organization's route groups share. */
interface Parts {
  readonly guard: AdminGuard;
  readonly store: Organization['store'];
  readonly body: ReturnType<typeof jsonBody>;
  readonly ready: (koa: Context, next: () => Promise<unknown>) => Promise<void>;
  readonly dependencies: OrganizationAdminDependencies;
  readonly organization: Organization;
  readonly visibleTeam: (access: Access, id: string, permission?: Permission) => Promise<TeamRecord>;
  readonly teamInput: (raw: Record<string, unknown>, creating: boolean) => Record<string, unknown>;
  readonly withMembers: (team: TeamRecord) => Promise<TeamRecord & { members: unknown[] }>;
  readonly invitationFor: (koa: Context, userId: string) => Promise<{ url: string; expires_at: string }>;
  readonly visibleAccount: (access: Access, id: string) => Promise<ServiceAccountRecord>;
  readonly accountInput: (access: Access, raw: Record<string, unknown>, team: string) => Promise<void>;
}

/** Teams: create, list, read, change, delete. */
function mountTeams(router: Router, parts: Parts): void {
  const { guard, store, body, ready, dependencies, visibleTeam, teamInput, withMembers } = parts;
  // Teams

  router.post('/admin/teams', guard.require('teams.write'), ready, body, async (koa) => {
    const input = teamInput(requestJson(koa), true);
    const team = await store.createTeam(input as never).catch(rethrowConflict);
    noteAudit(koa, { target: { type: 'team', id: team.id }, changes: Object.fromEntries(Object.entries(input).map(([field, after]) => [field, { after }])) });
    koa.status = 201;
    koa.body = await withMembers(team);
  });

  router.get('/admin/teams', guard.require('teams.read'), ready, async (koa) => {
    const access = accessOf(koa);
    const teams = (await store.teams()).filter((team) => access.holds('teams.read', team.id));
    koa.body = { object: 'list', data: teams.map(publicTeam) };
  });

  router.get('/admin/teams/:id', guard.require('teams.read'), ready, async (koa) => {
    const team = await visibleTeam(accessOf(koa), koa.params.id!);
    koa.body = { ...(await withMembers(team)), limits_usage: await usageOf(dependencies, { level: 'team', id: team.id }, team.limits) };
  });

  router.patch('/admin/teams/:id', guard.require('teams.write'), ready, body, async (koa) => {
    const current = await visibleTeam(accessOf(koa), koa.params.id!);
    const input = teamInput(requestJson(koa), false);
    const team = await store.updateTeam(current.id, input).catch(rethrowConflict);
    if (!team) throw teamNotFound(current.id);
    noteAudit(koa, { changes: changesOf(current, team, Object.keys(input)) });
    koa.body = await withMembers(team);
  });

  router.delete('/admin/teams/:id', guard.require('teams.write'), ready, async (koa) => {
    const team = await visibleTeam(accessOf(koa), koa.params.id!);
    if (team.id === DEFAULT_TEAM) throw errors.conflict('The default team cannot be deleted.', { code: 'team_not_empty' });
    const owned = (await dependencies.ownedBy(team.id)) + (await store.serviceAccounts()).filter((account) => account.team_id === team.id).length;
    if (owned > 0) throw errors.conflict(`The team owns ${owned} object(s) (keys, credentials, routes, service accounts): move or delete them first.`, { code: 'team_not_empty' });
    for (const user of await store.users()) {
      if (user.teams[team.id] !== undefined) {
        const { [team.id]: _removed, ...teams } = user.teams;
        await store.updateUser(user.id, { teams });
      }
    }
    await store.deleteTeam(team.id);
    koa.status = 204;
  });

}

/** A team's members: add (inviting an unknown email) and remove. */
function mountMembers(router: Router, parts: Parts): void {
  const { guard, store, body, ready, visibleTeam, invitationFor } = parts;
  // Members

  router.post('/admin/teams/:id/members', guard.require('members.write'), ready, body, async (koa) => {
    const access = accessOf(koa);
    const team = await visibleTeam(access, koa.params.id!, 'members.write');
    if (!access.holds('members.write', team.id)) throw refused('Your role in this team does not allow managing its members.');
    const raw = requestJson(koa);
    onlyFields(raw, ['email', 'role']);
    const email = emailOf(raw.email);
    optionalEnum(raw.role, 'role', TEAM_ROLES);
    const role = (raw.role ?? 'member') as TeamRole;
    checkTeamGrant(access, team.id, role);
    let user = await store.userByEmail(email);
    if (user && access.userId === user.id) throw refused('You cannot change your own role.');
    let invitation: { url: string; expires_at: string } | undefined;
    const before = user?.teams[team.id];
    if (!user) {
      user = await store.createUser({ email, status: 'invited', source: 'invitation', teams: { [team.id]: role } }).catch(rethrowConflict);
      invitation = await invitationFor(koa, user.id);
    } else {
      user = (await store.updateUser(user.id, { teams: { ...user.teams, [team.id]: role } }))!;
    }
    noteAudit(koa, { target: { type: 'team', id: team.id }, changes: { [`members.${user.id}`]: { before: before ?? null, after: role } } });
    koa.status = 201;
    koa.body = { team_id: team.id, user: publicUser(user), role, ...(invitation ? { invitation } : {}) };
  });

  router.delete('/admin/teams/:id/members/:user', guard.require('members.write'), ready, async (koa) => {
    const access = accessOf(koa);
    const team = await visibleTeam(access, koa.params.id!, 'members.write');
    if (!access.holds('members.write', team.id)) throw refused('Your role in this team does not allow managing its members.');
    const user = await store.user(koa.params.user!);
    const role = user?.teams[team.id];
    if (!user || role === undefined) throw userNotFound(koa.params.user!);
    if (access.userId === user.id) throw refused('You cannot remove yourself from a team; ask another team admin.');
    checkTeamGrant(access, team.id, role);
    const { [team.id]: _removed, ...teams } = user.teams;
    await store.updateUser(user.id, { teams });
    noteAudit(koa, { target: { type: 'team', id: team.id }, changes: { [`members.${user.id}`]: { before: role, after: null } } });
    koa.status = 204;
  });

}

/** Users and invitations, and who the caller is (`GET /admin/me`). */
function mountUsers(router: Router, parts: Parts): void {
  const { guard, store, body, ready, invitationFor } = parts;
  // Users

  router.post('/admin/users', guard.require('users.write'), ready, body, async (koa) => {
    const access = accessOf(koa);
    const raw = requestJson(koa);
    onlyFields(raw, ['email', 'name', 'role', 'limits']);
    const email = emailOf(raw.email);
    if (raw.limits !== undefined) parseLevelLimits(raw.limits);
    if (raw.name !== undefined) requireString(raw.name, 'name', { max: 256 });
    optionalEnum(raw.role, 'role', ORG_ROLES);
    if (raw.role !== undefined) checkOrgGrant(access, raw.role as OrgRole);
    const user = await store
      .createUser({
        email,
        ...(raw.name !== undefined ? { name: raw.name as string } : {}),
        ...(raw.role !== undefined ? { role: raw.role as OrgRole } : {}),
        ...(raw.limits !== undefined ? { limits: raw.limits as LevelLimits } : {}),
        status: 'invited',
        source: 'invitation',
      })
      .catch(rethrowConflict);
    noteAudit(koa, { target: { type: 'user', id: user.id }, changes: { email: { after: email }, role: { after: user.role ?? null } } });
    koa.status = 201;
    koa.body = { ...publicUser(user), invitation: await invitationFor(koa, user.id) };
  });

  router.get('/admin/users', guard.require('users.read'), ready, async (koa) => {
    koa.body = { object: 'list', data: (await store.users()).map(publicUser) };
  });

  router.get('/admin/users/:id', guard.require('users.read'), ready, async (koa) => {
    const user = await store.user(koa.params.id!);
    if (!user) throw userNotFound(koa.params.id!);
    koa.body = { ...publicUser(user), limits_usage: await usageOf(parts.dependencies, { level: 'user', id: user.id }, user.limits) };
  });

  router.patch('/admin/users/:id', guard.require('users.write'), ready, body, async (koa) => {
    const access = accessOf(koa);
    const current = await store.user(koa.params.id!);
    if (!current) throw userNotFound(koa.params.id!);
    const raw = requestJson(koa);
    onlyFields(raw, ['name', 'role', 'status', 'permissions', 'limits']);
    if (raw.name !== undefined && raw.name !== null) requireString(raw.name, 'name', { max: 256 });
    if (raw.limits !== undefined && raw.limits !== null) parseLevelLimits(raw.limits);
    optionalEnum(raw.status, 'status', ['active', 'suspended']);
    if (raw.role !== null) optionalEnum(raw.role, 'role', ORG_ROLES);
    const permissions = stringList(raw.permissions, 'permissions');
    for (const [index, permission] of (permissions ?? []).entries()) {
      if (!isPermission(permission) || !GRANTABLE_EXTRAS.has(permission)) throw invalid(`only ${[...GRANTABLE_EXTRAS].join(', ')} may be granted besides a role.`, { param: `permissions[${index}]` });
      if (!access.organizationWide(permission)) throw refused(`You cannot grant ${permission}: you do not hold it.`);
    }
    const changesRole = raw.role !== undefined && raw.role !== (current.role ?? null);
    if (access.userId === current.id && (changesRole || raw.status !== undefined || permissions !== undefined)) throw refused('You cannot change your own role, status or permissions.');
    if (current.role === 'owner' && (changesRole || raw.status === 'suspended') && !access.organizationWide('owners.manage')) throw refused('Only an owner may change or suspend an owner.');
    if (changesRole && raw.role !== null) checkOrgGrant(access, raw.role as OrgRole);
    if (changesRole && current.role !== undefined && ORG_RANK[current.role] > highestOrgRank(access)) throw refused('You cannot change the role of a user whose role is above yours.');
    const user = (await store.updateUser(current.id, { name: raw.name, role: raw.role, status: raw.status, permissions, limits: raw.limits }))!;
    noteAudit(koa, { changes: changesOf(current, user, Object.keys(raw)) });
    koa.body = publicUser(user);
  });

  router.post('/admin/users/:id/invitation', guard.require('users.write'), ready, async (koa) => {
    const user = await store.user(koa.params.id!);
    if (!user) throw userNotFound(koa.params.id!);
    if (user.status !== 'invited') throw errors.conflict('The user has already accepted an invitation.', { code: 'user_active' });
    koa.status = 201;
    koa.body = { invitation: await invitationFor(koa, user.id) };
  });

  // Me

  router.get('/admin/me', guard.authenticated(), ready, async (koa) => {
    const access = accessOf(koa);
    const { principal } = access;
    koa.body = {
      actor: access.actor,
      ...(principal.kind === 'user' ? { user: publicUser(principal.user) } : {}),
      ...(principal.kind === 'service-account' ? { service_account: principal.account } : {}),
      permissions: [...access.everywhere].sort(),
      teams: [...access.inTeam].map(([team_id, permissions]) => ({ team_id, role: access.roleIn(team_id) ?? null, permissions: [...permissions].sort() })),
    };
  });

}

/** Personal access tokens: created by a signed-in user, shown once, revoked. */
function mountTokens(router: Router, parts: Parts): void {
  const { guard, store, body, ready } = parts;
  // Personal access tokens

  router.post('/admin/tokens', guard.require('tokens.write'), ready, body, async (koa) => {
    const access = accessOf(koa);
    const { principal } = access;
    if (principal.kind !== 'user') throw invalid('Personal access tokens belong to users: sign in as a user (service accounts get tokens from POST /admin/service-accounts/{id}/tokens).', { param: 'name' });
    if (principal.token) throw refused('A token cannot create tokens: sign in to the dashboard to create one.');
    const raw = requestJson(koa);
    onlyFields(raw, ['name', 'expires_in_days', 'permissions']);
    const input = tokenInput(access, raw);
    const { record, token } = await store.createToken({ ...input, owner: { type: 'user', id: principal.user.id } });
    noteAudit(koa, { target: { type: 'token', id: record.id }, changes: { name: { after: record.name }, expires_at: { after: record.expires_at ?? null } } });
    koa.status = 201;
    koa.body = { ...publicToken(record), token };
  });

  router.get('/admin/tokens', guard.require('tokens.write'), ready, async (koa) => {
    const access = accessOf(koa);
    const { principal } = access;
    const all = access.organizationWide('users.read') && koa.query.all === 'true';
    const tokens = all ? await store.tokens() : principal.kind === 'user' ? await store.tokens({ type: 'user', id: principal.user.id }) : [];
    koa.body = { object: 'list', data: tokens.map(publicToken) };
  });

  router.delete('/admin/tokens/:id', guard.require('tokens.write'), ready, async (koa) => {
    const access = accessOf(koa);
    const token = await store.token(koa.params.id!);
    const own = token?.owner.type === 'user' && token.owner.id === access.userId;
    if (!token || !(own || (token.owner.type === 'user' && access.organizationWide('users.write')))) throw tokenNotFound(koa.params.id!);
    await store.revokeToken(token.id);
    koa.status = 204;
  });

}

/** Service accounts of a team and their tokens. */
function mountServiceAccounts(router: Router, parts: Parts): void {
  const { guard, store, body, ready, visibleAccount, accountInput } = parts;
  router.post('/admin/service-accounts', guard.require('service_accounts.write'), ready, body, async (koa) => {
    const access = accessOf(koa);
    const raw = requestJson(koa);
    onlyFields(raw, ['name', 'team_id', 'jwt_subject', 'route', 'role', 'limits']);
    const name = requireRecordName(raw.name);
    const teamId = requireString(raw.team_id, 'team_id', { nonEmpty: true, max: 128 });
    if (!(await store.team(teamId)) || !access.holds('teams.read', teamId)) throw teamNotFound(teamId);
    access.touch(teamId);
    if (!access.holds('service_accounts.write', teamId)) throw refused('Your role in this team does not allow creating service accounts.');
    await accountInput(access, raw, teamId);
    const account = await store
      .createServiceAccount({
        name,
        team_id: teamId,
        role: (raw.role ?? 'member') as TeamRole,
        ...(typeof raw.jwt_subject === 'string' ? { jwt_subject: raw.jwt_subject } : {}),
        ...(typeof raw.route === 'string' ? { route: raw.route } : {}),
        ...(raw.limits !== undefined && raw.limits !== null ? { limits: raw.limits as LevelLimits } : {}),
      })
      .catch(rethrowConflict);
    noteAudit(koa, { target: { type: 'service-account', id: account.id }, changes: { name: { after: name }, team_id: { after: teamId }, role: { after: account.role } } });
    koa.status = 201;
    koa.body = account;
  });

  router.get('/admin/service-accounts', guard.require('service_accounts.read'), ready, async (koa) => {
    const access = accessOf(koa);
    koa.body = { object: 'list', data: (await store.serviceAccounts()).filter((account) => access.holds('service_accounts.read', account.team_id)) };
  });

  router.get('/admin/service-accounts/:id', guard.require('service_accounts.read'), ready, async (koa) => {
    const account = await visibleAccount(accessOf(koa), koa.params.id!);
    koa.body = { ...account, limits_usage: await usageOf(parts.dependencies, { level: 'user', id: account.id, serviceAccount: true }, account.limits) };
  });

  router.patch('/admin/service-accounts/:id', guard.require('service_accounts.write'), ready, body, async (koa) => {
    const access = accessOf(koa);
    const current = await visibleAccount(access, koa.params.id!);
    if (!access.holds('service_accounts.write', current.team_id)) throw refused('Your role in this team does not allow changing service accounts.');
    const raw = requestJson(koa);
    onlyFields(raw, ['name', 'jwt_subject', 'route', 'role', 'limits']);
    if (raw.name !== undefined) requireRecordName(raw.name);
    await accountInput(access, raw, current.team_id);
    const account = await store.updateServiceAccount(current.id, raw).catch(rethrowConflict);
    noteAudit(koa, { changes: changesOf(current, account!, Object.keys(raw)) });
    koa.body = account;
  });

  router.delete('/admin/service-accounts/:id', guard.require('service_accounts.write'), ready, async (koa) => {
    const access = accessOf(koa);
    const current = await visibleAccount(access, koa.params.id!);
    if (!access.holds('service_accounts.write', current.team_id)) throw refused('Your role in this team does not allow deleting service accounts.');
    await store.deleteServiceAccount(current.id);
    koa.status = 204;
  });

  router.post('/admin/service-accounts/:id/tokens', guard.require('service_accounts.write'), ready, body, async (koa) => {
    const access = accessOf(koa);
    const account = await visibleAccount(access, koa.params.id!);
    if (!access.holds('service_accounts.write', account.team_id)) throw refused('Your role in this team does not allow creating tokens for its service accounts.');
    const raw = requestJson(koa);
    onlyFields(raw, ['name', 'expires_in_days']);
    const input = tokenInput(access, raw);
    const { record, token } = await store.createToken({ ...input, owner: { type: 'service-account', id: account.id } });
    noteAudit(koa, { target: { type: 'token', id: record.id }, changes: { owner: { after: account.id }, name: { after: record.name } } });
    koa.status = 201;
    koa.body = { ...publicToken(record), token };
  });

  /** A one-time invitation link for a user. */
}


