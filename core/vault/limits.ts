import { randomUUID } from 'node:crypto';
import { checkTeamAccess, type TeamLookup, teamIdOf } from './team-access.js';
import { errors, GatewayError } from '../errors.js';
import type { GatewayContext } from '../pipeline/context.js';
import { tapStream } from '../pipeline/response.js';
import { attemptsUsageRead } from '../routing/attempt-usage.js';
import type { Hook } from '../pipeline/hook.js';
import type { AdmissionResult, SharedState } from '../store/state.js';
import { expectedOutputTokens, promptTokensBound, rerankSearchesBound } from './estimate.js';
import { costOf, type ModelPrice, type PriceTable, roundUsd, searchesCostOf, tokenCounts } from './pricing.js';
import type { ChargedBudget } from './alerts.js';
import type { RefusedForBudget } from './budget-refusals.js';
import type { VirtualKeyRecord } from './records.js';
import { type ObservedUsage, tapUsage } from '../http/usage-tap.js';
import type { Usage } from '../spec/unified.js';
import { servedRequest, servingAuth } from '../routing/attempt.js';

const NANOS_PER_USD = 1_000_000_000;
export const toNanos = (usd: number): number => Math.round(usd * NANOS_PER_USD);
export const fromNanos = (nanos: number): number => nanos / NANOS_PER_USD;

const DAY_MS = 86_400_000;

/** Request ids for per-minute windows: unique across instances (random per process), cheap per request. */
const PROCESS_ID = randomUUID();
let requestSequence = 0;

interface DayKeys {
  /** Start and end of the UTC day these keys belong to, and the end of its month (epoch ms). */
  readonly dayStart: number;
  readonly nextDay: number;
  readonly nextMonth: number;
  readonly keys: {
    readonly minuteWindow: string;
    readonly requestsTotal: string;
    readonly requestsDay: string;
    readonly spent: { readonly total: string; readonly day: string; readonly month: string };
    readonly reserved: { readonly total: string; readonly day: string; readonly month: string };
  };
  /** The spent counters a settle adds to, with their lifetimes as of `spentAt` (rebuilt once a minute). */
  spent?: Reservation['spent'];
  spentAt?: number;
}

/** Each key's counter keys for the current UTC day: built once a day instead of on every request; bounded. */
const dayKeysCache = new Map<string, DayKeys>();
const MAX_CACHED_KEYS = 10_000;

function dayKeysOf(keyId: string, now: number): DayKeys {
  const date = new Date(now);
  const day = date.toISOString().slice(0, 10);
  const month = day.slice(0, 7);
  const base = `usage:${keyId}`;
  return {
    dayStart: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()),
    nextDay: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1),
    nextMonth: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
    keys: {
      minuteWindow: `${base}:minute`,
      requestsTotal: `${base}:requests:total`,
      requestsDay: `${base}:requests:day:${day}`,
      spent: { total: `${base}:spent:total`, day: `${base}:spent:day:${day}`, month: `${base}:spent:month:${month}` },
      reserved: { total: `${base}:reserved:total`, day: `${base}:reserved:day:${day}`, month: `${base}:reserved:month:${month}` },
    },
  };
}

/** The cached counter keys of one virtual key for the UTC day of `now`. */
function dayKeysAt(keyId: string, now: number): DayKeys {
  let entry = dayKeysCache.get(keyId);
  if (entry === undefined || now < entry.dayStart || now >= entry.nextDay) {
    entry = dayKeysOf(keyId, now);
    if (dayKeysCache.size >= MAX_CACHED_KEYS) dayKeysCache.clear();
    dayKeysCache.set(keyId, entry);
  }
  return entry;
}

/** UTC calendar periods and counter keys of one virtual key at `now`. */
export function periodsOf(keyId: string, now: number) {
  const entry = dayKeysAt(keyId, now);
  return { msUntilDayEnds: entry.nextDay - now, msUntilMonthEnds: entry.nextMonth - now, ...entry.keys };
}

