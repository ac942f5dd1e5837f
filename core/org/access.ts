import { ORG_ROLE_PERMISSIONS, type Permission, TEAM_ROLE_PERMISSIONS, type TeamRole } from './permissions.js';
import { DEFAULT_TEAM, type ServiceAccountRecord, type TokenRecord, type UserRecord } from './records.js';

/** Who makes an admin call. */
export type Principal =
  | { readonly kind: 'account' }
  | { readonly kind: 'user'; readonly user: UserRecord; readonly token?: TokenRecord }
  | { readonly kind: 'service-account'; readonly account: ServiceAccountRecord; readonly token: TokenRecord }
  /** The identity provider's provisioning client (SCIM), with the SCIM bearer token: it may only provision. */
  | { readonly kind: 'scim' };

/** An object's owner as stored: `team_id` absent is the `default` team (data stored before teams), null the organization (shared). */
export interface Owned {
  readonly team_id?: string | null;
  readonly user_id?: string;
  readonly service_account_id?: string;
}

/** The team an object belongs to: a team id, or null for the organization. */
export const teamOf = (object: Owned): string | null => (object.team_id === undefined ? DEFAULT_TEAM : object.team_id);

/** The audit trail's and the logs' view of a principal (never a secret). */
export interface Actor {
  readonly type: 'account' | 'user' | 'service-account' | 'scim';
  readonly id?: string;
  readonly label?: string;
  /** The token an admin call presented, when one did. */
  readonly token_id?: string;
}

/** Permissions a `member` holds only for the keys it owns. */
const KEY_SCOPED = new Set<Permission>(['keys.read', 'keys.write', 'logs.read', 'logs.bodies', 'usage.read']);

const restrict = (permissions: Iterable<Permission>, token: TokenRecord | undefined): Set<Permission> => {
  const set = new Set(permissions);
  if (token?.permissions === undefined) return set;
  const allowed = new Set(token.permissions);
  for (const permission of set) if (!allowed.has(permission)) set.delete(permission);
  return set;
};

/**
 * What a principal may do, and where: permissions held in every team (from an organization role, or
 * the account key as owner) and permissions held in one team (from team roles). A token carries at
 * most its owner's permissions, and only those it lists when it lists some. Every admin route asks
 * {@link holdsAnywhere} first (403 when not); the handlers then ask about each object, and an object
 * the principal may not read answers 404, so its existence does not leak.
 */
export class Access {
  readonly everywhere: ReadonlySet<Permission>;
  readonly inTeam: ReadonlyMap<string, ReadonlySet<Permission>>;
  private readonly roles: ReadonlyMap<string, TeamRole>;
  /** The team of the object this call read or changed last (the audit event's target team); null: the organization's. */
  touchedTeam: string | null | undefined;

  constructor(readonly principal: Principal) {
    const inTeam = new Map<string, Set<Permission>>();
    const roles = new Map<string, TeamRole>();
    if (principal.kind === 'account') {
      this.everywhere = ORG_ROLE_PERMISSIONS.owner;
    } else if (principal.kind === 'scim') {
      this.everywhere = new Set<Permission>(['scim.provision']);
    } else if (principal.kind === 'user') {
      const { user, token } = principal;
      const extras = user.permissions ?? [];
      this.everywhere = restrict(user.role ? [...ORG_ROLE_PERMISSIONS[user.role], ...extras] : [], token);
      for (const [team, role] of Object.entries(user.teams)) {
        roles.set(team, role);
        inTeam.set(team, restrict([...TEAM_ROLE_PERMISSIONS[role], ...extras], token));
      }
    } else {
      const { account, token } = principal;
      this.everywhere = new Set();
      roles.set(account.team_id, account.role);
      inTeam.set(account.team_id, restrict(TEAM_ROLE_PERMISSIONS[account.role], token));
    }
    this.inTeam = inTeam;
    this.roles = roles;
  }

  /** The owner's access (the CLI on the host); an admin call makes its own, which records the team it touched. */
  static get owner(): Access {
    return new Access({ kind: 'account' });
  }

  /** Notes the team of the object the call acts on, for its audit event. */
  touch(team: string | null): void {
    this.touchedTeam = team;
  }

  /** True when the permission is held in every team (an organization role). */
  organizationWide(permission: Permission): boolean {
    return this.everywhere.has(permission);
  }

  /** True when the permission is held somewhere: in every team or in one. */
  holdsAnywhere(permission: Permission): boolean {
    if (this.everywhere.has(permission)) return true;
    for (const permissions of this.inTeam.values()) if (permissions.has(permission)) return true;
    return false;
  }

  /** True when the permission is held for objects of `team` (a team id, or null: the organization's shared objects, which only organization roles change). */
  holds(permission: Permission, team: string | null): boolean {
    if (this.everywhere.has(permission)) return true;
    return team !== null && (this.inTeam.get(team)?.has(permission) ?? false);
  }

  /** Teams where the permission is held (every team: undefined). */
  teamsWith(permission: Permission): string[] | undefined {
    if (this.everywhere.has(permission)) return undefined;
    return [...this.inTeam].filter(([, permissions]) => permissions.has(permission)).map(([team]) => team);
  }

  /** The principal's role in a team, when it has one there. */
  roleIn(team: string): TeamRole | undefined {
    return this.roles.get(team);
  }

  /** The user id, for a user. */
  get userId(): string | undefined {
    return this.principal.kind === 'user' ? this.principal.user.id : undefined;
  }

  /**
   * Reading needs the permission for the object's team. Shared objects (credentials, routes) are
   * readable by every team that may read its own of that kind. A `member` reads only the keys (and
   * their logs) it owns.
   */
  mayRead(permission: Permission, object: Owned): boolean {
    const team = teamOf(object);
    if (this.organizationWide(permission)) return true;
    if (team === null) return this.holdsAnywhere(permission);
    if (!this.holds(permission, team)) return false;
    return !(KEY_SCOPED.has(permission) && this.ownKeysOnly(team)) || this.owns(object);
  }

  /** Changing needs the permission for the object's team; a `member` changes only the keys it owns. */
  mayChange(permission: Permission, object: Owned): boolean {
    const team = teamOf(object);
    if (this.organizationWide(permission)) return true;
    if (!this.holds(permission, team)) return false;
    return !(KEY_SCOPED.has(permission) && this.ownKeysOnly(team!)) || this.owns(object);
  }

  /** A `member` sees and changes only the keys (and their logs) it owns. */
  ownKeysOnly(team: string): boolean {
    return this.roles.get(team) === 'member';
  }

  private owns(object: Owned): boolean {
    const { principal } = this;
    if (principal.kind === 'user') return object.user_id === principal.user.id;
    if (principal.kind === 'service-account') return object.service_account_id === principal.account.id;
    return true;
  }

  /** Who this is, for the audit trail and errors. */
  get actor(): Actor {
    const { principal } = this;
    if (principal.kind === 'account') return { type: 'account', label: 'account key' };
    if (principal.kind === 'scim') return { type: 'scim', label: 'SCIM provisioning' };
    if (principal.kind === 'user') return { type: 'user', id: principal.user.id, label: principal.user.email, ...(principal.token ? { token_id: principal.token.id } : {}) };
    return { type: 'service-account', id: principal.account.id, label: principal.account.name, token_id: principal.token.id };
  }
}
