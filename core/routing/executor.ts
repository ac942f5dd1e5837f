import { errors, GatewayError } from '../errors.js';
import type { ForwardSlice } from '../pipeline/context.js';
import { readFailedUsage, stopUsageReads } from './attempt-usage.js';
import { balanceOrder } from './balancer.js';
import { FirstEventError } from './first-event.js';
import type { RequestFacts } from './conditions.js';
import { conditionalTarget } from './facts.js';
import { redactSecrets } from '../redact.js';
import { ATTEMPT_MESSAGE_MAX, type AttemptRecord, type ResolvedRoute, type ResolvedTarget, type SkippedTarget } from './plan.js';
import type { Route } from './route.js';
import { DEFAULT_RETRY, type RetrySettings, type RoutingStateStore } from './state.js';
import { isQuotaRefusal } from '../quota/settings.js';

/** Statuses retried on the same target unless the route says otherwise. */
export const DEFAULT_RETRY_STATUSES: readonly number[] = [429, 500, 502, 503, 504];
/** Longest `Retry-After` honoured unless the route says otherwise (ms). */
export const DEFAULT_MAX_RETRY_AFTER_MS = 10_000;
/** First back-off ceiling (doubles per retry) and its cap, ms. */
const BACKOFF_BASE_MS = 100;
const BACKOFF_CAP_MS = 5_000;

/** Sends one attempt to a target within `timeoutMs` and returns the answer with its body unread (throws on a connect failure or time-out). */
export type AttemptSender = (target: ResolvedTarget, timeoutMs: number | undefined) => Promise<ForwardSlice>;

export interface ExecutorDependencies {
  readonly state: RoutingStateStore;
  /** Numbers in [0, 1) for weighted picks and jitter (seeded in tests). */
  readonly random: () => number;
  /** Waits between attempts; rejects when the client leaves. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The floor under retry waits, the cap on a request's attempts and the retry budget (default {@link DEFAULT_RETRY}). */
  readonly retry?: RetrySettings;
}

/** What one routed request needs besides the plan. */
export interface RouteRun {
  readonly facts: RequestFacts;
  readonly signal: AbortSignal;
  /** `performance.now()` when the request arrived: the route's deadline counts from it. */
  readonly startedAt: number;
  /** Per-attempt time-out when the route sets none (`x-gateway-request-timeout`). */
  readonly defaultTimeoutMs?: number;
  /** Whether the request may be sent more than once (unified operations; pass-through only when idempotent). */
  readonly replayable: boolean;
  readonly send: AttemptSender;
  /** Every attempt, appended as it ends. */
  readonly attempts: AttemptRecord[];
  /** Targets not tried (an open breaker, the attempt cap) or not retried (the retry budget), appended as they are passed over. */
  readonly skipped?: SkippedTarget[];
}

/** The answer the client gets: a success, or the last upstream error answer (mapped by the transform stage). */
export interface RouteAnswer {
  readonly forward: ForwardSlice;
  readonly target: ResolvedTarget;
}

/** An attempt's record while the route runs: a failed attempt's usage is filled in once its body is read. */
type AttemptDraft = { -readonly [Field in keyof AttemptRecord]: AttemptRecord[Field] };

/** A failed answer and its attempt's record. */
interface FailedAnswer extends RouteAnswer {
  readonly record: AttemptDraft;
}

/** A level's failure: the last error answer (body unread) or the last thrown error. */
interface Failure {
  answer?: FailedAnswer;
  error?: GatewayError;
  /** Nothing was tried because every breaker was open: when the first will let a probe through. */
  allOpenRetryMs?: number;
}