/**
 * The spent counters (total, day, month) a charge is added to, each living a day past its period.
 * Shared by the requests of one minute: a lifetime only decides when a finished period's counter
 * is dropped, so a minute's difference is of no consequence.
 */
function spentCounters(entry: DayKeys, now: number): Reservation['spent'] {
  if (entry.spent === undefined || now - entry.spentAt! >= 60_000 || now < entry.spentAt!) {
    entry.spent = Object.freeze([
      Object.freeze({ key: entry.keys.spent.total }),
      Object.freeze({ key: entry.keys.spent.day, ttlMs: entry.nextDay - now + DAY_MS }),
      Object.freeze({ key: entry.keys.spent.month, ttlMs: entry.nextMonth - now + DAY_MS }),
    ]);
    entry.spentAt = now;
  }
  return entry.spent;
}

interface Reservation {
  readonly reservedKey: string;
  readonly reservationNanos: number;
  readonly spent: ReadonlyArray<{ key: string; ttlMs?: number }>;
  /** The price the request was admitted at (for a response that names a model the table lacks). */
  readonly price?: ModelPrice;
  /** Set only for a key with a budget: what the budget alerts are told once the request is charged. */
  readonly budget?: ChargedBudget;
}

export interface LimitsDependencies {
  /** The shared state (opened after the hooks are built). */
  readonly state: () => SharedState;
  readonly prices: PriceTable;
  /** The key's record (cached by the lookup that authenticated the request). */
  readonly record: (id: string) => Promise<VirtualKeyRecord | undefined>;
  /** Output tokens reserved when a request gives no `max_tokens` (default 1024). */
  readonly outputTokenEstimate: number;
  /** A team key's team, whose allowed models and providers bound the key's requests. */
  readonly teams?: TeamLookup;
  /**
   * Told after a request of a key with a budget is charged (budget alerts), with the period's spend
   * after the charge when the shared state returned it; must return at once.
   */
  readonly onCharged?: (budget: ChargedBudget, spentNanos: number | undefined) => void;
  /** Told of a request refused for the key's budget before the refusal is answered (the usage API's `budget_exhausted`). */
  readonly onBudgetRefused?: (refusal: RefusedForBudget) => Promise<void>;
}

const requestField = (context: GatewayContext, field: string): unknown =>
  context.request.body !== null && typeof context.request.body === 'object' ? (context.request.body as Record<string, unknown>)[field] : undefined;

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * 403 unless the request's model and user are among the key's allowed ones (when it restricts them).
 * The models list is let through: it uses no model and acts for no user, and it lists only the
 * key's allowed models (`context.key.allowedModels`, applied by the models operation).
 */
function checkAccess(record: VirtualKeyRecord, context: GatewayContext): void {
  const limits = record.limits ?? {};
  if (context.operation === 'models') {
    if (limits.allowed_models) context.key = { ...context.key, allowedModels: limits.allowed_models };
    return;
  }
  const model = context.request.model;
  if (limits.allowed_models && (model === undefined || !limits.allowed_models.includes(model))) {
    throw errors.permission(
      model === undefined ? 'This key is limited to certain models, and this request names none the gateway can check.' : `This key may not use the model "${model}".`,
      { param: 'model', code: 'model_not_allowed' },
    );
  }
  if (limits.allowed_users) {
    const user = requestField(context, 'user');
    if (typeof user !== 'string' || !limits.allowed_users.includes(user)) {
      throw errors.permission('This key is limited to certain users; the request\'s "user" is not one of them.', { param: 'user', code: 'user_not_allowed' });
    }
  }
}

/** What a budget refusal tells: the key's counters, its period, and the refused request's estimate. */
interface BudgetRefusal {
  readonly spentNanos: number;
  readonly reservedNanos: number;
  readonly reservationNanos: number;
  /** When the period's counters start again (epoch ms); none for a `total` budget. */
  readonly resetsAt?: number;
  /** The output tokens the estimate assumed, and whether the request bounded them (`max_tokens`). */
  readonly outputTokens?: { readonly tokens: number; readonly bounded: boolean };
}

