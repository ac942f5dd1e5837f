import type { OrgRole, Permission, TeamRole } from './permissions.js';
import type { LevelLimits, VirtualKeyLimits } from './limits.js';

/** The team every object stored before teams existed belongs to; it cannot be deleted. */
export const DEFAULT_TEAM = 'default';

/** What a grant allows on one MCP server: tool globs (matched against the tool's own name), minus the deny globs. */
export interface McpServerGrant {
  readonly tools: readonly string[];
  readonly deny?: readonly string[];
}

/**
 * A virtual key's or a team's MCP grant (docs/mcp.md): per upstream server name, or `*` for every server; a
 * named server's entry wins over `*`. Decided by `core/mcp/grants.ts` alone.
 */
export interface McpGrant {
  readonly servers: Readonly<Record<string, McpServerGrant>>;
}

/** A team: what its keys may use and its default guardrail policy. Lists left out allow everything. */
export interface TeamRecord {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** Provider ids its keys may be bound to. */
  readonly allowed_providers?: readonly string[];
  /** Models its keys' requests may name (exact names or `prefix*`). */
  readonly allowed_models?: readonly string[];
  /** Stored route ids its keys may take (the team's own routes are always allowed). */
  readonly allowed_routes?: readonly string[];
  /** Shared credential ids its keys may use (the team's own credentials are always allowed). */
  readonly allowed_credentials?: readonly string[];
  /** The policy its keys get when they name none. */
  readonly guardrail_policy?: string;
  /** Limits on all its keys' requests together, and rules for its end users and tags (docs/limits.md#levels). */
  readonly limits?: Pick<VirtualKeyLimits, Exclude<keyof VirtualKeyLimits, 'allowed_users' | 'allowed_models'>>;
  /** MCP servers and tools every key of the team may use, besides the key's own grant (docs/mcp.md). */
  readonly mcp?: McpGrant;
  /** Its weight when providers' quotas are shared between teams (absent: 1; docs/limits.md). */
  readonly quota_weight?: number;
  readonly created_at: string;
  readonly updated_at: string;
}

export type UserStatus = 'active' | 'suspended' | 'invited';

/** A person: an organization role (or none) and a role in each team they belong to. */
export interface UserRecord {
  readonly id: string;
  /** Lower-cased; unique. */
  readonly email: string;
  readonly name?: string;
  readonly status: UserStatus;
  readonly role?: OrgRole;
  /** Team id → role. */
  readonly teams: Readonly<Record<string, TeamRole>>;
  /** Permissions granted besides the roles (only `logs.bodies`). */
  readonly permissions?: readonly Permission[];
  /** How the user arrived: `invitation`, `sso`, `scim` or `cli`. */
  readonly source: 'invitation' | 'sso' | 'scim' | 'cli';
  /** The identity provider's subject once the user signed in with it (`issuer|sub`). */
  readonly sso_subject?: string;
  /** The provisioning system's own id for the user (SCIM `externalId`). */
  readonly external_id?: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_sign_in_at?: string;
  /** Limits on the requests of every key the user owns, in whichever team (docs/limits.md#levels). */
  readonly limits?: LevelLimits;
}

/** A non-human principal of a team (CI, a backend): owns keys, may hold admin tokens and sign in by JWT. */
export interface ServiceAccountRecord {
  readonly id: string;
  readonly name: string;
  readonly team_id: string;
  /** Its role in its team for admin calls made with its tokens (default `member`). */
  readonly role: TeamRole;
  /** A JWT caller whose `sub` equals this acts as this service account. */
  readonly jwt_subject?: string;
  /** The stored route (id) its JWT calls take. */
  readonly route?: string;
  /** Limits on its keys' and JWT calls' requests together. */
  readonly limits?: LevelLimits;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A personal access token or a service account's token, stored by the SHA-256 of its value. */
export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly owner: { readonly type: 'user' | 'service-account'; readonly id: string };
  /** When set, the token carries only these of its owner's permissions. */
  readonly permissions?: readonly Permission[];
  readonly expires_at?: string;
  readonly created_at: string;
  readonly last_used_at?: string;
  readonly token_hash: string;
  /** e.g. `gtok-…a1b2`. */
  readonly token_hint: string;
}
