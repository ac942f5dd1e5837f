import { randomUUID } from 'node:crypto';

/**
 * A UUIDv7 (48-bit millisecond time, then random): ids sort by time, so the stores' indexes on
 * them (log entry ids, generated trace ids) grow at their end instead of taking random inserts.
 */
export function timeOrderedId(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
