import { errors } from '../../errors.js';
import type { ProviderPlugin } from '../../spec/provider.js';
import type { ChatRequest, Usage } from '../../spec/unified.js';
import type { SharedState } from '../../store/state.js';
import { expectedOutputTokens, promptTokensBound } from '../../vault/estimate.js';
import { fromNanos, periodsOf, toNanos } from '../../vault/limits.js';
import { costOf, type ModelPrice, type PriceTable, roundUsd, tokenCounts } from '../../vault/pricing.js';
import type { VirtualKeyRecord } from '../../vault/records.js';

const DAY_MS = 86_400_000;

/**
 * What a batch costs: its lines at the provider's batch price, reserved against the key's budget
 * when the batch is created and charged once when it ends (docs/batches.md). The reservation and
 * the charge use the shared state's one admission and one settle, on the same counters as the key's
 * other requests (`core/vault/limits.ts`), so a batch and single calls share one budget.
 */
export interface BatchMoneyDependencies {
  readonly state: () => SharedState;
  readonly prices: PriceTable;
  /** A virtual key's record (its limits); undefined for another caller. */
  readonly record: (keyId: string) => Promise<VirtualKeyRecord | undefined>;
  /** Output tokens assumed for a line without `max_tokens` (the vault's `outputTokenEstimate`). */
  readonly outputTokenEstimate: number;
}

/** The reservation a batch holds: released and replaced by its cost when it ends. */
export interface BatchReservation {
  readonly key: string;
  readonly nanos: number;
  readonly keyId: string;
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
function estimateUsd(requests: readonly ChatRequest[], price: (model: string) => ModelPrice | undefined, outputTokenEstimate: number): number {
  let total = 0;
  requests.forEach((request, line) => {
    const linePrice = price(request.model);
    if (linePrice === undefined) {
      throw errors.permission(`The model "${request.model}" (line ${line + 1}) has no price, and this key has a budget. Give it one with \`pricing.models\` in the gateway's configuration.`, {
        param: 'input_file_id',
        code: 'model_not_priced',
      });
    }
    total += costOf(linePrice, { promptTokens: promptTokensBound(request), completionTokens: expectedOutputTokens(request, outputTokenEstimate).tokens });
  });
  return total;
}

/**
 * Reserves the batch's expected cost against the key's budget (403 `budget_exceeded` when it does
 * not fit); undefined for a caller without a budget. The batch is not counted as a request against
 * the key's per-minute and per-day limits (its counters are the batch's own).
 */
export async function reserveBatch(
  dependencies: BatchMoneyDependencies,
  keyId: string | undefined,
  requests: readonly ChatRequest[],
  price: (model: string) => ModelPrice | undefined,
  batchId: string,
): Promise<BatchReservation | undefined> {
  if (keyId === undefined) return undefined;
  const limits = (await dependencies.record(keyId))?.limits;
  if (limits?.budget_usd === undefined) return undefined;
  const reservationNanos = toNanos(estimateUsd(requests, price, dependencies.outputTokenEstimate));
  const now = Date.now();
  const periods = periodsOf(keyId, now);
  const period = limits.budget_period ?? 'total';
  const budgetNanos = toNanos(limits.budget_usd);
  const periodTtlMs =
    period === 'day' ? periods.msUntilDayEnds + DAY_MS : period === 'week' ? periods.msUntilWeekEnds + DAY_MS : period === 'month' ? periods.msUntilMonthEnds + DAY_MS : undefined;
  const result = await dependencies.state().admit({
    now,
    requestId: batchId,
    levels: [
      {
        minuteWindowKey: `usage:${keyId}:batches:minute`,
        dayCounterKey: `usage:${keyId}:batches:day`,
        totalCounterKey: `usage:${keyId}:batches:total`,
        spentKey: periods.spent[period],
        reservedKey: periods.reserved[period],
        tokensWindowKey: `usage:${keyId}:batches:tokens`,
        concurrentKey: `usage:${keyId}:batches:inflight`,
        budgetNanos,
        ...(periodTtlMs !== undefined ? { periodTtlMs } : {}),
      },
    ],
    reservationNanos,
    tokens: 0,
    msUntilDayEnds: periods.msUntilDayEnds,
  });
  if (!result.admitted) {
    const spent = result.reason === 'budget' ? `$${fromNanos(result.spentNanos)} spent and $${fromNanos(result.reservedNanos)} reserved` : 'the limit reached';
    throw errors.permission(`This key's budget of $${limits.budget_usd} cannot hold this batch, estimated at up to $${fromNanos(reservationNanos)} (${spent}).`, {
      param: 'input_file_id',
      code: 'budget_exceeded',
    });
  }
  return { key: periods.reserved[period], nanos: result.reservedNanos, keyId };
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

/** Replaces the reservation by the cost, once (the caller holds the batch's end claim). */
export async function settleBatch(dependencies: BatchMoneyDependencies, reservation: BatchReservation | undefined, costUsd: number): Promise<void> {
  if (reservation === undefined) return;
  const now = Date.now();
  const periods = periodsOf(reservation.keyId, now);
  await dependencies.state().settle({
    requestId: reservation.keyId,
    reservationNanos: reservation.nanos,
    actualNanos: toNanos(costUsd),
    estimatedTokens: 0,
    levels: [
      {
        reservedKey: reservation.key,
        spent: [
          { key: periods.spent.total },
          { key: periods.spent.day, ttlMs: periods.msUntilDayEnds + DAY_MS },
          { key: periods.spent.week, ttlMs: periods.msUntilWeekEnds + DAY_MS },
          { key: periods.spent.month, ttlMs: periods.msUntilMonthEnds + DAY_MS },
        ],
      },
    ],
  });
}
