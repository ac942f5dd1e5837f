import { invalid, requireString } from '../api/validate.js';
import { errors } from '../errors.js';
import { type Access, type Owned, teamOf } from '../org/access.js';
import type { Permission } from '../org/permissions.js';
import { DEFAULT_TEAM, type TeamRecord } from '../org/records.js';

/** What ownership checks read: teams and users, by id. */
export interface OwnershipLookups {
  readonly team: (id: string) => Promise<TeamRecord | undefined>;
  readonly userExists: (id: string) => Promise<boolean>;
  readonly serviceAccountTeam: (id: string) => Promise<string | undefined>;
}

/** The owner fields of a body (`team_id`, `user_id`, `service_account_id`), as stored. */
export interface Ownership {
  team_id: string | null;
  user_id?: string;
  service_account_id?: string;
}

const teamNotFound = (id: string) => errors.notFound(`No team with id "${id}".`, { code: 'team_not_found' });

/**
 * Whom a new object belongs to, from the body's `team_id` (a team id, or null for the organization)
 * and, for keys, `user_id` / `service_account_id`, checked against what the caller may do:
 * - without `team_id`: the caller's only team where it holds `permission`, else `default` for an
 *   organization-wide caller; a caller in several teams must name one (400);
 * - a team the caller cannot see is 404 (as if it did not exist); one it sees but may not write is 403;
 * - a `member` creates keys for itself only (`user_id` is set to it).
 */
export async function ownershipOf(access: Access, body: Record<string, unknown>, permission: Permission, lookups: OwnershipLookups, options: { keys?: boolean } = {}): Promise<Ownership> {
  let team: string | null;
  if (body.team_id === null) team = null;
  else if (body.team_id !== undefined) team = requireString(body.team_id, 'team_id', { nonEmpty: true, max: 128 });
  else {
    const teams = access.teamsWith(permission);
    if (teams === undefined) team = DEFAULT_TEAM;
    else if (teams.length === 1) team = teams[0]!;
    else throw invalid(`you belong to several teams: name the owner in team_id (one of ${teams.join(', ')}).`, { param: 'team_id' });
  }
  if (team !== null) {
    if (!(await lookups.team(team)) || !(access.organizationWide('teams.read') || access.roleIn(team) !== undefined)) throw teamNotFound(team);
  }
  if (!access.holds(permission, team)) {
    throw errors.permission(team === null ? 'Only an organization admin may create objects shared by the whole organization (team_id: null).' : `Your role in team ${team} does not allow this (${permission}).`, { code: 'permission_denied' });
  }
  const ownership: Ownership = { team_id: team };
  access.touch(team);
  if (options.keys) {
    if (body.user_id !== undefined && body.user_id !== null) {
      const user = requireString(body.user_id, 'user_id', { nonEmpty: true, max: 128 });
      if (!(await lookups.userExists(user))) throw errors.notFound(`No user with id "${user}".`, { code: 'user_not_found' });
      ownership.user_id = user;
    }
    if (body.service_account_id !== undefined && body.service_account_id !== null) {
      const account = requireString(body.service_account_id, 'service_account_id', { nonEmpty: true, max: 128 });
      const accountTeam = await lookups.serviceAccountTeam(account);
      if (accountTeam === undefined || !access.holds('service_accounts.read', accountTeam)) throw errors.notFound(`No service account with id "${account}".`, { code: 'service_account_not_found' });
      if (accountTeam !== team) throw invalid(`the service account belongs to team ${accountTeam}, not ${team ?? 'the organization'}.`, { param: 'service_account_id' });
      ownership.service_account_id = account;
    }
    if (team !== null && access.ownKeysOnly(team) && !access.organizationWide(permission)) {
      const self = access.userId;
      if (ownership.user_id !== undefined && ownership.user_id !== self) throw errors.permission('As a member you create keys for yourself only.', { code: 'permission_denied' });
      if (self !== undefined) ownership.user_id = self;
      else if (access.principal.kind === 'service-account') ownership.service_account_id = access.principal.account.id;
    }
  }
  return ownership;
}

/**
 * An object the caller may read, or the `notFound` error (404: another team's objects are
 * invisible); read-only callers get 403 when they ask to change something they can see.
 */
export function visible<T extends Owned>(access: Access, object: T | undefined, permission: Permission, notFound: () => Error): T {
  if (!object || !access.mayRead(readPermissionOf(permission), object)) throw notFound();
  access.touch(teamOf(object));
  if (permission.endsWith('.write') && !access.mayChange(permission, object)) {
    throw errors.permission(`Your role does not allow changing this (${permission}).`, { code: 'permission_denied' });
  }
  return object;
}

/** The read permission that goes with a write one (`keys.write` → `keys.read`). */
const readPermissionOf = (permission: Permission): Permission => (permission.endsWith('.write') ? (permission.replace(/\.write$/, '.read') as Permission) : permission);

/**
 * Whether a key of `team` may use an object (a credential or a route) owned as `object` is: its
 * own team's, or a shared one the team's allow list (when it has one) names. A key of the
 * organization (team null) may use anything.
 */
export function usableBy(team: string | null, teamRecord: TeamRecord | undefined, object: Owned & { id: string }, allowList: 'allowed_credentials' | 'allowed_routes'): boolean {
  const owner = teamOf(object);
  if (team === null || owner === team) return true;
  if (owner !== null) return false;
  const allowed = teamRecord?.[allowList];
  return allowed === undefined || allowed.includes(object.id);
}