/** The default sleep: a timer cancelled by the client leaving. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(errors.clientClosed('The client closed the request.', { code: 'client_closed' }));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(errors.clientClosed('The client closed the request.', { code: 'client_closed' }));
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

/** `Retry-After` in milliseconds (delta seconds or an HTTP date; `retry-after-ms` first), or undefined. */
export function retryAfterMs(headers: Readonly<Record<string, string | string[] | undefined>>, now = Date.now()): number | undefined {
  const precise = headers['retry-after-ms'];
  if (typeof precise === 'string' && /^\d+(\.\d+)?$/.test(precise.trim())) return Number(precise);
  const value = headers['retry-after'];
  if (typeof value !== 'string') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value.trim()) * 1000;
  // Only an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`): Date.parse reads bare numbers as years.
  if (!/[a-z]/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full-jitter exponential back-off before retry number `retry` (0 for the first retry). */
export function backoffMs(retry: number, random: () => number): number {
  return random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
}

/**
 * The wait before a retry: what the upstream asked for (`Retry-After`) or the back-off, but never
 * less than the floor, jittered between it and twice it (`Retry-After: 0` from a failing upstream
 * would otherwise be followed at once, as fast as the upstream can answer).
 */
export function retryWaitMs(asked: number | undefined, retry: number, random: () => number, floorMs: number): number {
  return Math.max(asked ?? backoffMs(retry, random), floorMs * (1 + random()));
}

const failedStatus = (status: number): boolean => status === 429 || status >= 500;

/**
 * Runs a routed request: picks targets by the route's strategy, retries and falls over within the
 * deadline, keeps breakers and balancer statistics, and returns the answer to give the client.
 * Throws the last error when no target answered, and 503 `no_healthy_target` when every breaker
 * was open.
 */
export async function executeRoute(plan: ResolvedRoute, run: RouteRun, dependencies: ExecutorDependencies): Promise<RouteAnswer> {
  let result: RouteAnswer | Failure;
  try {
    result = await runLevel(plan, run, dependencies);
  } finally {
    // Failed attempts' bodies are read while later attempts run, and no longer.
    stopUsageReads(run.attempts);
  }
  if ('forward' in result) return result;
  if (result.answer) return { forward: result.answer.forward, target: result.answer.target };
  if (result.error) throw result.error;
  const seconds = Math.max(1, Math.ceil((result.allOpenRetryMs ?? 1000) / 1000));
  throw new GatewayError(
    503,
    { message: 'Every target of this route is failing (their circuit breakers are open); try again later.', type: 'service_unavailable_error', param: null, code: 'no_healthy_target' },
    { 'retry-after': String(seconds) },
  );
}

/** The targets of a level in the order the strategy tries them. */
function candidates(plan: ResolvedRoute, run: RouteRun, dependencies: ExecutorDependencies): readonly ResolvedTarget[] {
  const strategy = plan.route.strategy;
  switch (strategy.mode) {
    case 'single':
      return plan.targets.slice(0, 1);
    case 'fallback':
      return plan.targets;
    case 'loadbalance':
      return balanceOrder(plan.targets, strategy.policy ?? 'weighted', dependencies.state, dependencies.random);
    case 'conditional': {
      const chosen = conditionalTarget(plan, run.facts);
      if (chosen === undefined) {
        throw errors.invalidRequest('No condition of this route matches the request and it has no default target.', { param: 'x-gateway-config', code: 'no_route_match' });
      }
      return [chosen];
    }
  }
}

async function runLevel(plan: ResolvedRoute, run: RouteRun, dependencies: ExecutorDependencies): Promise<RouteAnswer | Failure> {
  const failure: Failure = {};
  let tried = false;
  for (const target of candidates(plan, run, dependencies)) {
    if (tried && !run.replayable) break;
    if (target.route) {
      const nested = await runLevel(target.route, run, dependencies);
      if ('forward' in nested) return settled(nested, failure, run);
      mergeFailure(failure, nested, run);
      if (nested.answer || nested.error) tried = true;
      if (nested.answer && !movesOn(nested.answer.forward.status, target, plan.route)) return nested.answer;
      continue;
    }
    if (capReached(run, dependencies)) {
      run.skipped?.push({ target: target.name, reason: 'attempt_cap' });
      break;
    }
    if (!dependencies.state.allow(target.key)) {
      run.skipped?.push({ target: target.name, reason: 'breaker_open' });
      const wait = dependencies.state.retryInMs(target.key);
      failure.allOpenRetryMs = failure.allOpenRetryMs === undefined ? wait : Math.min(failure.allOpenRetryMs, wait);
      continue;
    }
    tried = true;
    const result = await runTarget(target, plan.route, run, dependencies);
    if ('forward' in result) return settled(result, failure, run);
    mergeFailure(failure, result, run);
    if (result.answer && !movesOn(result.answer.forward.status, target, plan.route)) return result.answer;
    if (remainingMs(plan.route, run) <= 0) break;
  }
  return failure;
}

/** A success ends the level: the failed answer it held is read for its usage and released. */
function settled(answer: RouteAnswer, failure: Failure, run: RouteRun): RouteAnswer {
  if (failure.answer) release(failure.answer, run);
  return answer;
}

/** Keeps the newest failure, releasing the body of an error answer it replaces. */
function mergeFailure(into: Failure, from: Failure, run: RouteRun): void {
  if (from.answer || from.error) {
    if (into.answer && into.answer !== from.answer) release(into.answer, run);
    into.answer = from.answer;
    into.error = from.error;
  }
  if (from.allOpenRetryMs !== undefined) into.allOpenRetryMs = Math.min(into.allOpenRetryMs ?? Infinity, from.allOpenRetryMs);
}

/** Whether a failed answer's status moves a fallback on to the next target. */
function movesOn(status: number, target: ResolvedTarget, route: Route): boolean {
  const strategy = route.strategy;
  const codes = target.target.on_status_codes ?? (strategy.mode === 'fallback' ? strategy.on_status_codes : undefined) ?? route.on_status_codes;
  return codes ? codes.includes(status) : failedStatus(status);
}

const remainingMs = (route: Route, run: RouteRun): number => (route.deadline === undefined ? Infinity : route.deadline - (performance.now() - run.startedAt));

/**
 * Releases a failed answer the route moved on from: its body is read (what has arrived at once,
 * the rest while later attempts run) for the usage it reports, which goes on its attempt's record.
 */
function release(answer: FailedAnswer, run: RouteRun): void {
  readFailedUsage(run.attempts, answer.forward, (body) => {
    if (body.usage) answer.record.usage = body.usage;
    if (body.code !== undefined && answer.record.errorCode === undefined) answer.record.errorCode = body.code.slice(0, ATTEMPT_MESSAGE_MAX);
    if (body.message !== undefined) answer.record.message = attemptMessage(body.message, answer.target);
  });
}

/** An attempt's error message as logged: the target's secrets and anything key-shaped removed, then cut. */
export function attemptMessage(message: string, target: ResolvedTarget): string {
  const credentials = target.auth?.target.credentials;
  // Cut before the redaction too (a body may be 64 KiB), far enough past the cap that any secret starting within it is whole.
  const redacted = redactSecrets(message.slice(0, 4 * ATTEMPT_MESSAGE_MAX), [credentials?.apiKey, ...Object.values(credentials?.fields ?? {})]);
  return redacted.length > ATTEMPT_MESSAGE_MAX ? `${redacted.slice(0, ATTEMPT_MESSAGE_MAX - 1)}…` : redacted;
}

/** Whether the request has made as many attempts as `routing.retry.maxAttempts` allows. */
const capReached = (run: RouteRun, dependencies: ExecutorDependencies): boolean => run.attempts.length >= (dependencies.retry ?? DEFAULT_RETRY).maxAttempts;

/** Tries one target, with the route's retries: a success, a non-retryable answer, or the last failure. */
async function runTarget(target: ResolvedTarget, route: Route, run: RouteRun, dependencies: ExecutorDependencies): Promise<RouteAnswer | Failure> {
  const auth = target.auth!;
  const retries = run.replayable ? (route.retry?.attempts ?? 0) : 0;
  const retryStatuses = route.retry?.on_status_codes ?? DEFAULT_RETRY_STATUSES;
  const maxRetryAfter = route.retry?.max_retry_after ?? DEFAULT_MAX_RETRY_AFTER_MS;
  const floorMs = (dependencies.retry ?? DEFAULT_RETRY).floorMs;
  const failure: Failure = {};
  /** Whether another attempt on this target may be sent: the request's cap, then the target's retry budget. */
  const mayRetry = (): boolean => {
    if (capReached(run, dependencies)) {
      run.skipped?.push({ target: target.name, reason: 'attempt_cap' });
      return false;
    }
    if (dependencies.state.takeRetry(target.key)) return true;
    run.skipped?.push({ target: target.name, reason: 'retry_budget' });
    return false;
  };
  for (let attempt = 0; attempt <= retries; attempt++) {
    const remaining = remainingMs(route, run);
    if (remaining <= 0) break;
    if (attempt === 0) dependencies.state.countRequest(target.key);
    const configured = target.target.request_timeout ?? route.request_timeout ?? run.defaultTimeoutMs;
    const timeoutMs = remaining === Infinity ? configured : Math.max(1, Math.floor(Math.min(configured ?? Infinity, remaining)));
    const started = performance.now();
    const finish = dependencies.state.begin(target.key);
    let forward: ForwardSlice;
    try {
      forward = await run.send(target, timeoutMs);
    } catch (error) {
      finish();
      if (error instanceof GatewayError && error.status === 499) throw error;
      if (!(error instanceof GatewayError)) throw error;
      if (error.status === 400) throw error;
      // A provider quota's refusal is the gateway's own: the target is not failing.
      if (!isQuotaRefusal(error.body.code)) dependencies.state.failure(target.key);
      run.attempts.push({
        target: target.name,
        provider: auth.provider.id,
        status: error.status,
        latencyMs: round(performance.now() - started),
        errorCode: error.body.code ?? undefined,
        message: attemptMessage(error.body.message, target),
        ...modelOf(target, run.facts.model),
        ...(error instanceof FirstEventError && error.usage ? { usage: error.usage } : {}),
      });
      failure.error = error;
      if (failure.answer) release(failure.answer, run);
      failure.answer = undefined;
      if (attempt >= retries || !mayRetry()) break;
      if (!(await wait(retryWaitMs(undefined, attempt, dependencies.random, floorMs), route, run, dependencies))) break;
      continue;
    }
    const latencyMs = round(performance.now() - started);
    const record: AttemptDraft = { target: target.name, provider: auth.provider.id, status: forward.status, latencyMs, ...modelOf(target, run.facts.model) };
    run.attempts.push(record);
    // A status the route lists (on_status_codes, retry.on_status_codes) is a failure even when it is
    // not a 429 or 5xx: a route may fail over on a 404 from a model that one provider lacks.
    const failed = failedStatus(forward.status) || movesOn(forward.status, target, route) || retryStatuses.includes(forward.status);
    if (!failed) {
      if (forward.status < 400) dependencies.state.success(target.key, latencyMs);
      // The answer is in flight until its body is done (a stream for as long as it streams).
      if (forward.body.closed || forward.body.destroyed) finish();
      else forward.body.once('close', finish);
      return { forward, target };
    }
    finish();
    dependencies.state.failure(target.key);
    if (failure.answer) release(failure.answer, run);
    failure.answer = { forward, target, record };
    failure.error = undefined;
    if (attempt >= retries || !retryStatuses.includes(forward.status)) break;
    const asked = retryAfterMs(forward.headers);
    if (asked !== undefined && asked > maxRetryAfter) break;
    if (!mayRetry()) break;
    if (!(await wait(retryWaitMs(asked, attempt, dependencies.random, floorMs), route, run, dependencies))) break;
  }
  return failure;
}

/** Waits before a retry unless that would pass the route's deadline (then false: no retry). */
async function wait(ms: number, route: Route, run: RouteRun, dependencies: ExecutorDependencies): Promise<boolean> {
  if (ms >= remainingMs(route, run)) return false;
  if (ms > 0) await dependencies.sleep(ms, run.signal);
  return true;
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

/** The model an attempt asked for: the target's override, else the request's own. */
function modelOf(target: ResolvedTarget, requested: string | undefined): { model?: string } {
  const override = target.target.override_params?.model;
  const model = typeof override === 'string' ? override : requested;
  return model === undefined ? {} : { model };
}
