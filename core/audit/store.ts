import { type AuditEvent, type AuditOutcome, canonicalJson } from './event.js';

// What both audit stores implement (SQLite under the data dir, PostgreSQL with DATABASE_URL), and
// the parts of their SQL they share. There is no method that updates or deletes one event: the
// only removal is retention's, of a whole prefix of the chain, in the transaction that records it.

/** A page of `GET /admin/audit`: newest first. Times in epoch milliseconds. */
export interface AuditQuery {
  /** `<type>:<id>` (`user:u_1`), or an id or a type alone. */
  readonly actor?: string;
  /** An action (`keys.create`), or a family of them (`keys.*`). */
  readonly action?: string;
  /** `<type>:<id>` (`virtual-key:vk_1`), or an id or a type alone. */
  readonly target?: string;
  readonly since?: number;
  readonly until?: number;
  readonly limit: number;
  /** Only events with a smaller `seq` (the cursor). */
  readonly beforeSeq?: number;
  /** Only events whose target belongs to one of these teams (a team's reader); absent: every event. */
  readonly teams?: readonly string[];
}

/** The chain's last event, read under the append lock. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** What retention removed: the prefix up to `throughSeq`, whose last hash the next event keeps. */
export interface RemovedSegment {
  readonly count: number;
  readonly throughSeq: number;
  readonly anchorHash: string;
}

export interface AuditStore {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Appends the event `build` makes from the chain's head (undefined: the chain is empty), reading
   * the head and inserting in one transaction that holds the store's append lock, so concurrent
   * writers (other processes, other instances) keep one chain.
   */
  append(build: (head: ChainHead | undefined) => AuditEvent): Promise<AuditEvent>;
  /** Newest first, filtered. */
  list(query: AuditQuery): Promise<AuditEvent[]>;
  /** Oldest first: the events with `seq > afterSeq`, at most `limit`. */
  range(afterSeq: number, limit: number): Promise<AuditEvent[]>;
  /** The newest retention event, which names where the kept chain starts. */
  lastOfAction(action: string): Promise<AuditEvent | undefined>;
  /**
   * Retention: removes the oldest events, up to the last one before the first event at or after
   * `cutoffMs` (a whole prefix, so the kept chain has no gap), and appends the event `build` makes
   * of what was removed, in one transaction under the append lock. Nothing older: undefined.
   */
  removeBefore(cutoffMs: number, build: (removed: RemovedSegment, head: ChainHead) => AuditEvent): Promise<AuditEvent | undefined>;
  close(): Promise<void>;
}

/** The table's columns, in insert order; `actor`, `target` and `changes` hold canonical JSON. */
export const COLUMNS = ['seq', 'id', 'time', 'time_ms', 'actor', 'actor_type', 'actor_id', 'action', 'target', 'target_type', 'target_id', 'changes', 'outcome', 'address', 'user_agent', 'prev_hash', 'hash'] as const;

export type AuditRow = Record<(typeof COLUMNS)[number], unknown>;

const json = (text: unknown) => (text === null || text === undefined ? null : JSON.parse(String(text)));

/** An event's row (the JSON members stored as the canonical text the hash covered). */
export function rowOf(event: AuditEvent): unknown[] {
  return [
    event.seq,
    event.id,
    event.time,
    Date.parse(event.time),
    canonicalJson(event.actor),
    event.actor.type,
    event.actor.id ?? null,
    event.action,
    event.target === null ? null : canonicalJson(event.target),
    event.target?.type ?? null,
    event.target?.id ?? null,
    event.changes === null ? null : canonicalJson(event.changes),
    event.outcome,
    event.address,
    event.user_agent,
    event.prev_hash,
    event.hash,
  ];
}

/** A stored row as the event, exactly as stored (verification recomputes its hash from this). */
export function eventOf(row: AuditRow): AuditEvent {
  return {
    id: String(row.id),
    seq: Number(row.seq),
    time: String(row.time),
    actor: json(row.actor),
    action: String(row.action),
    target: json(row.target),
    changes: json(row.changes),
    outcome: String(row.outcome) as AuditOutcome,
    address: row.address === null || row.address === undefined ? null : String(row.address),
    user_agent: row.user_agent === null || row.user_agent === undefined ? null : String(row.user_agent),
    prev_hash: String(row.prev_hash),
    hash: String(row.hash),
  };
}

const ACTOR_TYPES = new Set(['account', 'user', 'service-account', 'token', 'cli', 'system']);

/** `type:id` split at its first colon when the head is a type this filter knows (any, for targets). */
function typeAndId(value: string, isType: (type: string) => boolean): { type: string; id: string } | undefined {
  const colon = value.indexOf(':');
  if (colon <= 0) return undefined;
  const type = value.slice(0, colon);
  return isType(type) ? { type, id: value.slice(colon + 1) } : undefined;
}

/** The WHERE clause of a list query and its values; `placeholder(n)` is the store's n-th parameter (1-based). */
export function listWhere(query: AuditQuery, placeholder: (index: number) => string, teamOfTarget = "json_extract(target, '$.team')"): { where: string; values: unknown[] } {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const add = (condition: (...names: string[]) => string, ...given: unknown[]) => {
    const names = given.map((value) => {
      values.push(value);
      return placeholder(values.length);
    });
    conditions.push(condition(...names));
  };
  const pair = (value: string, column: 'actor' | 'target', isType: (type: string) => boolean) => {
    const split = typeAndId(value, isType);
    if (split) add((type, id) => `(${column}_type = ${type} AND ${column}_id = ${id})`, split.type, split.id);
    else add((id, type) => `(${column}_id = ${id} OR ${column}_type = ${type})`, value, value);
  };
  if (query.actor !== undefined) pair(query.actor, 'actor', (type) => ACTOR_TYPES.has(type));
  if (query.target !== undefined) pair(query.target, 'target', () => true);
  if (query.action !== undefined) {
    if (query.action.endsWith('.*')) {
      const prefix = query.action.slice(0, -1);
      add((value) => `substr(action, 1, ${prefix.length}) = ${value}`, prefix);
    } else add((value) => `action = ${value}`, query.action);
  }
  if (query.since !== undefined) add((value) => `time_ms >= ${value}`, query.since);
  if (query.until !== undefined) add((value) => `time_ms < ${value}`, query.until);
  if (query.beforeSeq !== undefined) add((value) => `seq < ${value}`, query.beforeSeq);
  // A team's reader: only the events of its teams' objects.
  if (query.teams !== undefined) {
    if (query.teams.length === 0) conditions.push('1 = 0');
    else add((...names) => `${teamOfTarget} IN (${names.join(', ')})`, ...query.teams);
  }
  return { where: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', values };
}
