import { join } from 'node:path';
import type { ResolvedConfig } from '../../config/index.js';
import type { Clock } from '../spec/manifest.js';
import { PostgresAuditStore } from './postgres-store.js';
import { SqliteAuditStore } from './sqlite-store.js';
import { AuditTrail } from './trail.js';

export { auditChanges, type AuditActor, type AuditEvent, type AuditInput, type AuditTarget } from './event.js';
export { requestOrigin } from './origin.js';
export { AuditTrail } from './trail.js';
export type { VerifyResult } from './verify.js';

/**
 * The audit trail on the request log's backend, so the gateway and the command line open the same
 * one: PostgreSQL (`DATABASE_URL`, the log schema, table `audit_events`) when configured, else
 * `<data dir>/audit.db`.
 */
export function openAuditTrail(config: ResolvedConfig, clock?: Clock): AuditTrail {
  const store = config.logs.databaseUrl ? new PostgresAuditStore(config.logs.databaseUrl, config.logs.postgresSchema) : new SqliteAuditStore(join(config.dataDir, 'audit.db'));
  return new AuditTrail(store, { clock, retentionMonths: config.audit.retentionMonths });
}
