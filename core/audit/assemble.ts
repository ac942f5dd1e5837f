import { AdminAccess } from '../admin/assemble.js';
import { accessOf } from '../admin/guard.js';
import { type Container, GatewaySettings, provide } from '../container.js';
import type { Router } from '../http/router.js';
import { mountAuditAdmin } from './admin.js';
import { openAuditTrail } from './index.js';
import { AuditTrail } from './trail.js';

export { AuditTrail } from './trail.js';

/** How often retention looks for whole months to remove (besides at start). */
const RETENTION_INTERVAL_MS = 6 * 3_600_000;

/** Registers the audit trail (SQLite under the data dir, or the log's PostgreSQL); retention runs from the first resolution. */
export function registerAudit(container: Container): void {
  provide(container, AuditTrail, (c) => {
    const { config, clock, logger } = c.resolve(GatewaySettings);
    const audit = openAuditTrail(config, clock);
    audit.startRetention(RETENTION_INTERVAL_MS, (error) => logger.warn({ err: { message: error.message } }, 'audit retention failed'));
    return audit;
  });
}

/**
 * Mounts `GET /admin/audit`, its export and verify (`audit.read`), and has the admin guard write
 * one event for every changing admin call into the trail (a failed write is logged; the call's
 * answer stands).
 */
export function mountAuditOf(router: Router, container: Container): void {
  const { logger } = container.resolve(GatewaySettings);
  const { guard } = container.resolve(AdminAccess);
  const trail = container.resolve(AuditTrail);
  guard.auditTo({ record: (event) => trail.record(event).catch((error: Error) => logger.error({ err: { message: error.message }, action: event.action }, 'audit event not recorded')) });
  // A team's admins read the events of their teams' objects; organization roles read everything.
  mountAuditAdmin(router, { events: guard.require('audit.read'), chain: guard.require('audit.chain.read') }, trail, (koa) => accessOf(koa).teamsWith('audit.read'));
}