const usd = (nanos: number): string => `$${fromNanos(nanos).toFixed(9).replace(/0+$/, '').replace(/\.$/, '')}`;

/** 403 `budget_exceeded`, saying spent, reserved, budget, period, reset and the request's estimate, in its message and `error.budget`. */
function budgetRefusal(refused: BudgetRefusal, record: VirtualKeyRecord): GatewayError {
  const limits = record.limits ?? {};
  const period = limits.budget_period ?? 'total';
  const budgetNanos = toNanos(limits.budget_usd ?? 0);
  const { spentNanos, reservedNanos, reservationNanos, outputTokens } = refused;
  const resetsAt = refused.resetsAt === undefined ? null : new Date(refused.resetsAt).toISOString();
  const left = Math.max(0, budgetNanos - spentNanos - reservedNanos);
  const alone = spentNanos === 0 && reservedNanos === 0 && reservationNanos > budgetNanos;
  const state =
    `Budget ${usd(budgetNanos)} ${period === 'total' ? 'in total' : `per ${period}`}: ${usd(spentNanos)} spent, ${usd(reservedNanos)} reserved by requests in flight, ` +
    `${usd(left)} left${resetsAt === null ? '' : `; resets at ${resetsAt}`}.`;
  const lower =
    outputTokens === undefined
      ? ''
      : outputTokens.bounded
        ? ` Lower max_tokens (the estimate reserves ${outputTokens.tokens} output tokens).`
        : ` The request sets no max_tokens, so ${outputTokens.tokens} output tokens are assumed: set a lower max_tokens.`;
  const why = alone
    ? `This request alone is estimated at up to ${usd(reservationNanos)}, more than the key's whole budget.${lower}`
    : `This request is estimated at up to ${usd(reservationNanos)}, more than is left.${reservationNanos > left && left > 0 ? lower : ''}`;
  const error = errors.permission(`This key's budget is exceeded. ${state} ${why}`, { code: 'budget_exceeded' });
  const body = {
    ...error.body,
    budget: {
      spent_usd: fromNanos(spentNanos),
      reserved_usd: fromNanos(reservedNanos),
      budget_usd: fromNanos(budgetNanos),
      period,
      resets_at: resetsAt,
      request_estimate_usd: fromNanos(reservationNanos),
    },
  };
  return new GatewayError(error.status, body, error.headers);
}

/** The error for a refused admission: 403 `budget_exceeded`, or 429 with OpenAI's rate-limit headers. */
function refusal(result: Exclude<AdmissionResult, { admitted: true }>, record: VirtualKeyRecord, budget: Omit<BudgetRefusal, 'spentNanos' | 'reservedNanos'>): GatewayError {
  const limits = record.limits ?? {};
  if (result.reason === 'budget') return budgetRefusal({ ...budget, spentNanos: result.spentNanos, reservedNanos: result.reservedNanos }, record);
  const perMinute = result.reason === 'requests_per_minute';
  const limit = perMinute ? limits.requests_per_minute! : limits.requests_per_day!;
  const wait = seconds(result.retryAfterMs);
  return errors.rateLimited(`This key's limit of ${limit} requests per ${perMinute ? 'minute' : 'day'} is reached.`, {
    code: 'rate_limit_exceeded',
    headers: {
      'retry-after': String(wait),
      'x-ratelimit-limit-requests': String(limit),
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': `${wait}s`,
    },
  });
}

/** What a pass-through request of a key with a budget reserves, and is charged when its usage cannot be read. */
export const PASSTHROUGH_RESERVATION_USD = 0.01;

/**
 * The limits of virtual keys, as two hooks. `admit` (auth stage, after the key is resolved) checks
 * model, user, request volume and budget, and reserves the request's expected cost in one atomic
 * step shared by every instance; `settle` (log stage, before the log entry is built, so after a
 * stream has ended) replaces the reservation by the actual cost and sets `context.log.costUsd`. Both
 * run for every operation, pass-through included.
 */
