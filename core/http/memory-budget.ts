import { errors, type GatewayError } from '../errors.js';

/** 503 `overloaded` with Retry-After: the gateway holds as many bytes as it is allowed to. */
export const overloaded = (): GatewayError =>
  errors.overloaded('The gateway is holding as much request and answer data in memory as it is configured to; retry shortly.', {
    code: 'overloaded',
    headers: { 'retry-after': '1' },
  });

/**
 * One count of the bytes held in memory by every request in flight: request bodies being read and
 * upstream answers read whole. Each holder takes a {@link MemoryLease}, grows it as it reads and
 * releases it when the bytes are no longer held; a lease that would pass the limit fails with 503
 * `overloaded` instead of growing (issue 14: 40 unauthenticated 24 MB uploads took RSS to 2 GB).
 */
export class MemoryBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes currently held by all leases. */
  get usedBytes(): number {
    return this.used;
  }

  /** A new, empty lease. */
  lease(): MemoryLease {
    return new MemoryLease(this);
  }

  /** @internal used by leases */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  /** @internal used by leases */
  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

/** Bytes one holder keeps in memory, counted against a {@link MemoryBudget}. */
export class MemoryLease {
  private held = 0;

  constructor(private readonly budget: MemoryBudget) {}

  get heldBytes(): number {
    return this.held;
  }

  /** Counts `bytes` more; throws 503 `overloaded` (counting nothing) when the budget has no room. */
  grow(bytes: number): void {
    if (!this.budget.take(bytes)) throw overloaded();
    this.held += bytes;
  }

  /** Gives every byte back; safe to call more than once. */
  release(): void {
    this.budget.give(this.held);
    this.held = 0;
  }
}
