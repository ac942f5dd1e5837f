import { randomUUID } from 'node:crypto';
import { checkTeamAccess, type TeamLookup, teamIdOf } from './team-access.js';
import { errors } from '../errors.js';
import type { GatewayContext } from '../pipeline/context.js';
import { tapStream } from '../pipeline/response.js';
import { attemptsUsageRead } from '../routing/attempt-usage.js';
import type { Hook } from '../pipeline/hook.js';
import type { LevelAdmission, SharedState } from '../store/state.js';
import type { Usage } from '../spec/unified.js';
import { estimatedTokens, expectedOutputTokens, promptTokensBound, rerankSearchesBound } from './estimate.js';
import { keyLevels, type Principals, serviceAccountLevels } from './applicable-levels.js';
import { type BudgetPeriod, calendarAt, type Level, levelAdmission, levelSettlement, periodCounter, tracksSpend } from './levels.js';
import { levelRefusal, rateHeaders } from './level-refusals.js';
import { costOf, type ModelPrice, type PriceTable, roundUsd, searchesCostOf, tokenCounts } from './pricing.js';
import type { ChargedBudget } from './alerts.js';
import type { RefusedForBudget } from './budget-refusals.js';
import type { VirtualKeyRecord } from './records.js';
import { type ObservedUsage, tapUsage } from '../http/usage-tap.js';
import { servedRequest, servingAuth } from '../routing/attempt.js';

const NANOS_PER_USD = 1_000_000_000;
export const toNanos = (usd: number): number => Math.round(usd * NANOS_PER_USD);
export const fromNanos = (nanos: number): number => nanos / NANOS_PER_USD;

/** Request ids for per-minute windows: unique across instances (random per process), cheap per request. */
const PROCESS_ID = randomUUID();
let requestSequence = 0;

/** UTC calendar periods and counter keys of one virtual key at `now` (the usage API's and MCP tool calls' view of a key's counters). */
export function periodsOf(keyId: string, now: number) {
  const base = `usage:${keyId}`;
  const periods = ['total', 'day', 'week', 'month'] as const;
  const counters = (kind: 'spent' | 'reserved') => Object.fromEntries(periods.map((period) => [period, periodCounter(base, kind, period, now)])) as Record<BudgetPeriod, string>;
  const { ends, ids } = calendarAt(now);
  return {
    msUntilDayEnds: ends.day - now,
    msUntilWeekEnds: ends.week - now,
    msUntilMonthEnds: ends.month - now,
    minuteWindow: `${base}:minute`,
    requestsTotal: `${base}:requests:total`,
    requestsDay: `${base}:requests:day:${ids.day}`,
    spent: counters('spent'),
    reserved: counters('reserved'),
  };
}

/** What the admission of one request left for its settlement. */
interface Reservation {
  readonly requestId: string;
  readonly now: number;
  readonly levels: readonly Level[];
  readonly admissions: readonly LevelAdmission[];
  /** What each level with a budget reserved. */
  readonly reservationNanos: number;
  /** The tokens counted in the token windows (0 when no level limits tokens). */
  readonly tokens: number;
  /** The price the request was admitted at (for a response that names a model the table lacks). */
  readonly price?: ModelPrice;
}

export interface LimitsDependencies {
  /** The shared state (opened after the hooks are built). */
  readonly state: () => SharedState;
  readonly prices: PriceTable;
  /** The key's record (cached by the lookup that authenticated the request). */
  readonly record: (id: string) => Promise<VirtualKeyRecord | undefined>;
  /** Output tokens reserved when a request gives no `max_tokens` (default 1024). */
  readonly outputTokenEstimate: number;
  /** How long a reservation counts when its request is never settled (`vault.reservationLeaseMs`; default the state's). */
  readonly reservationLeaseMs?: number;
  /** A team key's team, whose allowed models and providers bound the key's requests. */
  readonly teams?: TeamLookup;
  /** The users, service accounts and organization whose limits apply besides the key's (core/org). */
  readonly principals?: Principals;
  /**
   * Told after a request is charged at a level with a budget or a soft budget (budget alerts), with
   * the period's spend after the charge when the shared state returned it; must return at once.
   */
  readonly onCharged?: (budget: ChargedBudget, spentNanos: number | undefined) => void;
  /** Told of a request refused for the key's budget before the refusal is answered (the usage API's `budget_exhausted`). */
  readonly onBudgetRefused?: (refusal: RefusedForBudget) => Promise<void>;
}

