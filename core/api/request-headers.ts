import { errors } from '../errors.js';
import { timeOrderedId } from '../ids.js';

const TRACE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * `x-gateway-trace-id` when given (1–128 of `[A-Za-z0-9._:-]`), else a new time-ordered UUID (v7):
 * the log's trace index then grows at its end (random v4 ids cost the SQLite log ~9 µs more per row).
 */
export function traceIdOf(value: string | undefined): string {
  if (value === undefined) return timeOrderedId();
  if (!TRACE_ID.test(value)) {
    throw errors.invalidRequest('x-gateway-trace-id must be 1 to 128 characters of A-Z, a-z, 0-9, ".", "_", ":" or "-".', {
      param: 'x-gateway-trace-id',
      code: 'invalid_header',
    });
  }
  return value;
}

/** `x-gateway-strict-api-compliance`: `true` (default) or `false`. */
export function strictOf(value: string | undefined): boolean {
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  throw errors.invalidRequest("x-gateway-strict-api-compliance must be 'true' or 'false'.", {
    param: 'x-gateway-strict-api-compliance',
    code: 'invalid_header',
  });
}

const METADATA_KEYS = 64;
const METADATA_KEY_LENGTH = 128;
const METADATA_VALUE_LENGTH = 512;

/** `x-gateway-metadata`: a JSON object of at most 64 string values (keys ≤ 128, values ≤ 512 characters). */
export function metadataOf(value: string | undefined): Record<string, string> {
  if (value === undefined) return {};
  const invalid = (message: string) =>
    errors.invalidRequest(`x-gateway-metadata ${message}`, { param: 'x-gateway-metadata', code: 'invalid_metadata' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid('must be a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('must be a JSON object.');
  const entries = Object.entries(parsed);
  if (entries.length > METADATA_KEYS) throw invalid(`may hold at most ${METADATA_KEYS} keys, got ${entries.length}.`);
  for (const [key, entry] of entries) {
    if (typeof entry !== 'string') throw invalid(`values must be strings; "${key}" is not.`);
    if (key.length > METADATA_KEY_LENGTH) throw invalid(`keys must be at most ${METADATA_KEY_LENGTH} characters.`);
    if (entry.length > METADATA_VALUE_LENGTH) throw invalid(`values must be at most ${METADATA_VALUE_LENGTH} characters; "${key}" is longer.`);
  }
  return parsed as Record<string, string>;
}
