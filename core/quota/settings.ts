import { errors } from '../errors.js';

/**
 * A provider account's own limits, declared on a stored credential or a route target (`quota`):
 * the gateway keeps its traffic within them and shares them between teams (docs/limits.md, "A
 * provider's quota, shared fairly"). Per-minute limits are sliding 60-second windows.
 */
export interface ProviderQuota {
  readonly requests_per_minute?: number;
  /** Input plus output tokens: estimated when a request is let through, corrected once its usage is known. */
  readonly tokens_per_minute?: number;
  readonly max_concurrent?: number;
  /** How long a request over its team's share may wait for room (default {@link DEFAULT_MAX_WAIT_MS}). */
  readonly max_wait_ms?: number;
}

/** A key's or request's priority class: interactive requests leave the queue before batch ones. */
export type PriorityClass = 'interactive' | 'batch';

export const DEFAULT_MAX_WAIT_MS = 5000;
/** Longest `max_wait_ms` accepted (10 minutes). */
export const MAX_WAIT_LIMIT_MS = 600_000;
/** Largest `quota_weight` a team may have. */
export const MAX_QUOTA_WEIGHT = 1000;

const QUOTA_FIELDS = ['requests_per_minute', 'tokens_per_minute', 'max_concurrent', 'max_wait_ms'] as const;

const invalid = (message: string, param: string) => errors.invalidRequest(`Invalid '${param}': ${message}`, { param, code: 'invalid_value' });

/**
 * A `quota` object checked: 400 `invalid_value` whose `param` names the field (`quota.tokens_per_minute`,
 * or `<prefix>quota.…` for a route target). At least one limit; whole numbers; `max_wait_ms` from 0 to 10 minutes.
 */
export function parseQuota(value: unknown, param = 'quota'): ProviderQuota {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('expected an object such as {"tokens_per_minute": 200000}.', param);
  const quota = value as Record<string, unknown>;
  for (const field of Object.keys(quota)) {
    if (!(QUOTA_FIELDS as readonly string[]).includes(field)) throw invalid(`unknown field; a quota takes ${QUOTA_FIELDS.join(', ')}.`, `${param}.${field}`);
  }
  for (const field of QUOTA_FIELDS) {
    const limit = quota[field];
    if (limit === undefined) continue;
    const least = field === 'max_wait_ms' ? 0 : 1;
    const most = field === 'max_wait_ms' ? MAX_WAIT_LIMIT_MS : 1e12;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < least || limit > most) {
      throw invalid(`expected a whole number from ${least} to ${most}.`, `${param}.${field}`);
    }
  }
  if (quota.requests_per_minute === undefined && quota.tokens_per_minute === undefined && quota.max_concurrent === undefined) {
    throw invalid('a quota needs at least one of requests_per_minute, tokens_per_minute, max_concurrent.', param);
  }
  return quota as ProviderQuota;
}

/** A team's `quota_weight` checked: a number above 0, at most {@link MAX_QUOTA_WEIGHT}. */
export function parseQuotaWeight(value: unknown, param = 'quota_weight'): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_QUOTA_WEIGHT) {
    throw invalid(`expected a number above 0 and at most ${MAX_QUOTA_WEIGHT}.`, param);
  }
  return value;
}

/** A key's `priority` checked. */
export function parsePriority(value: unknown, param = 'priority'): PriorityClass {
  if (value !== 'interactive' && value !== 'batch') throw invalid('expected "interactive" or "batch".', param);
  return value;
}

/**
 * The request's class: the key's, lowered to batch by `x-gateway-priority: batch` (a request may
 * not raise itself to interactive above its key's class); 400 `invalid_header` for another value.
 */
export function requestPriority(header: string | undefined, keyPriority: PriorityClass | undefined): PriorityClass {
  const own = keyPriority ?? 'interactive';
  if (header === undefined) return own;
  const asked = header.trim().toLowerCase();
  if (asked !== 'interactive' && asked !== 'batch') {
    throw errors.invalidRequest('x-gateway-priority must be "interactive" or "batch".', { param: 'x-gateway-priority', code: 'invalid_header' });
  }
  return asked === 'batch' ? 'batch' : own;
}

/** Whether an error code is a provider quota's refusal (429 `quota_wait_exceeded`, `quota_queue_full`): the gateway's, not the target's. */
export const isQuotaRefusal = (code: string | null | undefined): boolean => code === 'quota_wait_exceeded' || code === 'quota_queue_full';