const requestField = (context: GatewayContext, field: string): unknown =>
  context.request.body !== null && typeof context.request.body === 'object' ? (context.request.body as Record<string, unknown>)[field] : undefined;

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

/** What a pass-through request of a key with a budget reserves, and is charged when its usage cannot be read. */
export const PASSTHROUGH_RESERVATION_USD = 0.01;

/**
 * The limits at every level (docs/limits.md#levels), as two hooks and a charge. `admit` (auth stage,
 * after the caller is resolved) checks the key's access, then admits the request at every level that
 * applies (key, end user, tag, user, team, organization) and reserves its expected cost and tokens
 * in one atomic step shared by every instance; `settle` (log stage, before the log entry is built,
 * so after a stream has ended) replaces the reservations by the actual cost and tokens and sets
 * `context.log.costUsd`. Both run for every operation, pass-through included.
 */
export function limitHooks(dependencies: LimitsDependencies): LimitHooks {
  const reservations = new WeakMap<GatewayContext, Reservation>();
  const observed = new WeakMap<GatewayContext, ObservedUsage>();
  const charged = new WeakMap<GatewayContext, number>();
  return {
    admit: admitHook(dependencies, reservations, observed),
    settle: settleHook(dependencies, reservations, observed, charged),
    charge: usageCharge(dependencies, reservations, charged),
    levels: (context) => callerLevels(dependencies, context),
  };
}

export interface LimitHooks {
  readonly admit: Hook;
  readonly settle: Hook;
  readonly charge: UsageCharge;
  /** The levels a request of this caller is admitted and charged at (undefined: none binds it); a batch reserves and settles at them (core/api/batches). */
  readonly levels: (context: GatewayContext) => Promise<Level[] | undefined>;
}

/**
 * Charges part of a request's usage as it arrives (a Realtime session's `response.done` events),
 * for an admitted request with a budget at some level: its cost goes to every level's spent
 * counters at once and is remembered, so that `settle` charges only the rest. Resolves true when a
 * budget is spent after this charge (the caller may then end the request). Never throws.
 */
export type UsageCharge = (context: GatewayContext, usage: Usage, model: string | undefined) => Promise<boolean>;

