import { errors } from '../../errors.js';
import type { GatewayContext } from '../../pipeline/context.js';
import type { ProviderPlugin } from '../../spec/provider.js';
import type { ChatRequest, Usage } from '../../spec/unified.js';
import { BATCH_RESERVATION_LEASE_MS, type SharedState } from '../../store/state.js';
import type { ChargedBudget } from '../../vault/alerts.js';
import { expectedOutputTokens, promptTokensBound } from '../../vault/estimate.js';
import { calendarAt, type Level, levelAdmission, type LevelName, periodCounter, spentCounters, tracksSpend } from '../../vault/levels.js';
import { levelRefusal } from '../../vault/level-refusals.js';
import { chargedBudget, toNanos } from '../../vault/limits.js';
import { costOf, type ModelPrice, type PriceTable, roundUsd, tokenCounts } from '../../vault/pricing.js';
import type { LevelLimits } from '../../vault/records.js';

/**
 * What a batch costs: its lines at the provider's batch price, reserved when the batch is created
 * and charged once when it ends, at every level its creating request is admitted at (the key, its
 * end-user and tag rules, its user or service account, its team, the organization: the levels of
 * `core/vault/applicable-levels.ts`), with the shared state's one admission and one settle on the
 * same counters as single calls (`core/vault/limits.ts`), so a batch and single calls share each budget.
 */
export interface BatchMoneyDependencies {
  readonly state: () => SharedState;
  readonly prices: PriceTable;
  /** The levels of the creating request's caller (undefined: none binds it, as the account key). */
  readonly levels: (context: GatewayContext) => Promise<readonly Level[] | undefined>;
  /** Output tokens assumed for a line without `max_tokens` (the vault's `outputTokenEstimate`). */
  readonly outputTokenEstimate: number;
  /** Told after the batch is charged at a level with a budget or a soft budget (the budget alerts). */
  readonly onCharged?: (budget: ChargedBudget, spentNanos: number | undefined) => void;
}

/** One level a batch was admitted at, as the batch keeps it until it ends (it may end on another instance, another day). */
export interface BatchLevel {
  readonly level: LevelName;
  readonly id: string;
  readonly name?: string;
  readonly base: string;
  readonly limits: Pick<LevelLimits, 'budget_usd' | 'soft_budget_usd' | 'budget_period'>;
  readonly countsRequests?: true;
  /** The counter the reservation was made on; absent at a level without a budget. */
  readonly reservedKey?: string;
}

/** The reservation a batch holds: released and replaced by its cost when it ends. */
export interface BatchReservation {
  readonly requestId: string;
  /** What each level with a budget reserved (nano-USD). */
  readonly nanos: number;
  readonly levels: readonly BatchLevel[];
  /** The reservation has a lease ({@link BATCH_RESERVATION_LEASE_MS}); absent on batches stored before leases, released without one. */
  readonly leased?: true;
}

/** A reservation as batches created before levels kept it: the key's alone. */
interface KeyReservation {
  readonly key: string;
  readonly nanos: number;
  readonly keyId: string;
}

/** A stored reservation, in today's form. */
export function batchReservation(stored: BatchReservation | KeyReservation | undefined): BatchReservation | undefined {
  if (stored === undefined || 'levels' in stored) return stored;
  return { requestId: stored.keyId, nanos: stored.nanos, levels: [{ level: 'key', id: stored.keyId, base: `usage:${stored.keyId}`, limits: {}, countsRequests: true, reservedKey: stored.key }] };
}

/**
 * The batch price of `model`: the listed price less the discount (the configured model's
 * `batchDiscount`, else the provider's declared one); undefined when the model has no price.
 */
export function batchPrice(prices: PriceTable, provider: ProviderPlugin, model: string, headers?: Readonly<Record<string, string | undefined>>): ModelPrice | undefined {
  const price = prices.price(provider, model, headers);
  if (price === undefined) return undefined;
  const discount = Math.min(1, Math.max(0, price.batchDiscount ?? provider.pricing?.batchDiscount ?? 0));
  if (discount === 0) return price;
  const keep = 1 - discount;
  return {
    input: price.input * keep,
    output: price.output * keep,
    ...(price.cachedInput === undefined ? {} : { cachedInput: price.cachedInput * keep }),
  };
}

/** The batch's expected cost (USD): each line's prompt bound and `max_tokens` (or the estimate) at the batch price. */
function estimateUsd(requests: readonly ChatRequest[], price: (model: string) => ModelPrice | undefined, outputTokenEstimate: number, budgeted: Level): number {
  let total = 0;
  requests.forEach((request, line) => {
    const linePrice = price(request.model);
    if (linePrice === undefined) {
      const whose = budgeted.level === 'key' ? 'this key has a budget' : `a budget applies (${budgeted.label})`;
      throw errors.permission(`The model "${request.model}" (line ${line + 1}) has no price, and ${whose}. Give it one with \`pricing.models\` in the gateway's configuration.`, {
        param: 'input_file_id',
        code: 'model_not_priced',
      });
    }
    total += costOf(linePrice, { promptTokens: promptTokensBound(request), completionTokens: expectedOutputTokens(request, outputTokenEstimate).tokens });
  });
  return total;
}

