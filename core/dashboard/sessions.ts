import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** One signed-in dashboard browser. The account key itself is never kept. */
export interface DashboardSession {
  readonly expiresAt: number;
  /** Sent back by the page in `x-gateway-csrf` on every admin call (defence in depth beyond SameSite). */
  readonly csrfToken: string;
}

const token = (): string => randomBytes(32).toString('base64url');
const digest = (value: string): string => createHash('sha256').update(value).digest('base64url');

/**
 * Server-side dashboard sessions: a random id (the cookie) maps to an expiry and a CSRF token.
 * Ids are stored hashed, so a heap dump does not yield usable cookies. In memory, per instance:
 * behind a load balancer a browser signs in again on another instance.
 */
export class DashboardSessions {
  private readonly sessions = new Map<string, DashboardSession>();

  constructor(
    private readonly ttlMs: number = 8 * 60 * 60 * 1000,
    private readonly maxSessions: number = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts a session; returns the cookie value (shown to the browser only) and the session. */
  create(): { id: string; session: DashboardSession } {
    this.sweep();
    // Bounded: the oldest session goes first (Map keeps insertion order).
    while (this.sessions.size >= this.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    const id = token();
    const session = { expiresAt: this.now() + this.ttlMs, csrfToken: token() };
    this.sessions.set(digest(id), session);
    return { id, session };
  }

  /** The live session for a cookie value, if any. */
  get(id: string | undefined): DashboardSession | undefined {
    if (!id) return undefined;
    const key = digest(id);
    const session = this.sessions.get(key);
    if (!session) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(key);
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

  delete(id: string | undefined): void {
    if (id) this.sessions.delete(digest(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}