export function limitHooks(dependencies: LimitsDependencies): { admit: Hook; settle: Hook; charge: UsageCharge } {
  const reservations = new WeakMap<GatewayContext, Reservation>();
  const observed = new WeakMap<GatewayContext, ObservedUsage>();
  const charged = new WeakMap<GatewayContext, number>();
  return { admit: admitHook(dependencies, reservations, observed), settle: settleHook(dependencies, reservations, observed, charged), charge: usageCharge(dependencies, reservations, charged) };
}

/**
 * Charges part of a request's usage as it arrives (a Realtime session's `response.done` events),
 * for an admitted request of a virtual key with a budget: its cost goes to the spent counters at
 * once and is remembered, so that `settle` charges only the rest. Resolves true when the key's
 * budget is spent after this charge (the caller may then end the request). Never throws.
 */
export type UsageCharge = (context: GatewayContext, usage: Usage, model: string | undefined) => Promise<boolean>;

function usageCharge(dependencies: LimitsDependencies, reservations: WeakMap<GatewayContext, Reservation>, charged: WeakMap<GatewayContext, number>): UsageCharge {
  return async (context, usage, model) => {
    const reservation = reservations.get(context);
    const auth = servingAuth(context);
    if (!reservation?.budget || !auth) return false;
    const price = (model && dependencies.prices.price(auth.provider, model, auth.target.headers)) || reservation.price;
    const nanos = price ? toNanos(costOf(price, tokenCounts(usage))) : 0;
    if (nanos <= 0) return false;
    const budget = reservation.budget;
    charged.set(context, (charged.get(context) ?? 0) + nanos);
    try {
      const spent = await dependencies.state().settle({ reservedKey: reservation.reservedKey, reservationNanos: 0, spent: reservation.spent, actualNanos: nanos, report: budget.spentKey });
      dependencies.onCharged?.(budget, spent);
      return spent !== undefined && spent >= budget.budgetNanos;
    } catch {
      // Not charged now: the settle at the end charges it.
      charged.set(context, (charged.get(context) ?? 0) - nanos);
      return false;
    }
  };
}

/**
 * The expected cost in nano-USD; 403 for an unpriced model under a budget. Pass-through bodies are
 * not read, so a pass-through request reserves up to a fixed amount (what is left of the budget,
 * at most), which is also what it is charged when its answer reports no usage the gateway can read.
 */
function reservationOf(record: VirtualKeyRecord, context: GatewayContext, price: ModelPrice | undefined, outputTokenEstimate: number): number {
  if (record.limits?.budget_usd === undefined) return 0;
  if (context.operation === 'passthrough') return toNanos(PASSTHROUGH_RESERVATION_USD);
  // A request that names no model (a models list) uses no tokens: nothing to price or reserve.
  if (context.request.model === undefined) return 0;
  if (price === undefined) {
    throw errors.permission(
      `The model "${context.request.model}" has no price, and this key has a budget. Give it one with \`pricing.models\` (or \`pricing.unknownModel\`) in the gateway's configuration; GET /admin/prices shows the price in use.`,
      { param: 'model', code: 'model_not_priced' },
    );
  }
  // A rerank produces no tokens; a model billed by the search reserves its searches too.
  if (context.operation === 'rerank') {
    return toNanos(costOf(price, { promptTokens: promptTokensBound(context.request.body), completionTokens: 0 }) + searchesCostOf(price, rerankSearchesBound(context.request.body)));
  }
  const output = expectedOutputTokens(context.request.body, outputTokenEstimate);
  return toNanos(costOf(price, { promptTokens: promptTokensBound(context.request.body), completionTokens: output.tokens }));
}

