import type { GatewayContext } from '../pipeline/context.js';
import type { ServiceAccountRecord, TeamRecord, UserRecord } from '../org/records.js';
import { counterPart, type Level, limitsSomething, subjectBase } from './levels.js';
import type { LevelLimits, VirtualKeyLimits, VirtualKeyRecord } from './records.js';

type Lookup<Value> = (id: string) => Value | undefined | Promise<Value | undefined>;

/** Where the levels above a key come from (core/org's records, kept a second on the request path). */
export interface Principals {
  readonly team?: Lookup<TeamRecord>;
  readonly user?: Lookup<UserRecord>;
  readonly serviceAccount?: Lookup<ServiceAccountRecord>;
  /** The organization's own limits (`PATCH /admin/organization`). */
  readonly organization?: () => LevelLimits | undefined | Promise<LevelLimits | undefined>;
  /** A request header naming the end user when the body names none (`vault.endUserHeader`). */
  readonly endUserHeader?: string;
}

/**
 * The end user a request acts for: the body's `user` (OpenAI's operations), a Messages request's
 * `metadata.user_id`, else the configured header. Undefined when none names one.
 */
export function endUserOf(context: GatewayContext, header: string | undefined): string | undefined {
  const body = context.request.body;
  if (body !== null && typeof body === 'object') {
    const { user, metadata } = body as { user?: unknown; metadata?: unknown };
    if (typeof user === 'string' && user !== '') return user;
    const fromMetadata = metadata !== null && typeof metadata === 'object' ? (metadata as { user_id?: unknown }).user_id : undefined;
    if (typeof fromMetadata === 'string' && fromMetadata !== '') return fromMetadata;
  }
  const named = header === undefined ? undefined : context.incoming.headers[header];
  return named === undefined || named === '' ? undefined : named;
}

/** The end-user and tag levels the rules of one key or team (`scope`) give this request. */
function ruleLevels(limits: VirtualKeyLimits | undefined, scope: { base: string; of: string }, context: GatewayContext, endUser: string | undefined): Level[] {
  if (limits === undefined) return [];
  const levels: Level[] = [];
  if (limits.end_users !== undefined && endUser !== undefined) {
    levels.push({ level: 'end_user', id: endUser, label: `End user "${endUser}" (a rule of ${scope.of})`, limits: limits.end_users, base: `${scope.base}:eu:${counterPart(endUser)}` });
  }
  for (const [metadataKey, byValue] of Object.entries(limits.tags ?? {})) {
    const value = context.metadata[metadataKey];
    if (value === undefined) continue;
    const tagLimits = byValue[value] ?? byValue['*'];
    if (tagLimits === undefined) continue;
    levels.push({ level: 'tag', id: `${metadataKey}=${value}`, label: `Tag ${metadataKey}=${value} (a rule of ${scope.of})`, limits: tagLimits, base: `${scope.base}:tag:${counterPart(metadataKey)}=${counterPart(value)}` });
  }
  return levels;
}

/**
 * The level of a record (a key, team, user, service account, the organization's limits): built once
 * per record object (records are kept a second on the request path), none when it limits nothing.
 */
const ownLevels = new WeakMap<object, readonly Level[]>();
function ownLevel(record: object, build: () => Level | undefined): readonly Level[] {
  let levels = ownLevels.get(record);
  if (levels === undefined) {
    const level = build();
    ownLevels.set(record, (levels = level === undefined ? [] : [level]));
  }
  return levels;
}

/** A team's own level (when it limits something) and its rules' levels. */
function teamLevels(team: TeamRecord | undefined, context: GatewayContext, endUser: string | undefined): readonly Level[] {
  if (team?.limits === undefined) return [];
  const own = ownLevel(team, () => (limitsSomething(team.limits!) ? { level: 'team', id: team.id, label: `Team ${team.name}`, name: team.name, limits: team.limits!, base: subjectBase('team', team.id) } : undefined));
  if (team.limits.end_users === undefined && team.limits.tags === undefined) return own;
  return [...ruleLevels(team.limits, { base: subjectBase('team', team.id), of: `team ${team.name}` }, context, endUser), ...own];
}

async function organizationLevel(principals: Principals): Promise<readonly Level[]> {
  const limits = await principals.organization?.();
  return limits === undefined ? [] : ownLevel(limits, () => (limitsSomething(limits) ? { level: 'organization', id: 'organization', label: 'The organization', limits, base: subjectBase('organization', 'organization') } : undefined));
}

const userLevel = (user: UserRecord | undefined): readonly Level[] =>
  user?.limits === undefined ? [] : ownLevel(user, () => (limitsSomething(user.limits!) ? { level: 'user', id: user.id, label: `User ${user.email}`, name: user.email, limits: user.limits!, base: subjectBase('user', user.id) } : undefined));

const accountLevel = (account: ServiceAccountRecord | undefined): readonly Level[] =>
  account?.limits === undefined
    ? []
    : ownLevel(account, () =>
        limitsSomething(account.limits!) ? { level: 'user', id: account.id, label: `Service account ${account.name}`, name: account.name, limits: account.limits!, base: subjectBase('user', account.id, true) } : undefined,
      );

/**
 * Every level a virtual key's request is admitted and charged at, narrowest first: the key (always:
 * its counters feed the usage API), its end-user and tag rules, the user or service account that owns
 * it, its team (the key's `team_id`: the one team the request is charged to, whichever other teams
 * its user belongs to) with the team's rules, and the organization.
 */
export async function keyLevels(record: VirtualKeyRecord, team: TeamRecord | undefined, context: GatewayContext, principals: Principals): Promise<Level[]> {
  const endUser = record.limits?.end_users !== undefined || team?.limits?.end_users !== undefined ? endUserOf(context, principals.endUserHeader) : undefined;
  const levels: Level[] = [...ownLevel(record, () => ({ level: 'key', id: record.id, label: 'This key', name: record.name, limits: record.limits ?? {}, base: `usage:${record.id}`, countsRequests: true }))];
  if (record.limits?.end_users !== undefined || record.limits?.tags !== undefined) levels.push(...ruleLevels(record.limits, { base: `usage:${record.id}`, of: 'this key' }, context, endUser));
  if (record.user_id !== undefined && principals.user) levels.push(...userLevel(await principals.user(record.user_id)));
  if (record.service_account_id !== undefined && principals.serviceAccount) levels.push(...accountLevel(await principals.serviceAccount(record.service_account_id)));
  levels.push(...teamLevels(team, context, endUser));
  levels.push(...(await organizationLevel(principals)));
  return levels;
}

/**
 * The levels of a JWT caller mapped to a service account (its own limits, its team's) or to a team
 * by a claims rule (the team's), and the organization's.
 */
export async function serviceAccountLevels(caller: { readonly id: string; readonly team?: string }, context: GatewayContext, principals: Principals): Promise<Level[]> {
  const account = caller.id.startsWith('jwt:') ? undefined : await principals.serviceAccount?.(caller.id);
  const teamId = account?.team_id ?? caller.team;
  const team = teamId === undefined ? undefined : await principals.team?.(teamId);
  const endUser = team?.limits?.end_users !== undefined ? endUserOf(context, principals.endUserHeader) : undefined;
  return [...accountLevel(account), ...teamLevels(team, context, endUser), ...(await organizationLevel(principals))];
}
