import type Keyv from 'keyv';
import type { QuotaStore } from './quota-state.js';

/**
 * Shared state for the vault and virtual keys: records in keyv, plus the few operations keyv cannot
 * make atomic (unique names, index sets, limit counters) and an invalidation bus. The embedded
 * implementation uses one SQLite file (transactions); the Redis one Lua scripts and pub/sub, so
 * several gateway instances share everything.
 */
export interface SharedState {
  /** `embedded` (SQLite under GATEWAY_DATA_DIR) or `redis`. */
  readonly kind: 'embedded' | 'redis';
  /** Records (credentials, virtual keys) by key; callers prefix keys by record type. */
  readonly records: Keyv;
  /** Claims a unique name for `owner`; false when another owner holds it. */
  claim(name: string, owner: string): Promise<boolean>;
  /** Releases a name claimed by `owner` (no-op when someone else holds it). */
  release(name: string, owner: string): Promise<void>;
  addToSet(set: string, member: string): Promise<void>;
  removeFromSet(set: string, member: string): Promise<void>;
  members(set: string): Promise<string[]>;
  /** Atomically checks every limit of one request and, when admitted, counts it and reserves its cost. */
  admit(admission: Admission): Promise<AdmissionResult>;
  /**
   * Atomically replaces a reservation by the actual cost. When `settlement.report` names one of the
   * spent counters, resolves with its value after this settle (what the budget alerts compare with
   * the budget), or undefined when this state cannot tell without another read.
   */
  settle(settlement: Settlement): Promise<number | undefined>;
  /** Reads counters (missing ones are 0). */
  read(counterKeys: readonly string[]): Promise<number[]>;
  /** Requests admitted in the per-minute window `key` during the minute before `now` (read-only; 0 when none). */
  minuteCount(key: string, now: number): Promise<number>;
  /** Tells every instance (this one included) that a record changed. */
  publish(event: InvalidationEvent): Promise<void>;
  /** Registers the handler for every instance's events. */
  subscribe(handler: (event: InvalidationEvent) => void): void;
  close(): Promise<void>;
  /** Providers' quotas shared fairly between teams (core/store/quota-state.ts): counted once for every instance and worker. */
  readonly quota: QuotaStore;
}

export interface InvalidationEvent {
  /** `route` and `model-alias`: a stored route or an alias changed (see core/routing/store.ts); `mcp-server`: an upstream MCP server or its tools (core/mcp/server-store.ts); `mcp-cancel`: a client cancelled an MCP request (`<session>:<request id>`), which whichever instance runs it stops. */
  readonly kind: 'virtual-key' | 'credential' | 'route' | 'model-alias' | 'mcp-server' | 'mcp-cancel';
  readonly id: string;
}

/** Counter keys and limits of one request. Money is in integer nano-USD so increments stay exact. */
export interface Admission {
  readonly now: number;
  /** Unique per request (a member of the per-minute window). */
  readonly requestId: string;
  readonly minuteWindowKey: string;
  readonly dayCounterKey: string;
  readonly totalCounterKey: string;
  /** Spent and reserved in the budget's period (only read when `budgetNanos` is set). */
  readonly spentKey: string;
  readonly reservedKey: string;
  readonly requestsPerMinute?: number;
  readonly requestsPerDay?: number;
  readonly budgetNanos?: number;
  readonly reservationNanos: number;
  /**
   * The reservation is a ceiling (pass-through, whose cost is unknown): reserve what is left of the
   * budget up to it, and admit while anything is left. Otherwise it must fit whole.
   */
  readonly reservationIsCeiling?: boolean;
  /** How long the reservation counter of the current period must live (ms); undefined: forever. */
  readonly periodTtlMs?: number;
  /** Milliseconds until the current UTC day ends (Retry-After for the daily limit). */
  readonly msUntilDayEnds: number;
}

export type AdmissionResult =
  | { readonly admitted: true; readonly minuteCount: number; readonly dayCount: number; readonly reservedNanos: number }
  | { readonly admitted: false; readonly reason: 'requests_per_minute'; readonly retryAfterMs: number; readonly count: number }
  | { readonly admitted: false; readonly reason: 'requests_per_day'; readonly retryAfterMs: number; readonly count: number }
  | { readonly admitted: false; readonly reason: 'budget'; readonly spentNanos: number; readonly reservedNanos: number };

export interface Settlement {
  /** The reservation to release (0 when nothing was reserved). */
  readonly reservedKey: string;
  readonly reservationNanos: number;
  /** Counters the actual cost is added to (total, day, month), each with its lifetime (none: forever). */
  readonly spent: ReadonlyArray<{ readonly key: string; readonly ttlMs?: number }>;
  readonly actualNanos: number;
  /** One of `spent`'s keys whose value after the settle is wanted back (the budget period's spend). */
  readonly report?: string;
}