/** The auth stage's half: checks access, then admits and reserves in the shared state (see {@link limitHooks}). */
function admitHook(dependencies: LimitsDependencies, reservations: WeakMap<GatewayContext, Reservation>, observed: WeakMap<GatewayContext, ObservedUsage>): Hook {
  const { prices } = dependencies;
  return {
    name: 'virtual-key-limits',
    stage: 'auth',
    // Admission needs the caller and the request body, which the auth hook provides.
    after: ['gateway-auth'],
    async run(context, next) {
      const caller = context.auth?.caller;
      if (caller?.type !== 'virtual-key') return next();
      const record = await dependencies.record(caller.id);
      if (!record) throw errors.authentication('The x-gateway-api-key is not valid.', { code: 'invalid_api_key' });
      checkAccess(record, context);
      const teamId = dependencies.teams && context.operation !== 'models' ? teamIdOf(record) : undefined;
      if (teamId !== undefined) checkTeamAccess(await dependencies.teams!(teamId), context.request.model, context.auth?.provider?.id);
      const limits = record.limits ?? {};
      const model = context.request.model;
      const price = model === undefined ? undefined : prices.price(context.auth?.provider ?? record.provider ?? '', model, context.auth?.target.headers);
      const reservationNanos = reservationOf(record, context, price, dependencies.outputTokenEstimate);
      const now = Date.now();
      const day = dayKeysAt(record.id, now);
      const periods = day.keys;
      const msUntilDayEnds = day.nextDay - now;
      const msUntilMonthEnds = day.nextMonth - now;
      const budgetPeriod = limits.budget_period ?? 'total';
      const budgetNanos = limits.budget_usd === undefined ? undefined : toNanos(limits.budget_usd);
      const result = await dependencies.state().admit({
        now,
        requestId: `${PROCESS_ID}:${++requestSequence}`,
        minuteWindowKey: periods.minuteWindow,
        dayCounterKey: periods.requestsDay,
        totalCounterKey: periods.requestsTotal,
        spentKey: periods.spent[budgetPeriod],
        reservedKey: periods.reserved[budgetPeriod],
        requestsPerMinute: limits.requests_per_minute,
        requestsPerDay: limits.requests_per_day,
        budgetNanos,
        reservationNanos,
        reservationIsCeiling: context.operation === 'passthrough',
        periodTtlMs: budgetPeriod === 'day' ? msUntilDayEnds + DAY_MS : budgetPeriod === 'month' ? msUntilMonthEnds + DAY_MS : undefined,
        msUntilDayEnds,
      });
      if (!result.admitted) {
        if (result.reason === 'budget' && budgetNanos !== undefined) {
          await dependencies.onBudgetRefused?.({ keyId: record.id, spentKey: periods.spent[budgetPeriod], budgetNanos, estimateNanos: reservationNanos, now });
        }
        throw refusal(result, record, {
          reservationNanos,
          resetsAt: budgetPeriod === 'day' ? now + msUntilDayEnds : budgetPeriod === 'month' ? now + msUntilMonthEnds : undefined,
          outputTokens: context.operation === 'passthrough' ? undefined : expectedOutputTokens(context.request.body, dependencies.outputTokenEstimate),
        });
      }
      reservations.set(context, {
        reservedKey: periods.reserved[budgetPeriod],
        reservationNanos: result.reservedNanos,
        spent: spentCounters(day, now),
        price,
        budget:
          budgetNanos === undefined ? undefined : { keyId: record.id, keyName: record.name, budgetNanos, period: budgetPeriod, spentKey: periods.spent[budgetPeriod], now },
      });
      if (context.operation === 'passthrough') {
        // The bytes reach the client unchanged; the tap only reads the usage they report.
        tapStream(context, (stream, response) => tapUsage(stream, String(response.headers['content-type'] ?? ''), (usage) => observed.set(context, usage)));
      }
      await next();
    },
  };
}

