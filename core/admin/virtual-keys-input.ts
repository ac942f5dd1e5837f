import { invalid, optionalBoolean, requireObject, requireString } from '../api/validate.js';
import { parseKeyLimits } from './limits-input.js';
import type { CredentialSecret } from '../vault/records.js';
import { parseMcpGrant } from './mcp-servers.js';
import { parsePriority, parseQuota, type ProviderQuota } from '../quota/settings.js';

/**
 * Validation of the admin API's credential and virtual-key bodies. Every failure is a 400 naming
 * the field (`limits.requests_per_minute`); unknown fields are refused so that typos do not pass
 * silently.
 */

function onlyFields(body: Record<string, unknown>, allowed: readonly string[], prefix = ''): void {
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw invalid(`unknown field; expected one of ${allowed.join(', ')}.`, { param: `${prefix}${field}` });
  }
}

export function requireRecordName(value: unknown, param = 'name'): string {
  const name = requireString(value, param, { nonEmpty: true, max: 128 });
  if (name.trim() !== name) throw invalid('must not start or end with spaces.', { param });
  return name;
}

export function parseCredentialSecret(body: Record<string, unknown>, required: boolean): CredentialSecret | undefined {
  const apiKey = body.api_key;
  const fields = body.fields;
  if (apiKey === undefined && fields === undefined) {
    if (required) throw invalid('give api_key, fields, or both.', { param: 'api_key' });
    return undefined;
  }
  if (apiKey !== undefined) requireString(apiKey, 'api_key', { nonEmpty: true, max: 16_384 });
  if (fields !== undefined) {
    const object = requireObject(fields, 'fields');
    if (Object.keys(object).length === 0 || Object.keys(object).length > 64) throw invalid('expected 1 to 64 fields.', { param: 'fields' });
    for (const [name, value] of Object.entries(object)) {
      if (!/^[A-Za-z0-9_.-]{1,128}$/.test(name)) throw invalid('field names are 1 to 128 characters of letters, digits, _ . -', { param: `fields.${name}` });
      requireString(value, `fields.${name}`, { max: 16_384 });
    }
  }
  return { ...(apiKey !== undefined ? { api_key: apiKey as string } : {}), ...(fields !== undefined ? { fields: fields as Record<string, string> } : {}) };
}

export function parseCredentialBody(body: Record<string, unknown>): { name: string; provider?: string; secret: CredentialSecret; quota?: ProviderQuota } {
  onlyFields(body, ['name', 'provider', 'api_key', 'fields', 'team_id', 'quota']);
  const name = requireRecordName(body.name);
  if (body.provider !== undefined) requireString(body.provider, 'provider', { nonEmpty: true, max: 64 });
  return {
    name,
    ...(body.provider !== undefined ? { provider: body.provider as string } : {}),
    ...(body.quota !== undefined ? { quota: parseQuota(body.quota) } : {}),
    secret: parseCredentialSecret(body, true)!,
  };
}

/** The body of a credential PATCH: its `quota` (null removes it); the secret changes by rotation only. */
export function parseCredentialPatch(body: Record<string, unknown>): { quota: ProviderQuota | null } {
  onlyFields(body, ['quota']);
  if (body.quota === undefined) throw invalid('give quota (or null to remove it); a secret is changed by POST /admin/credentials/{id}/rotate.', { param: 'quota' });
  return { quota: body.quota === null ? null : parseQuota(body.quota) };
}

/** The body of a credential rotation: the new secret only (`api_key`, `fields` or both). */
export function parseCredentialRotation(body: Record<string, unknown>): CredentialSecret {
  onlyFields(body, ['api_key', 'fields']);
  return parseCredentialSecret(body, true)!;
}

/** An ISO 8601 date-time in the future, normalised; a key that would be born expired is refused. */
export function parseExpiry(value: unknown, now = Date.now()): string {
  const text = requireString(value, 'expires_at', { nonEmpty: true });
  const time = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(time)) throw invalid('expected an ISO 8601 date-time such as 2030-01-31T00:00:00Z.', { param: 'expires_at' });
  if (time <= now) throw invalid('must be in the future.', { param: 'expires_at' });
  return new Date(time).toISOString();
}

