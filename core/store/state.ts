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
  /** Atomically checks every limit of every level of one request and, when all admit it, counts it and reserves its cost at each. */
  admit(admission: Admission): Promise<AdmissionResult>;
  /**
   * Atomically replaces the reservations by the actual cost at every level. When `settlement.report`
   * names spent counters, resolves with their values after this settle (what the budget alerts
   * compare with the budgets), or undefined when this state cannot tell without another read.
   */
  settle(settlement: Settlement): Promise<number[] | undefined>;
  /** Reads counters (missing ones are 0). */
  read(counterKeys: readonly string[]): Promise<number[]>;
  /** Requests admitted in the per-minute window `key` during the minute before `now` (read-only; 0 when none). */
  minuteCount(key: string, now: number): Promise<number>;
  /** Tokens counted in the token window `tokensKey` during the minute before `now`, and requests in flight in `concurrentKey` (read-only). */
  windowUsage(tokensKey: string, concurrentKey: string, now: number): Promise<{ tokens: number; inFlight: number }>;
  /** Tells every instance (this one included) that a record changed. */
  publish(event: InvalidationEvent): Promise<void>;
  /** Registers the handler for every instance's events. */
  subscribe(handler: (event: InvalidationEvent) => void): void;
  close(): Promise<void>;
  /** Providers' quotas shared fairly between teams (core/store/quota-state.ts): counted once for every instance and worker. */
  readonly quota: QuotaStore;
}

export interface InvalidationEvent {
  /** `route` and `model-alias`: a stored route or an alias changed (see core/routing/store.ts); `mcp-server`: an upstream MCP server or its tools (core/mcp/server-store.ts); `mcp-cancel`: a client cancelled an MCP request (`<session>:<request id>`), which whichever instance runs it stops; `team`: a team's MCP grant changed or the team was deleted (core/org/store.ts), so its keys' open MCP sessions re-list. */
  readonly kind: 'virtual-key' | 'credential' | 'route' | 'model-alias' | 'mcp-server' | 'mcp-cancel' | 'team';
  readonly id: string;
}

/**
 * The counters and limits of one level a request is admitted at (its key, team, user, organization,
 * end user or tag: core/vault/levels.ts). Keys are relative to the state's prefix. Money is in
 * integer nano-USD so increments stay exact.
 */
export interface LevelAdmission {
  /** Sliding 60-second window of admitted requests (only kept when `requestsPerMinute` is set). */
  readonly minuteWindowKey: string;
  /** Requests of the current UTC day and in total; absent: not counted (a level of its own only counts what it limits). */
  readonly dayCounterKey?: string;
  readonly totalCounterKey?: string;
  /**
   * Spent and reserved in the budget's period (only used when `budgetNanos` is set). Each reservation
   * is also recorded, until its request settles, as a member `<request id>|<nanos>` of the lease set
   * `<reservedKey>:leases` scored by its lease's end: an admission first releases the expired ones
   * (a crashed instance's), so they cannot stay counted for good.
   */
  readonly spentKey: string;
  readonly reservedKey: string;
  /** Sliding 60-second window of tokens (only kept when `tokensPerMinute` is set). */
  readonly tokensWindowKey: string;
  /** Requests in flight (only kept when `maxConcurrent` is set). */
  readonly concurrentKey: string;
  readonly requestsPerMinute?: number;
  readonly requestsPerDay?: number;
  readonly tokensPerMinute?: number;
  readonly maxConcurrent?: number;
  readonly budgetNanos?: number;
  /** How long the reservation counter of the current period must live (ms); undefined: forever. */
  readonly periodTtlMs?: number;
}