/** The log stage's half: replaces the reservation by the actual cost and sets `context.log.costUsd` (see {@link limitHooks}). */
function settleHook(dependencies: LimitsDependencies, reservations: WeakMap<GatewayContext, Reservation>, observed: WeakMap<GatewayContext, ObservedUsage>, charged: WeakMap<GatewayContext, number>): Hook {
  const { prices } = dependencies;
  return {
    name: 'virtual-key-settle',
    stage: 'log',
    // The log entry records the cost this hook computes.
    before: ['gateway-log'],
    async run(context, next) {
      const reservation = reservations.get(context);
      const transform = context.transform;
      const seen = transform?.usage ? transform : observed.get(context);
      const auth = servingAuth(context);
      const model = seen?.model ?? servedRequest(context).model;
      const price = auth === undefined ? undefined : ((model && prices.price(auth.provider, model, auth.target.headers)) ?? reservation?.price);
      const searches = transform?.units?.searches;
      const answerUsd = sumUsd(
        seen?.usage && price ? costOf(price, tokenCounts(seen.usage)) : undefined,
        searches !== undefined && price && price.searches !== undefined ? searchesCostOf(price, searches) : undefined,
      );
      // Failed attempts' bodies are read in the background; their usage is wanted here.
      if (context.routed) await attemptsUsageRead(context.routed.attempts);
      // Besides the answer: failed attempts, and a semantic cache lookup's embedding (the caller's, on a hit as on a miss).
      const failedUsd = sumUsd(failedAttemptsUsd(context, reservation?.price, prices), context.cache?.embedding?.costUsd);
      const costUsd = answerUsd === undefined ? failedUsd : answerUsd + (failedUsd ?? 0);
      if (costUsd !== undefined) (context.log ??= {}).costUsd = roundUsd(costUsd);
      if (reservation) {
        // Usage unknown after a successful upstream answer (e.g. a stream cut short): charge the
        // reservation rather than nothing, so leaving early is no way around a budget.
        const answered = context.forward !== undefined && context.forward.status < 400;
        const failedNanos = toNanos(failedUsd ?? 0);
        const totalNanos = answerUsd !== undefined ? toNanos(answerUsd) + failedNanos : answered ? reservation.reservationNanos + failedNanos : failedNanos;
        // What `charge` already put on the counters as the usage arrived is not charged twice.
        const actualNanos = Math.max(0, totalNanos - (charged.get(context) ?? 0));
        try {
          const budget = reservation.budget;
          const charged = budget !== undefined && actualNanos > 0 && dependencies.onCharged !== undefined;
          // The period's spend after this charge comes back from the settle: the alerts need no read of their own.
          const spent = await dependencies
            .state()
            .settle({ reservedKey: reservation.reservedKey, reservationNanos: reservation.reservationNanos, spent: reservation.spent, actualNanos, report: charged ? budget.spentKey : undefined });
          if (charged) dependencies.onCharged!(budget, spent);
        } catch {
          // The store is unreachable: the reservation stays counted (conservative); the log records the cost.
        }
      }
      await next();
    },
  };
}

/**
 * What the failed attempts of a routed request cost: each attempt whose error body reported usage
 * (read by the route executor), priced with its own provider and model. The answer the client
 * got is not among them (its usage is the transform stage's), so no answer is charged twice.
 */
function failedAttemptsUsd(context: GatewayContext, fallbackPrice: ModelPrice | undefined, prices: PriceTable): number | undefined {
  // A routed request the forward stage never reached made no attempt (as an empty list).
  const attempts = context.routing ? (context.routed?.attempts ?? []) : undefined;
  if (attempts === undefined) return undefined;
  let total: number | undefined;
  for (const attempt of attempts) {
    if (attempt.usage === undefined) continue;
    const model = attempt.model ?? servedRequest(context).model;
    const price = (model && prices.price(attempt.provider, model)) || fallbackPrice;
    if (price) total = (total ?? 0) + costOf(price, tokenCounts(attempt.usage));
  }
  return total === undefined ? undefined : roundUsd(total);
}

/** The sum of the costs known; undefined when none is. */
const sumUsd = (...costs: Array<number | undefined>): number | undefined => costs.reduce<number | undefined>((total, cost) => (cost === undefined ? total : (total ?? 0) + cost), undefined);
