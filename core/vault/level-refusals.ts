import { errors, GatewayError } from '../errors.js';
import type { AdmissionResult, LevelCounts } from '../store/state.js';
import { type Level, periodEnd } from './levels.js';

const NANOS_PER_USD = 1_000_000_000;
const fromNanos = (nanos: number): number => nanos / NANOS_PER_USD;
const toNanos = (usd: number): number => Math.round(usd * NANOS_PER_USD);
const usd = (nanos: number): string => `$${fromNanos(nanos).toFixed(9).replace(/0+$/, '').replace(/\.$/, '')}`;
const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** What a budget refusal tells besides the level's counters: the refused request's estimate. */
export interface RefusedRequest {
  readonly reservationNanos: number;
  readonly now: number;
  /** The output tokens the estimate assumed, and whether the request bounded them (`max_tokens`). */
  readonly outputTokens?: { readonly tokens: number; readonly bounded: boolean };
  /** The request's estimated tokens (a token limit's refusal). */
  readonly tokens: number;
}

/** "This key's", "Team Search's", "End user "bob"'s (a rule of this key)": a level as the owner of a limit. */
function owner(level: Level): string {
  const rule = level.label.indexOf(' (a rule of ');
  return rule < 0 ? `${level.label}'s` : `${level.label.slice(0, rule)}'s${level.label.slice(rule)}`;
}

/** Where a refusal names its level: `error.budget.level` and the subject's id (never a label with a name in it). */
const levelFields = (level: Level) => ({ level: level.level, level_id: level.id });

/** 403 `budget_exceeded`, saying the level, spent, reserved, budget, period, reset and the request's estimate, in its message and `error.budget`. */
function budgetRefusal(level: Level, spentNanos: number, reservedNanos: number, request: RefusedRequest): GatewayError {
  const period = level.limits.budget_period ?? 'total';
  const budgetNanos = toNanos(level.limits.budget_usd ?? 0);
  const { reservationNanos, outputTokens } = request;
  const end = periodEnd(period, request.now);
  const resetsAt = end === undefined ? null : new Date(end).toISOString();
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
  const whole = level.level === 'key' ? "the key's whole budget" : 'the whole budget';
  const why = alone
    ? `This request alone is estimated at up to ${usd(reservationNanos)}, more than ${whole}.${lower}`
    : `This request is estimated at up to ${usd(reservationNanos)}, more than is left.${reservationNanos > left && left > 0 ? lower : ''}`;
  const error = errors.permission(`${owner(level)} budget is exceeded. ${state} ${why}`, { code: 'budget_exceeded' });
  const body = {
    ...error.body,
    budget: {
      ...levelFields(level),
      limit: 'budget_usd',
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

/** OpenAI's form of a reset delay: `20ms`, `1s`, `6m0s`. */
export function resetText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const total = Math.ceil(ms / 1000);
  return total <= 60 ? `${total}s` : `${Math.floor(total / 60)}m${total % 60}s`;
}

/** What each refused limit says. */
const RATE = {
  requests_per_minute: { field: 'requests_per_minute', what: 'requests per minute', kind: 'requests' },
  requests_per_day: { field: 'requests_per_day', what: 'requests per day', kind: 'requests' },
  tokens_per_minute: { field: 'tokens_per_minute', what: 'tokens per minute', kind: 'tokens' },
  max_concurrent: { field: 'max_concurrent', what: 'requests in flight at once', kind: undefined },
} as const;

/**
 * The error for a refused admission: 403 `budget_exceeded` for money, else 429 naming the level and
 * the limit, with `Retry-After` (and `retry-after-ms`, which the official SDKs prefer) and OpenAI's
 * `x-ratelimit-*` headers of the refused limit.
 */
export function levelRefusal(result: Exclude<AdmissionResult, { admitted: true }>, level: Level, request: RefusedRequest): GatewayError {
  if (result.reason === 'budget') return budgetRefusal(level, result.spentNanos, result.reservedNanos, request);
  const rate = RATE[result.reason];
  const limit = level.limits[rate.field]!;
  const waitMs = Math.max(1, Math.round(result.retryAfterMs));
  const headers: Record<string, string> = { 'retry-after': String(seconds(waitMs)), 'retry-after-ms': String(waitMs) };
  if (rate.kind !== undefined) {
    headers[`x-ratelimit-limit-${rate.kind}`] = String(limit);
    headers[`x-ratelimit-remaining-${rate.kind}`] = String(Math.max(0, limit - result.count));
    headers[`x-ratelimit-reset-${rate.kind}`] = resetText(waitMs);
  }
  const alone = result.reason === 'tokens_per_minute' && request.tokens > limit;
  const message = alone
    ? `${owner(level)} limit of ${limit} tokens per minute is smaller than this request's estimate (${request.tokens} tokens): lower max_tokens or shorten the request.`
    : `${owner(level)} limit of ${limit} ${rate.what} is reached${result.reason === 'max_concurrent' ? ` (${result.count} in flight)` : ''}.`;
  const error =
    result.reason === 'tokens_per_minute'
      ? errors.rateLimited(message, { code: 'tokens_per_minute_exceeded', headers })
      : result.reason === 'max_concurrent'
        ? errors.rateLimited(message, { code: 'too_many_concurrent_requests', headers })
        : errors.rateLimited(message, { code: 'rate_limit_exceeded', headers });
  const resetsAt = new Date(request.now + waitMs).toISOString();
  const body = { ...error.body, budget: { ...levelFields(level), limit: rate.field, limit_value: limit, used: result.count, ...(result.reason === 'tokens_per_minute' ? { request_tokens: request.tokens } : {}), resets_at: resetsAt } };
  return new GatewayError(error.status, body, error.headers);
}

/**
 * OpenAI's `x-ratelimit-*` headers for an admitted request, from the tightest level that limits
 * requests per minute (and the tightest that limits tokens per minute): what is left after this
 * request, and when the oldest request (tokens) of that window leaves it. Empty when no level limits either.
 */
export function rateHeaders(levels: readonly Level[], counts: readonly LevelCounts[]): Record<string, string> {
  const headers: Record<string, string> = {};
  let requestsLeft = Infinity;
  let tokensLeft = Infinity;
  for (let index = 0; index < levels.length; index++) {
    const { limits } = levels[index]!;
    const count = counts[index]!;
    if (limits.requests_per_minute !== undefined && limits.requests_per_minute - count.minuteCount < requestsLeft) {
      requestsLeft = Math.max(0, limits.requests_per_minute - count.minuteCount);
      headers['x-ratelimit-limit-requests'] = String(limits.requests_per_minute);
      headers['x-ratelimit-remaining-requests'] = String(requestsLeft);
      headers['x-ratelimit-reset-requests'] = resetText(count.minuteResetMs);
    }
    if (limits.tokens_per_minute !== undefined && limits.tokens_per_minute - count.tokensInWindow < tokensLeft) {
      tokensLeft = Math.max(0, limits.tokens_per_minute - count.tokensInWindow);
      headers['x-ratelimit-limit-tokens'] = String(limits.tokens_per_minute);
      headers['x-ratelimit-remaining-tokens'] = String(tokensLeft);
      headers['x-ratelimit-reset-tokens'] = resetText(count.tokensResetMs);
    }
  }
  return headers;
}