/**
 * A level's admission for a batch: its budget (spent and reserved in the budget's period), and
 * none of its request, token or concurrency limits, whose counters are the batch's own: a batch is
 * not a request against them (its HTTP calls are, as pass-through requests).
 */
function batchAdmission(level: Level, now: number) {
  const own = levelAdmission(level, now);
  return {
    minuteWindowKey: `${level.base}:batches:minute`,
    spentKey: own.spentKey,
    reservedKey: own.reservedKey,
    tokensWindowKey: `${level.base}:batches:tokens`,
    concurrentKey: `${level.base}:batches:inflight`,
    ...(own.budgetNanos !== undefined ? { budgetNanos: own.budgetNanos } : {}),
    ...(own.periodTtlMs !== undefined ? { periodTtlMs: own.periodTtlMs } : {}),
  };
}

/**
 * Reserves the batch's expected cost at every level with a budget, in one step (403
 * `budget_exceeded` naming the level that cannot hold it, before anything is created); undefined
 * for a caller no level binds.
 */
export async function reserveBatch(
  dependencies: BatchMoneyDependencies,
  levels: readonly Level[] | undefined,
  requests: readonly ChatRequest[],
  price: (model: string) => ModelPrice | undefined,
  batchId: string,
): Promise<BatchReservation | undefined> {
  if (levels === undefined || levels.length === 0) return undefined;
  const budgeted = levels.find((level) => level.limits.budget_usd !== undefined);
  const reservationNanos = budgeted === undefined ? 0 : toNanos(estimateUsd(requests, price, dependencies.outputTokenEstimate, budgeted));
  const now = Date.now();
  const admissions = levels.map((level) => batchAdmission(level, now));
  // The batch's own lease: its whole completion window, and a day more for its end to be seen.
  const result = await dependencies
    .state()
    .admit({ now, requestId: batchId, levels: admissions, reservationNanos, reservationLeaseMs: BATCH_RESERVATION_LEASE_MS, reservationPersists: true, tokens: 0, msUntilDayEnds: calendarAt(now).ends.day - now });
  if (!result.admitted) throw levelRefusal(result, levels[result.level]!, { reservationNanos, now, tokens: 0 });
  return {
    requestId: batchId,
    nanos: result.reservedNanos,
    leased: true,
    levels: levels.map((level, index) => ({
      level: level.level,
      id: level.id,
      ...(level.name !== undefined ? { name: level.name } : {}),
      base: level.base,
      limits: {
        ...(level.limits.budget_usd !== undefined ? { budget_usd: level.limits.budget_usd } : {}),
        ...(level.limits.soft_budget_usd !== undefined ? { soft_budget_usd: level.limits.soft_budget_usd } : {}),
        ...(level.limits.budget_period !== undefined ? { budget_period: level.limits.budget_period } : {}),
      },
      ...(level.countsRequests ? { countsRequests: true as const } : {}),
      ...(admissions[index]!.budgetNanos !== undefined ? { reservedKey: admissions[index]!.reservedKey } : {}),
    })),
  };
}

/** The cost (USD) of the lines that ran, each priced at its model's batch price. */
export function batchCostUsd(lines: ReadonlyArray<{ model: string; usage?: Usage }>, price: (model: string) => ModelPrice | undefined): number {
  let total = 0;
  for (const line of lines) {
    const linePrice = line.usage ? price(line.model) : undefined;
    if (linePrice && line.usage) total += costOf(linePrice, tokenCounts(line.usage));
  }
  return roundUsd(total);
}

/**
 * Replaces the reservation by the cost at every level, once (the caller holds the batch's end
 * claim), and tells the budget alerts of each level with a budget or a soft budget.
 */
export async function settleBatch(dependencies: BatchMoneyDependencies, reservation: BatchReservation | undefined, costUsd: number): Promise<void> {
  if (reservation === undefined) return;
  const now = Date.now();
  const actualNanos = toNanos(costUsd);
  const levels = reservation.levels.map((level) => ({ ...(level.reservedKey !== undefined && reservation.nanos > 0 ? { reservedKey: level.reservedKey } : {}), spent: spentCounters(level, now) }));
  const alerted = dependencies.onCharged !== undefined && actualNanos > 0 ? reservation.levels.filter((level) => tracksSpend(level.limits)) : [];
  const report = alerted.map((level) => periodCounter(level.base, 'spent', level.limits.budget_period ?? 'total', now));
  const spent = await dependencies.state().settle({
    requestId: reservation.requestId,
    reservationNanos: reservation.nanos,
    actualNanos,
    estimatedTokens: 0,
    levels,
    ...(report.length > 0 ? { report } : {}),
    ...(reservation.leased ? {} : { unleased: true }),
  });
  alerted.forEach((level, index) => dependencies.onCharged!(chargedBudget({ ...level, label: level.id }, report[index]!, now), spent?.[index]));
}
