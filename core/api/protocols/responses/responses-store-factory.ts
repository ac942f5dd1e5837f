import { join } from 'node:path';
import type { ResolvedConfig } from '../../../../config/index.js';
import type { ResponseStore } from './responses-store.js';
import { PostgresResponseStore } from './responses-store-postgres.js';
import { SqliteResponseStore } from './responses-store-sqlite.js';

/**
 * The Responses store on the log store's backend: PostgreSQL (`DATABASE_URL`, the log schema) when
 * configured, else `<data dir>/responses.db`. Retention: `responses.retentionDays`.
 */
export function createResponseStore(config: ResolvedConfig): ResponseStore {
  const maxAgeMs = config.responses.retentionMaxAgeMs;
  return config.logs.databaseUrl
    ? new PostgresResponseStore(config.logs.databaseUrl, config.logs.postgresSchema, maxAgeMs)
    : new SqliteResponseStore(join(config.dataDir, 'responses.db'), maxAgeMs);
}
