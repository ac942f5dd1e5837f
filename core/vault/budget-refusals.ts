import type { SharedState } from '../store/state.js';

/**
 * The smallest estimate of a request the gateway refused for a key's budget, in one period (the
 * period's spent counter names it) at one budget. Spend can stop short of the budget while what is
 * left is less than a request's estimate: the gateway then refuses, and this record is what lets the
 * usage API (and the dashboard) call the key exhausted although spend reads, say, 84.6 %.
 */
interface StoredRefusal {
  readonly spent_key: string;
  readonly budget_nanos: number;
  readonly estimate_nanos: number;
  readonly at: string;
}

export interface RefusedForBudget {
  readonly keyId: string;
  /** The spent counter of the budget's current period (`usage:<id>:spent:day:2026-11-28`). */
  readonly spentKey: string;
  readonly budgetNanos: number;
  /** What the refused request was estimated at (its reservation). */
  readonly estimateNanos: number;
  readonly now: number;
}

const recordKey = (keyId: string): string => `budget-refusal:${keyId}`;
const MAX_REMEMBERED = 10_000;

/**
 * Budget refusals, one record per key in the shared state (so every instance's usage API sees it).
 * A refusal is written only when it is the key's first in the period at this budget or its estimate
 * is smaller than the one recorded: a client retrying a refused request writes nothing more.
 */
export class BudgetRefusals {
  /** What this instance knows is stored, per key (skips the read on repeated refusals). */
  private readonly known = new Map<string, StoredRefusal>();

  constructor(private readonly state: () => SharedState) {}

  /** Records a refusal for the budget; never throws (the refusal is answered whatever happens here). */
  async refused(refusal: RefusedForBudget): Promise<void> {
    try {
      const known = this.known.get(refusal.keyId);
      if (covers(known, refusal)) return;
      const records = this.state().records;
      const stored = (await records.get<StoredRefusal>(recordKey(refusal.keyId))) ?? undefined;
      if (covers(stored, refusal)) {
        this.remember(refusal.keyId, stored!);
        return;
      }
      const record: StoredRefusal = { spent_key: refusal.spentKey, budget_nanos: refusal.budgetNanos, estimate_nanos: refusal.estimateNanos, at: new Date(refusal.now).toISOString() };
      await records.set(recordKey(refusal.keyId), record);
      this.remember(refusal.keyId, record);
    } catch {
      // The shared state is unreachable: the usage API then reads spend alone.
    }
  }

  /**
   * The smallest estimate refused in the budget's current period at the current budget, in nano-USD,
   * with when it was first refused; undefined when none was.
   */
  async current(keyId: string, spentKey: string, budgetNanos: number): Promise<{ estimateNanos: number; at: string } | undefined> {
    const stored = await this.state().records.get<StoredRefusal>(recordKey(keyId));
    if (!stored || stored.spent_key !== spentKey || stored.budget_nanos !== budgetNanos) return undefined;
    return { estimateNanos: stored.estimate_nanos, at: stored.at };
  }

  /** Forgets a deleted key's record. */
  async forget(keyId: string): Promise<void> {
    this.known.delete(keyId);
    await this.state().records.delete(recordKey(keyId));
  }

  private remember(keyId: string, record: StoredRefusal): void {
    if (this.known.size >= MAX_REMEMBERED) this.known.clear();
    this.known.set(keyId, record);
  }
}

/** True when `stored` is of the refusal's period and budget with an estimate no larger: nothing to write. */
function covers(stored: StoredRefusal | undefined, refusal: RefusedForBudget): boolean {
  return stored !== undefined && stored.spent_key === refusal.spentKey && stored.budget_nanos === refusal.budgetNanos && stored.estimate_nanos <= refusal.estimateNanos;
}
