import { errors, type GatewayError } from '../errors.js';

/** How many failed authentications are allowed before further failures are answered 429. */
export interface FailedAuthLimits {
  /** Failures one client address may make per window. */
  readonly perAddress: number;
  /** Failures all addresses together may make per window. */
  readonly global: number;
  readonly windowMs: number;
  /** Addresses tracked at once; past it the oldest windows are forgotten. */
  readonly maxAddresses: number;
}

interface Window {
  start: number;
  count: number;
}

/**
 * Counts failed authentications (wrong API key on the API and the admin routes, wrong key at the
 * dashboard sign-in) per client address and in total, in fixed windows, in this process's memory
 * (each instance counts its own). Past a limit, a failed attempt is answered 429
 * `too_many_failed_auth` with Retry-After instead of 401. Successful calls never consult it: a valid
 * key keeps working from an address that is throttled, so that a key guesser cannot lock real
 * clients (or, with the global limit, everyone) out.
 */
export class FailedAuthLimiter {
  private readonly addresses = new Map<string, Window>();
  private readonly total: Window = { start: 0, count: 0 };

  constructor(
    private readonly limits: FailedAuthLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one failure from `address` and returns the error to answer: `refusal`, or 429 past a limit. */
  failure(address: string, refusal: GatewayError): GatewayError {
    const now = this.now();
    const mine = this.windowOf(address, now);
    mine.count++;
    this.current(this.total, now).count++;
    if (mine.count > this.limits.perAddress) return this.tooMany(mine, now, 'this address');
    if (this.total.count > this.limits.global) return this.tooMany(this.total, now, 'all clients');
    return refusal;
  }

  /** Addresses with a window open now (for tests and metrics). */
  get trackedAddresses(): number {
    return this.addresses.size;
  }

  private current(window: Window, now: number): Window {
    if (now - window.start >= this.limits.windowMs) {
      window.start = now;
      window.count = 0;
    }
    return window;
  }

  /**
   * The address's open window. The map is kept in order of window start (a window that restarts
   * moves to the end), so when it is full the first entry is the oldest window and is dropped.
   */
  private windowOf(address: string, now: number): Window {
    const known = this.addresses.get(address);
    if (known && now - known.start < this.limits.windowMs) return known;
    this.addresses.delete(address);
    if (this.addresses.size >= this.limits.maxAddresses) {
      const oldest = this.addresses.keys().next().value;
      if (oldest !== undefined) this.addresses.delete(oldest);
    }
    const window = { start: now, count: 0 };
    this.addresses.set(address, window);
    return window;
  }

  private tooMany(window: Window, now: number, who: string): GatewayError {
    const retryAfter = Math.max(1, Math.ceil((window.start + this.limits.windowMs - now) / 1000));
    return errors.rateLimited(`Too many failed authentications from ${who}; retry after ${retryAfter} s.`, {
      code: 'too_many_failed_auth',
      headers: { 'retry-after': String(retryAfter) },
    });
  }
}
