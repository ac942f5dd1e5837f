import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { LogRecord } from '../../core/logs/record.js';

/** A complete record with plausible values; `overrides` wins. */
export function makeRecord(overrides: Partial<LogRecord> = {}): LogRecord {
  return {
    id: randomUUID(),
    time: new Date().toISOString(),
    trace_id: `trace-${randomUUID()}`,
    caller_type: 'account',
    key_id: null,
    key_name: null,
    end_user: null,
    provider: 'openai',
    model: 'gpt-4o-mini',
    operation: 'chat',
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    outcome: 'ok',
    error_type: null,
    error_code: null,
    error_message: null,
    streaming: false,
    latency_ms: 12.5,
    gateway_ms: 0.75,
    upstream_ms: 11.75,
    ttft_ms: null,
    prompt_tokens: 10,
    completion_tokens: 5,
    cached_tokens: null,
    reasoning_tokens: null,
    total_tokens: 15,
    cost_usd: null,
    cache_status: null,
    cache_saved_usd: null,
    metadata: {},
    guardrails: [],
    request_body: null,
    response_body: null,
    ...overrides,
  };
}

/** `DATABASE_URL`, or the machine's loopback PostgreSQL. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether PostgreSQL answers. When it does not, suites skip with the reason printed, except under
 * `CI=true`, where they fail.
 */
export async function postgresReachable(): Promise<{ ok: boolean; reason?: string }> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true };
  } catch (error) {
    if (process.env.CI === 'true') throw new Error(`PostgreSQL unreachable at ${DATABASE_URL} and CI=true: ${(error as Error).message}`);
    return { ok: false, reason: (error as Error).message };
  } finally {
    await client.end().catch(() => {});
  }
}

/** A schema name unique to this run. */
export const uniqueSchema = (label: string) => `gw_test_${label}_${process.pid}_${randomUUID().slice(0, 8)}`;

/** Drops the schemas the run created. */
export async function dropSchemas(schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
