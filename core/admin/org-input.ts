import { invalid, requireObject, requireString } from '../api/validate.js';
import { errors } from '../errors.js';
import type { Access } from '../org/access.js';
import { isPermission, ORG_RANK, type OrgRole, type Permission, TEAM_RANK, type TeamRole } from '../org/permissions.js';
import type { TeamRecord, TokenRecord, UserRecord } from '../org/records.js';
import { parseQuotaWeight } from '../quota/settings.js';
import { TakenError } from '../org/store.js';
import { requireRecordName } from './virtual-keys-input.js';

/** Validation and answers of the organization's admin API (core/admin/org-routes.ts). */

export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const refused = (message: string) => errors.permission(message, { code: 'permission_denied' });

export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const field of Object.keys(body)) if (!allowed.includes(field)) throw invalid(`unknown field; expected one of ${allowed.join(', ')}.`, { param: field });
}

export function stringList(value: unknown, param: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > 1000) throw invalid('expected an array of at most 1000 strings.', { param });
  value.forEach((entry, index) => requireString(entry, `${param}[${index}]`, { nonEmpty: true, max: 256 }));
  return value as string[];
}

export function emailOf(value: unknown): string {
  const email = requireString(value, 'email', { nonEmpty: true, max: 320 }).trim().toLowerCase();
  if (!EMAIL.test(email)) throw invalid('expected an email address.', { param: 'email' });
  return email;
}

export function metadataOf(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const object = requireObject(value, 'metadata');
  if (Object.keys(object).length > 64) throw invalid('at most 64 entries.', { param: 'metadata' });
  for (const [key, entry] of Object.entries(object)) requireString(entry, `metadata.${key}`, { max: 1024 });
  return object as Record<string, string>;
}

export const rethrowConflict = (error: unknown): never => {
  throw error instanceof TakenError ? errors.conflict(error.message, { code: 'duplicate_name', param: error.field }) : error;
};

/** A user as the API shows it. */
export const publicUser = (user: UserRecord) => ({
  id: user.id,
  email: user.email,
  name: user.name ?? null,
  status: user.status,
  role: user.role ?? null,
  teams: Object.entries(user.teams).map(([team_id, role]) => ({ team_id, role })),
  permissions: user.permissions ?? [],
  source: user.source,
  created_at: user.created_at,
  updated_at: user.updated_at,
  last_sign_in_at: user.last_sign_in_at ?? null,
  limits: user.limits ?? null,
});

export const publicToken = (token: TokenRecord) => ({
  id: token.id,
  name: token.name,
  owner: token.owner,
  permissions: token.permissions ?? null,
  expires_at: token.expires_at ?? null,
  created_at: token.created_at,
  last_used_at: token.last_used_at ?? null,
  token_hint: token.token_hint,
});

export function tokenInput(access: Access, raw: Record<string, unknown>): { name: string; expiresAt?: string; permissions?: Permission[] } {
  const name = requireRecordName(raw.name);
  let expiresAt: string | undefined;
  if (raw.expires_in_days !== undefined) {
    const days = raw.expires_in_days;
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 3650) throw invalid('expected a whole number of days from 1 to 3650.', { param: 'expires_in_days' });
    expiresAt = new Date(Date.now() + days * 86_400_000).toISOString();
  }
  const permissions = stringList(raw.permissions, 'permissions');
  for (const [index, permission] of (permissions ?? []).entries()) {
    if (!isPermission(permission)) throw invalid(`unknown permission "${permission}".`, { param: `permissions[${index}]` });
    if (!access.holdsAnywhere(permission)) throw refused(`A token cannot carry ${permission}: you do not hold it.`);
  }
  return { name, ...(expiresAt ? { expiresAt } : {}), ...(permissions ? { permissions: permissions as Permission[] } : {}) };
}

export const highestOrgRank = (access: Access): number => {
  const { principal } = access;
  if (principal.kind === 'account') return ORG_RANK.owner;
  if (principal.kind === 'user' && principal.user.role) return ORG_RANK[principal.user.role];
  return 0;
};

/** Nobody grants an organization role above their own; the owner role needs `owners.manage`. */
export function checkOrgGrant(access: Access, role: OrgRole): void {
  if (role === 'owner' && !access.organizationWide('owners.manage')) throw refused('Only an owner may grant the owner role.');
  if (ORG_RANK[role] > highestOrgRank(access)) throw refused(`You cannot grant the ${role} role: it is above yours.`);
}

/** In a team, nobody grants (or takes) a team role above their own there; organization admins may grant any. */
export function checkTeamGrant(access: Access, team: string, role: TeamRole): void {
  if (access.organizationWide('members.write')) return;
  const own = access.roleIn(team);
  if (own === undefined || TEAM_RANK[role] > TEAM_RANK[own]) throw refused(`You cannot grant the ${role} role in this team: it is above yours.`);
}

/** The before/after of the fields a call named (never secrets: these records hold none). */
export function changesOf(before: object, after: object, fields: readonly string[]): Record<string, { before?: unknown; after?: unknown }> {
  const changes: Record<string, { before?: unknown; after?: unknown }> = {};
  for (const field of fields) {
    const old = (before as Record<string, unknown>)[field];
    const next = (after as Record<string, unknown>)[field];
    if (JSON.stringify(old) !== JSON.stringify(next)) changes[field] = { before: old ?? null, after: next ?? null };
  }
  return changes;
}

/** A team's `quota_weight` on create or PATCH (null on a PATCH: back to the default, 1). */
export function checkQuotaWeight(raw: Record<string, unknown>, creating: boolean): void {
  if (raw.quota_weight === undefined || (raw.quota_weight === null && !creating)) return;
  parseQuotaWeight(raw.quota_weight);
}

/** A team as the admin API shows it: `quota_weight` always present (default 1). */
export const publicTeam = <Team extends TeamRecord>(team: Team): Team & { readonly quota_weight: number } => ({ ...team, quota_weight: team.quota_weight ?? 1 });
