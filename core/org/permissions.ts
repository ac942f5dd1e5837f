/**
 * Roles and permissions of the organization. Every admin route declares one permission
 * (`AdminGuard.require`); a role is the set of permissions it grants, at the organization's level
 * (every team) or in one team. The permission matrix in docs/organizations.md is generated from
 * these tables and the routes' declarations.
 */

/** Organization roles: `owner` everything; `admin` everything but managing owners; `auditor` reads everything. */
export const ORG_ROLES = ['owner', 'admin', 'auditor'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

/** Roles in one team. */
export const TEAM_ROLES = ['team_admin', 'member', 'viewer'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** Every permission, with what it allows (the generated matrix's legend). */
export const PERMISSIONS = {
  'plugins.read': 'list the plugins',
  'policies.read': 'list guardrail policies and their verdict counts',
  'prices.read': 'read the price list',
  'metrics.read': 'read /metrics',
  'logs.read': 'read request logs, usage and exports (without stored bodies)',
  'logs.bodies': 'read stored request and response bodies',
  'usage.read': "read usage summed over keys: the organization's, or a team's (a member's: its own keys')",
  'keys.read': 'read virtual keys (never their values) and their usage',
  'keys.write': 'create, change, rotate and delete virtual keys',
  'credentials.read': 'read stored credentials (never their secrets)',
  'credentials.write': 'create, rotate and delete stored credentials',
  'routes.read': 'read stored routes, model aliases and route state',
  'routes.write': 'create, change and delete stored routes',
  'models.write': 'set and delete model aliases (they apply to every caller)',
  'alerts.read': 'read budget alerts',
  'cache.purge': 'purge the response cache',
  'mcp.read': 'read the registered MCP servers and their tools',
  'mcp.write': 'register, change, approve tools of and delete MCP servers',
  'teams.read': 'read teams and their members',
  'teams.write': 'create, change and delete teams',
  'organization.write': "set the organization's own limits",
  'members.write': 'add, change and remove team members',
  'users.read': 'read users',
  'users.write': 'invite, change and suspend users',
  'owners.manage': 'grant or take the owner role, suspend an owner',
  'service_accounts.read': 'read service accounts',
  'service_accounts.write': 'create, change and delete service accounts and their tokens',
  'tokens.write': 'create and revoke one\'s own personal access tokens',
  'audit.read': "list the audit trail's events (a team's admins: those of their team's objects)",
  'audit.chain.read': 'export and verify the whole audit trail',
  'scim.provision': 'provision users and groups through SCIM 2.0 (the identity provider, with the SCIM token)',
} as const;
export type Permission = keyof typeof PERMISSIONS;

const ALL = Object.keys(PERMISSIONS) as Permission[];
const READS: Permission[] = ALL.filter((permission) => permission.endsWith('.read'));

/** What each organization role grants, in every team. */
export const ORG_ROLE_PERMISSIONS: Readonly<Record<OrgRole, ReadonlySet<Permission>>> = {
  owner: new Set(ALL),
  admin: new Set(ALL.filter((permission) => permission !== 'owners.manage')),
  // Reads everything, changes nothing but its own tokens; stored bodies need `logs.bodies` granted besides.
  auditor: new Set<Permission>([...READS, 'tokens.write']),
};

/**
 * What each team role grants in its team. `member` reads and changes only the keys it owns
 * (`user_id`), and their logs and usage: the scope narrows that further (`Scope.canSeeKey`).
 */
export const TEAM_ROLE_PERMISSIONS: Readonly<Record<TeamRole, ReadonlySet<Permission>>> = {
  team_admin: new Set<Permission>([
    'keys.read',
    'keys.write',
    'credentials.read',
    'credentials.write',
    'routes.read',
    'routes.write',
    'logs.read',
    'usage.read',
    'alerts.read',
    'teams.read',
    'members.write',
    'service_accounts.read',
    'service_accounts.write',
    'audit.read',
    'tokens.write',
  ]),
  member: new Set<Permission>(['keys.read', 'keys.write', 'credentials.read', 'routes.read', 'logs.read', 'usage.read', 'alerts.read', 'teams.read', 'tokens.write']),
  viewer: new Set<Permission>(['keys.read', 'logs.read', 'usage.read', 'alerts.read', 'teams.read', 'tokens.write']),
};


/** Grants that may be given on top of a role (a user's or a token's `permissions`). */
export const GRANTABLE_EXTRAS = new Set<Permission>(['logs.bodies']);

/** Roles ordered by power, so "nobody grants more than they hold" compares ranks. */
export const ORG_RANK: Readonly<Record<OrgRole, number>> = { owner: 3, admin: 2, auditor: 1 };
export const TEAM_RANK: Readonly<Record<TeamRole, number>> = { team_admin: 3, member: 2, viewer: 1 };

export const isPermission = (value: unknown): value is Permission => typeof value === 'string' && Object.hasOwn(PERMISSIONS, value);
