import type { Context } from 'koa';
import { errors } from '../errors.js';
import type { Router } from '../http/router.js';
import { type AuditListQuery, type AuditTrail, MAX_LIMIT } from './trail.js';

/** The admin guard's permission check (core/admin/guard.ts), as Koa middleware; whoever mounts the routes hands it in. */
export type AuditGuard = (koa: Context, next: () => Promise<unknown>) => Promise<void>;

const MAX_TEXT = 256;

const invalid = (message: string, param: string) => errors.invalidRequest(message, { param, code: 'invalid_query' });

function text(koa: Context, name: string): string | undefined {
  const value = koa.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT) throw invalid(`${name} must be given once, as a non-empty string of at most ${MAX_TEXT} characters.`, name);
  return value;
}

function time(koa: Context, name: string): number | undefined {
  const value = text(koa, name);
  if (value === undefined) return undefined;
  const parsed = Date.parse(value);
  if (!Number.isFinite(parsed)) throw invalid(`${name} must be an ISO 8601 date-time, e.g. 2026-11-21T10:00:00Z.`, name);
  return parsed;
}

/** `GET /admin/audit`'s filters, checked. */
export function parseAuditQuery(koa: Context): AuditListQuery {
  const limitText = text(koa, 'limit');
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)) throw invalid(`limit must be an integer from 1 to ${MAX_LIMIT}.`, 'limit');
  return { actor: text(koa, 'actor'), action: text(koa, 'action'), target: text(koa, 'target'), since: time(koa, 'since'), until: time(koa, 'until'), limit, cursor: text(koa, 'cursor') };
}

/**
 * Mounts the audit trail's read routes:
 * - `GET /admin/audit?actor=&action=&target=&since=&until=&limit=&cursor=` (`guards.events`): newest
 *   first, `{ data: [event], next_cursor }`; for a caller `teamsOf` names teams for, only the events
 *   whose target belongs to one of them;
 * - `GET /admin/audit/export`: the whole chain as JSON Lines, oldest first, streamed (what
 *   `llm-gateway audit export` writes), to keep or to verify elsewhere (`guards.chain`);
 * - `GET /admin/audit/verify` (`guards.chain`): what `llm-gateway audit verify` finds (it reads the whole chain).
 */
export function mountAuditAdmin(
  router: Router,
  guards: { readonly events: AuditGuard; readonly chain: AuditGuard },
  audit: AuditTrail,
  teamsOf: (koa: Context) => readonly string[] | undefined = () => undefined,
): void {
  router.get('/admin/audit', guards.events, async (koa) => {
    koa.set('cache-control', 'no-store');
    const teams = teamsOf(koa);
    koa.body = await audit.list({ ...parseAuditQuery(koa), ...(teams ? { teams } : {}) });
  });
  router.get('/admin/audit/export', guards.chain, (koa) => {
    koa.set('cache-control', 'no-store');
    koa.set('content-disposition', `attachment; filename="gateway-audit-${new Date().toISOString().slice(0, 10)}.jsonl"`);
    koa.type = 'application/x-ndjson; charset=utf-8';
    koa.body = audit.export();
  });
  router.get('/admin/audit/verify', guards.chain, async (koa) => {
    koa.set('cache-control', 'no-store');
    koa.body = await audit.verify();
  });
}