/** A key naming a route (a stored route's id or name) has no provider, credential or custom host of its own. */
function checkRouteKeyShape(body: Record<string, unknown>): void {
  requireString(body.route, 'route', { nonEmpty: true, max: 256 });
  for (const field of ['provider', 'credential_id', 'provider_key', 'custom_host'] as const) {
    if (body[field] !== undefined) throw invalid('a key names a route or a provider, not both: the route supplies the providers and credentials.', { param: field });
  }
}

/** Most routes one key may be granted (`allowed_routes`). */
export const MAX_ALLOWED_ROUTES = 100;

/** `allowed_routes`: route ids or names (checked to exist by the caller, which knows the routes). */
function checkAllowedRoutes(value: unknown): void {
  if (!Array.isArray(value)) throw invalid('expected an array of route ids or names.', { param: 'allowed_routes' });
  if (value.length > MAX_ALLOWED_ROUTES) throw invalid(`at most ${MAX_ALLOWED_ROUTES} routes.`, { param: 'allowed_routes' });
  value.forEach((entry, index) => requireString(entry, `allowed_routes[${index}]`, { nonEmpty: true, max: 256 }));
}

/** Fields of a virtual key body: creation needs name and either provider (with a credential), route, or an `mcp` grant; a PATCH may give any, `null` clears optional ones (not `log_bodies`: true or false). */
export const VIRTUAL_KEY_FIELDS = [
  'name',
  'provider',
  'credential_id',
  'provider_key',
  'route',
  'allowed_routes',
  'custom_host',
  'guardrail_policy',
  'mcp',
  'limits',
  'expires_at',
  'log_bodies',
  'team_id',
  'user_id',
  'service_account_id',
  'priority',
] as const;

export function checkVirtualKeyShape(body: Record<string, unknown>, creating: boolean): void {
  onlyFields(body, VIRTUAL_KEY_FIELDS);
  if (creating || body.name !== undefined) requireRecordName(body.name);
  // A key with an MCP grant and no provider is an MCP-only key: it needs no provider nor credential.
  const mcpOnly = body.mcp !== undefined && body.mcp !== null && body.provider === undefined && body.route === undefined;
  if (body.route !== undefined) checkRouteKeyShape(body);
  else if ((creating && !mcpOnly) || body.provider !== undefined) requireString(body.provider, 'provider', { nonEmpty: true, max: 64 });
  if (body.credential_id !== undefined && body.provider_key !== undefined) throw invalid('give credential_id or provider_key, not both.', { param: 'provider_key' });
  if (creating && !mcpOnly && body.route === undefined && body.credential_id === undefined && body.provider_key === undefined) throw invalid('give credential_id or provider_key.', { param: 'credential_id' });
  if (mcpOnly && (body.credential_id !== undefined || body.provider_key !== undefined || body.custom_host !== undefined)) throw invalid('a key without a provider takes no credential.', { param: 'provider' });
  if (body.mcp !== undefined && !(body.mcp === null && !creating)) body.mcp = parseMcpGrant(body.mcp);
  if (body.credential_id !== undefined) requireString(body.credential_id, 'credential_id', { nonEmpty: true, max: 128 });
  if (body.provider_key !== undefined) requireString(body.provider_key, 'provider_key', { nonEmpty: true, max: 16_384 });
  for (const field of ['custom_host', 'guardrail_policy'] as const) {
    if (body[field] !== undefined && !(body[field] === null && !creating)) requireString(body[field], field, { nonEmpty: true, max: 2048 });
  }
  if (body.limits !== undefined && !(body.limits === null && !creating)) parseKeyLimits(body.limits);
  if (body.allowed_routes !== undefined && !(body.allowed_routes === null && !creating)) checkAllowedRoutes(body.allowed_routes);
  if (body.expires_at !== undefined && !(body.expires_at === null && !creating)) {
    body.expires_at = parseExpiry(body.expires_at);
  }
  optionalBoolean(body.log_bodies, 'log_bodies');
  if (body.priority !== undefined && !(body.priority === null && !creating)) parsePriority(body.priority);
  if (!creating && Object.keys(body).length === 0) throw invalid('give at least one field to change.', { param: 'body' });
}