/** One request's admission at every level that applies: all admit it, or none counts it. */
export interface Admission {
  readonly now: number;
  /** Unique per request (a member of the per-minute, token and concurrency windows). */
  readonly requestId: string;
  readonly levels: readonly LevelAdmission[];
  /** The expected cost, reserved at every level with a budget. */
  readonly reservationNanos: number;
  /**
   * The reservation is a ceiling (pass-through, whose cost is unknown): reserve what is left of the
   * tightest budget up to it, and admit while anything is left. Otherwise it must fit whole.
   */
  readonly reservationIsCeiling?: boolean;
  /** The request's estimated tokens (input + output), counted in every token window. */
  readonly tokens: number;
  /** Milliseconds until the current UTC day ends (Retry-After for the daily limit). */
  readonly msUntilDayEnds: number;
  /** How long a request counts as in flight when it is never settled (a crashed instance); default {@link CONCURRENCY_LEASE_MS}. */
  readonly leaseMs?: number;
  /**
   * How long the reservation stays counted when it is never settled (a crashed instance); default
   * {@link RESERVATION_LEASE_MS}. A settle after it ended charges the cost but releases nothing.
   */
  readonly reservationLeaseMs?: number;
  /**
   * The reservation outlives the process that made it (a batch's, settled by whichever instance sees
   * it end). The embedded store writes only these leases to its file: after a restart, every other
   * reservation belonged to a request that died with the process, and is released at once.
   */
  readonly reservationPersists?: boolean;
}

/** A request still counts as in flight this long after its admission if nothing settles it (a crashed instance). */
export const CONCURRENCY_LEASE_MS = 600_000;

/**
 * A request's reservation stays counted this long after its admission if nothing settles it (a
 * crashed instance): twice the default `upstream.timeoutMs` (one attempt's deadline, streams
 * included), so that a request with a retry or a fallback still settles within it
 * (`vault.reservationLeaseMs` changes it).
 */
export const RESERVATION_LEASE_MS = 1_200_000;

/** A batch's reservation lease: its 24-hour completion window and a day more for an instance to notice its end. */
export const BATCH_RESERVATION_LEASE_MS = 48 * 3_600_000;

/** What one level looked like after admitting the request (for the `x-ratelimit-*` headers). */
export interface LevelCounts {
  /** Requests in the last minute, this one included (0 when the level has no per-minute limit). */
  readonly minuteCount: number;
  /** Ms until the oldest request of the window leaves it. */
  readonly minuteResetMs: number;
  /** Tokens in the last minute, this request's estimate included (0 without a token limit). */
  readonly tokensInWindow: number;
  readonly tokensResetMs: number;
}

export type RefusalReason = 'requests_per_minute' | 'requests_per_day' | 'tokens_per_minute' | 'max_concurrent' | 'budget';

export type AdmissionResult =
  | { readonly admitted: true; readonly reservedNanos: number; readonly levels: readonly LevelCounts[] }
  | {
      readonly admitted: false;
      /** Index in `Admission.levels` of the level that refused. */
      readonly level: number;
      readonly reason: RefusalReason;
      /** Ms until the refused limit could admit the request (budget: 0). */
      readonly retryAfterMs: number;
      /** Requests, tokens or requests in flight counted against the limit (budget: 0). */
      readonly count: number;
      readonly spentNanos: number;
      readonly reservedNanos: number;
    };

/** What settling one level does: release its reservation, add the cost, correct its token window, end its request in flight. */
export interface LevelSettlement {
  /** The reservation to release (absent when nothing was reserved at this level). */
  readonly reservedKey?: string;
  /** Counters the actual cost is added to, each with its lifetime (none: forever). */
  readonly spent: ReadonlyArray<{ readonly key: string; readonly ttlMs?: number }>;
  readonly tokensWindowKey?: string;
  readonly concurrentKey?: string;
}

export interface Settlement {
  readonly requestId: string;
  /** What each level with a budget reserved (the same at each). */
  readonly reservationNanos: number;
  readonly actualNanos: number;
  /** The tokens the admission counted, and the actual ones (absent: the estimate stays). */
  readonly estimatedTokens: number;
  readonly actualTokens?: number;
  readonly levels: readonly LevelSettlement[];
  /** Spent counters whose values after this settle are wanted back (what the budget alerts compare). */
  readonly report?: readonly string[];
  /**
   * The reservation has no lease member (a batch stored before reservations had leases): released
   * without one. Otherwise it is released only if its member `<request id>|<reservationNanos>` is
   * still in the lease set (not reclaimed after its lease ended), so it is never released twice.
   */
  readonly unleased?: boolean;
}
