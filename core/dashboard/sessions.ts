import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** One signed-in dashboard browser. The account key itself is never kept. */
export interface DashboardSession {
  readonly expiresAt: number;
  /** Sent back by the page in `x-gateway-csrf` on every admin call (defence in depth beyond SameSite). */
  readonly csrfToken: string;
  /**
   * Who signed in through single sign-on: the principal the sign-in handler named (a user id).
   * Absent for a session made with the account key.
   */
  readonly principal?: string;
}

/** Where sessions are kept when they are shared: the state store's records (a keyv). */
export interface SessionRecords {
  get(key: string): Promise<unknown>;
  set(key: string, value: DashboardSession, ttlMs: number): Promise<unknown>;
  delete(key: string): Promise<unknown>;
}

const token = (): string => randomBytes(32).toString('base64url');
const digest = (value: string): string => createHash('sha256').update(value).digest('base64url');
const RECORD_PREFIX = 'dashboard-session:';

/**
 * Dashboard sessions: a random id (the cookie) maps to an expiry and a CSRF token. Ids are stored
 * hashed, so neither a heap dump nor the store yields usable cookies.
 *
 * Once the state store is open (`records` returns it) sessions live there, so every process that
 * shares it knows them: the workers of `GATEWAY_WORKERS`, instances sharing Redis, and the same
 * gateway after a restart. Signing out deletes the record, so it ends the session everywhere.
 * Before the store opens (only in tests that never listen) they are kept in memory, bounded.
 */
export class DashboardSessions {
  private readonly memory = new Map<string, DashboardSession>();

  constructor(
    private readonly ttlMs: number = 8 * 60 * 60 * 1000,
    private readonly maxSessions: number = 1000,
    private readonly now: () => number = Date.now,
    private readonly records: () => SessionRecords | undefined = () => undefined,
  ) {}

  /** Starts a session (bound to a principal after a single sign-on); returns the cookie value (shown to the browser only) and the session. */
  async create(principal?: string): Promise<{ id: string; session: DashboardSession }> {
    const id = token();
    const session: DashboardSession = { expiresAt: this.now() + this.ttlMs, csrfToken: token(), ...(principal === undefined ? {} : { principal }) };
    const shared = this.records();
    if (shared) {
      await shared.set(RECORD_PREFIX + digest(id), session, this.ttlMs);
    } else {
      this.sweep();
      // Bounded: the oldest session goes first (Map keeps insertion order).
      while (this.memory.size >= this.maxSessions) this.memory.delete(this.memory.keys().next().value!);
      this.memory.set(digest(id), session);
    }
    return { id, session };
  }

  /** The live session for a cookie value, if any. */
  async get(id: string | undefined): Promise<DashboardSession | undefined> {
    if (!id) return undefined;
    const key = digest(id);
    const shared = this.records();
    const session = shared ? ((await shared.get(RECORD_PREFIX + key)) as DashboardSession | undefined) : this.memory.get(key);
    if (!session) return undefined;
    if (session.expiresAt <= this.now()) {
      if (shared) await shared.delete(RECORD_PREFIX + key);
      else this.memory.delete(key);
      return undefined;
    }
    return session;
  }

  /** True when `candidate` is the session's CSRF token (constant time). */
  static csrfMatches(session: DashboardSession, candidate: string): boolean {
    const expected = Buffer.from(session.csrfToken);
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  async delete(id: string | undefined): Promise<void> {
    if (!id) return;
    const shared = this.records();
    if (shared) await shared.delete(RECORD_PREFIX + digest(id));
    else this.memory.delete(digest(id));
  }

  /** Sessions kept in memory (none once the store is open). */
  get size(): number {
    return this.memory.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, session] of this.memory) if (session.expiresAt <= now) this.memory.delete(key);
  }
}