function usageCharge(dependencies: LimitsDependencies, reservations: WeakMap<GatewayContext, Reservation>, charged: WeakMap<GatewayContext, number>): UsageCharge {
  return async (context, usage, model) => {
    const reservation = reservations.get(context);
    const auth = servingAuth(context);
    const budgeted = reservation?.levels.filter((level) => level.limits.budget_usd !== undefined) ?? [];
    if (!reservation || !auth || budgeted.length === 0) return false;
    const price = (model && dependencies.prices.price(auth.provider, model, auth.target.headers)) || reservation.price;
    const nanos = price ? toNanos(costOf(price, tokenCounts(usage))) : 0;
    if (nanos <= 0) return false;
    charged.set(context, (charged.get(context) ?? 0) + nanos);
    const { now } = reservation;
    // Only the spend: the reservations, token windows and requests in flight are the settle's.
    const levels = reservation.levels.map((level, index) => ({ spent: levelSettlement(level, reservation.admissions[index]!, false, now).spent }));
    const report = budgeted.map((level) => periodCounter(level.base, 'spent', level.limits.budget_period ?? 'total', now));
    try {
      const spent = await dependencies.state().settle({ requestId: reservation.requestId, reservationNanos: 0, actualNanos: nanos, estimatedTokens: 0, levels, report });
      budgeted.forEach((level, index) => dependencies.onCharged?.(chargedBudget(level, report[index]!, now), spent?.[index]));
      return spent !== undefined && budgeted.some((level, index) => spent[index]! >= toNanos(level.limits.budget_usd!));
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
function reservationOf(budgeted: Level, context: GatewayContext, price: ModelPrice | undefined, outputTokenEstimate: number): number {
  if (context.operation === 'passthrough') return toNanos(PASSTHROUGH_RESERVATION_USD);
  // A request that names no model (a models list) uses no tokens: nothing to price or reserve.
  if (context.request.model === undefined) return 0;
  if (price === undefined) {
    const whose = budgeted.level === 'key' ? 'this key has a budget' : `a budget applies (${budgeted.label})`;
    throw errors.permission(
      `The model "${context.request.model}" has no price, and ${whose}. Give it one with \`pricing.models\` (or \`pricing.unknownModel\`) in the gateway's configuration; GET /admin/prices shows the price in use.`,
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

/** The levels of the request's caller (none: the account key, which no limit binds), after the key's and team's access checks. */
async function callerLevels(dependencies: LimitsDependencies, context: GatewayContext): Promise<Level[] | undefined> {
  const caller = context.auth?.caller;
  const principals = dependencies.principals ?? {};
  if (caller?.type === 'service-account') {
    const levels = await serviceAccountLevels(caller, context, principals);
    return levels.length === 0 ? undefined : levels;
  }
  if (caller?.type !== 'virtual-key') return undefined;
  const record = await dependencies.record(caller.id);
  if (!record) throw errors.authentication('The x-gateway-api-key is not valid.', { code: 'invalid_api_key' });
  checkAccess(record, context);
  const teamId = dependencies.teams ? teamIdOf(record) : undefined;
  const team = teamId === undefined ? undefined : await dependencies.teams!(teamId);
  if (context.operation !== 'models') checkTeamAccess(team, context.request.model, context.auth?.provider?.id);
  return keyLevels(record, team, context, principals);
}

/** The auth stage's half: checks access, then admits and reserves at every level in one step of the shared state (see {@link limitHooks}). */
function admitHook(dependencies: LimitsDependencies, reservations: WeakMap<GatewayContext, Reservation>, observed: WeakMap<GatewayContext, ObservedUsage>): Hook {
  const { prices } = dependencies;
  return {
    name: 'virtual-key-limits',
    stage: 'auth',
    // Admission needs the caller and the request body, which the auth hook provides.
    after: ['gateway-auth'],
    async run(context, next) {
      const levels = await callerLevels(dependencies, context);
      if (levels === undefined) return next();
      const model = context.request.model;
      const price = model === undefined ? undefined : prices.price(context.auth?.provider ?? '', model, context.auth?.target.headers);
      const budgeted = levels.find((level) => level.limits.budget_usd !== undefined);
      const reservationNanos = budgeted === undefined ? 0 : reservationOf(budgeted, context, price, dependencies.outputTokenEstimate);
      const passthrough = context.operation === 'passthrough';
      const tokens = !passthrough && levels.some((level) => level.limits.tokens_per_minute !== undefined) ? estimatedTokens(context.request.body, dependencies.outputTokenEstimate) : 0;
      const now = Date.now();
      const admissions = levels.map((level) => levelAdmission(level, now));
      const requestId = `${PROCESS_ID}:${++requestSequence}`;
      const result = await dependencies.state().admit({
        now,
        requestId,
        levels: admissions,
        reservationNanos,
        reservationIsCeiling: passthrough,
        ...(dependencies.reservationLeaseMs !== undefined ? { reservationLeaseMs: dependencies.reservationLeaseMs } : {}),
        tokens,
        msUntilDayEnds: calendarAt(now).ends.day - now,
      });
      if (!result.admitted) {
        const level = levels[result.level]!;
        if (result.reason === 'budget' && level.level === 'key') {
          await dependencies.onBudgetRefused?.({ keyId: level.id, spentKey: admissions[result.level]!.spentKey, budgetNanos: admissions[result.level]!.budgetNanos!, estimateNanos: reservationNanos, now });
        }
        throw levelRefusal(result, level, { reservationNanos, now, tokens, ...(passthrough ? {} : { outputTokens: expectedOutputTokens(context.request.body, dependencies.outputTokenEstimate) }) });
      }
      reservations.set(context, { requestId, now, levels, admissions, reservationNanos: result.reservedNanos, tokens, ...(price ? { price } : {}) });
      if (passthrough) {
        // The bytes reach the client unchanged; the tap only reads the usage they report.
        tapStream(context, (stream, response) => tapUsage(stream, String(response.headers['content-type'] ?? ''), (usage) => observed.set(context, usage)));
      }
      await next();
      // The answer tells the caller where it stands, as OpenAI's do (the route sends it after this).
      const headers = rateHeaders(levels, result.levels);
      if (context.response && Object.keys(headers).length > 0) Object.assign(context.response.headers, headers);
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
        // Tokens: a cache hit used none; a failed request none; a successful answer without usage keeps its estimate.
        const actualTokens = context.cache?.hit !== undefined ? 0 : seen?.usage ? usedTokens(seen.usage) : answered ? undefined : 0;
        try {
          await settleLevels(dependencies, reservation, actualNanos, actualTokens);
        } catch {
          // The store is unreachable: the reservation stays counted (conservative); the log records the cost.
        }
      }
      await next();
    },
  };
}

/** A usage's input + output tokens. */
const usedTokens = (usage: Usage): number => {
  const counts = tokenCounts(usage);
  return (counts.promptTokens ?? 0) + (counts.completionTokens ?? 0);
};

/**
 * Settles a request at every level it was admitted at, in one step of the shared state, and tells
 * the budget alerts of each level with a budget (or soft budget) its period's spend after the charge.
 */
async function settleLevels(dependencies: LimitsDependencies, reservation: Reservation, actualNanos: number, actualTokens: number | undefined): Promise<void> {
  const { levels, admissions, now } = reservation;
  const settlements = levels.map((level, index) => levelSettlement(level, admissions[index]!, reservation.reservationNanos > 0, now));
  const alerted = dependencies.onCharged !== undefined && actualNanos > 0 ? levels.filter((level) => tracksSpend(level.limits)) : [];
  const report = alerted.map((level) => periodCounter(level.base, 'spent', level.limits.budget_period ?? 'total', now));
  const spent = await dependencies.state().settle({
    requestId: reservation.requestId,
    reservationNanos: reservation.reservationNanos,
    actualNanos,
    estimatedTokens: reservation.tokens,
    ...(actualTokens !== undefined && reservation.tokens > 0 ? { actualTokens } : {}),
    levels: settlements,
    ...(report.length > 0 ? { report } : {}),
  });
  alerted.forEach((level, index) => dependencies.onCharged!(chargedBudget(level, report[index]!, now), spent?.[index]));
}

/** What the budget alerts are told of a charged level. */
export function chargedBudget(level: Level, spentKey: string, now: number): ChargedBudget {
  const { limits } = level;
  return {
    level: level.level,
    // Another level's alerts by subject: `team:<id>`, `user:<id>`, `organization:organization`, and for a rule's end user or tag its scope too.
    keyId: level.level === 'key' ? level.id : level.level === 'end_user' || level.level === 'tag' ? `${level.level}:${level.base.slice('usage:'.length)}` : `${level.level}:${level.id}`,
    keyName: level.name ?? level.id,
    ...(limits.budget_usd !== undefined ? { budgetNanos: toNanos(limits.budget_usd) } : {}),
    ...(limits.soft_budget_usd !== undefined ? { softNanos: toNanos(limits.soft_budget_usd) } : {}),
    period: limits.budget_period ?? 'total',
    spentKey,
    now,
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
