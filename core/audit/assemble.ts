import { AdminAccess } from '../admin/assemble.js';
import { type Container, GatewaySettings, provide } from '../container.js';
import type { Router } from '../http/router.js';
import { type AuditGuard, mountAuditAdmin } from './admin.js';
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

/** Mounts `GET /admin/audit` and its export behind `guard` (default: the admin guard; the permission check replaces it). */
export function mountAuditOf(router: Router, container: Container, guard: AuditGuard = container.resolve(AdminAccess).guard.middleware): void {
  mountAuditAdmin(router, guard, container.resolve(AuditTrail));
}
