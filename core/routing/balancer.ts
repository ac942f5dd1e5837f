import type { RoutingStateStore } from './state.js';

/** What the balancer needs of a target. */
export interface Weighted {
  /** The state store's key of the target. */
  readonly key: string;
  readonly weight: number;
}

/** Weighted random choice (`random` in [0, 1)); a zero total picks the first. */
export function pickWeighted<T extends Weighted>(candidates: readonly T[], random: () => number): T {
  const total = candidates.reduce((sum, candidate) => sum + candidate.weight, 0);
  if (total <= 0) return candidates[0];
  let point = random() * total;
  for (const candidate of candidates) {
    point -= candidate.weight;
    if (point < 0) return candidate;
  }
  return candidates[candidates.length - 1];
}

/** The target with the fewest attempts in flight (ties: the heavier weight, then the first). */
export function pickLeastBusy<T extends Weighted>(candidates: readonly T[], state: RoutingStateStore): T {
  let best = candidates[0];
  let bestLoad = state.load(best.key).inFlight;
  for (const candidate of candidates.slice(1)) {
    const load = state.load(candidate.key).inFlight;
    if (load < bestLoad || (load === bestLoad && candidate.weight > best.weight)) {
      best = candidate;
      bestLoad = load;
    }
  }
  return best;
}

/** The target with the lowest latency average; a target not measured yet goes first, so that each gets measured. */
export function pickLowestLatency<T extends Weighted>(candidates: readonly T[], state: RoutingStateStore): T {
  let best = candidates[0];
  let bestLatency = state.load(best.key).latencyMs ?? -1;
  for (const candidate of candidates.slice(1)) {
    const latency = state.load(candidate.key).latencyMs ?? -1;
    if (latency < bestLatency) {
      best = candidate;
      bestLatency = latency;
    }
  }
  return best;
}

/** Orders candidates for a load-balanced route: the policy's pick first, then the policy's pick among the rest, and so on. */
export function balanceOrder<T extends Weighted>(
  candidates: readonly T[],
  policy: 'weighted' | 'least_busy' | 'lowest_latency',
  state: RoutingStateStore,
  random: () => number,
): T[] {
  const remaining = candidates.filter((candidate) => candidate.weight > 0);
  const order: T[] = [];
  while (remaining.length > 0) {
    const pick = policy === 'least_busy' ? pickLeastBusy(remaining, state) : policy === 'lowest_latency' ? pickLowestLatency(remaining, state) : pickWeighted(remaining, random);
    order.push(pick);
    remaining.splice(remaining.indexOf(pick), 1);
  }
  return order;
}
