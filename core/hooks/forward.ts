import { Readable } from 'node:stream';
import { errors, GatewayError } from '../errors.js';
import { assertStableUrl } from '../http/request-path.js';
import type { MemoryBudget } from '../http/memory-budget.js';
import type { UpstreamClient } from '../http/upstream.js';
import type { OperationHandler } from '../api/operation.js';
import { attemptView } from '../routing/attempt.js';
import type { AuthSlice, ForwardSlice, GatewayContext, RequestSlice } from '../pipeline/context.js';
import type { Attempt, AttemptTarget, RoutedSlice, RoutingSlice } from '../routing/slices.js';
import type { Hook } from '../pipeline/hook.js';
import { abortableSleep, executeRoute, type ExecutorDependencies } from '../routing/executor.js';
import type { ResolvedTarget, SkippedTarget } from '../routing/plan.js';
import type { UpstreamRequest } from '../spec/provider.js';
import { buildUpstreamRequest, withOverrides } from './transform.js';
import { routeHeaders } from '../routing/resolve.js';
import { checkFirstEvent } from '../routing/first-event.js';
import { requestFacts } from '../routing/facts.js';
import { MemoryRoutingState } from '../routing/state.js';
import type { QuotaGate } from '../quota/gate.js';
import type { CredentialExchanges } from './credential-exchange.js';

/** Largest per-request time-out a caller may ask for with `x-gateway-request-timeout` (1 hour). */
const MAX_TIMEOUT_MS = 3_600_000;

/** `x-gateway-request-timeout`, checked; undefined when absent. */
function requestTimeout(context: GatewayContext): number | undefined {
  const timeoutHeader = context.incoming.headers['x-gateway-request-timeout'];
  if (timeoutHeader === undefined) return undefined;
  const timeoutMs = Number(timeoutHeader);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw errors.invalidRequest(`x-gateway-request-timeout must be an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}.`, {
      param: 'x-gateway-request-timeout',
      code: 'invalid_header',
    });
  }
  return timeoutMs;
}

/** What the forward stage is built with. */
interface ForwardDependencies {
  upstream: UpstreamClient;
  /** The shared count of bytes held in memory; answers read whole grow a lease on it. */
  memoryBudget: MemoryBudget;
  /** Most bytes of one answer read whole (`upstream.maxAnswerBytes`). */
  maxAnswerBytes: number;
  /** Headers added to every upstream request (trace context: `traceparent`). */
  traceHeaders?: (context: GatewayContext) => Record<string, string>;
  /** Breakers, balancer statistics, randomness and waits of routed requests; default: in memory, `Math.random`. */
  routing?: Partial<ExecutorDependencies>;
  /** The operations, whose mapping a routed request's attempts are built with (the transform stage's {@link buildUpstreamRequest}). */
  operations: ReadonlyMap<string, OperationHandler>;
  /** Providers' quotas shared between teams: each attempt on a credential or target with a `quota` waits for its lease. */
  quota?: QuotaGate;
  /** Tokens of credentials the providers exchange first: a routed attempt's is asked for here, and a token refused with 401 is renewed. */
  exchanges?: CredentialExchanges;
}

/**
 * Sends one upstream request (with the trace headers) and records its answer for the forward slice;
 * its `follow` sends a second request of the attempt (with `auth`'s credentials) the same way.
 */
async function sendUpstream(dependencies: ForwardDependencies, context: GatewayContext, request: UpstreamRequest, auth: AuthSlice, timeoutMs: number | undefined): Promise<ForwardSlice> {
  const extra = dependencies.traceHeaders?.(context);
  const upstreamRequest = extra && Object.keys(extra).length > 0 ? { ...request, headers: { ...request.headers, ...extra } } : request;
  const sentAt = performance.now();
  const answer = await dependencies.upstream.send(upstreamRequest, { signal: context.signal, guarded: auth.target.customHost, timeoutMs });
  return {
    ...answer,
    sentAt,
    headersAt: performance.now(),
    memory: dependencies.memoryBudget.lease(),
    maxAnswerBytes: dependencies.maxAnswerBytes,
    follow: (second) => {
      assertStableUrl(second.url);
      const signed = { ...second, headers: { ...second.headers } };
      Object.assign(signed.headers, auth.provider.auth(signed, auth.target));
      return sendUpstream(dependencies, context, signed, auth, timeoutMs);
    },
  };
}

/** What one attempt sends: the auth it is sent with, the request as the target sees it, the upstream request; a routed attempt's target. */
interface SentAttempt {
  readonly auth: AuthSlice;
  readonly request: RequestSlice;
  readonly upstreamRequest: UpstreamRequest;
  readonly target?: ResolvedTarget;
}

/**
 * Sends one attempt (`check`: a stream's first-event check) after taking its lease on the
 * provider's quota, if one applies: the lease's slot is freed when the answer's body closes, at
 * once when no answer came.
 */
async function sendAttempt(
  dependencies: ForwardDependencies,
  context: GatewayContext,
  attempt: SentAttempt,
  timeoutMs: number | undefined,
  check?: (forward: ForwardSlice) => Promise<ForwardSlice>,
): Promise<ForwardSlice> {
  const gate = dependencies.quota;
  const waiting = gate?.enter(context, attempt.auth, attempt.request, attempt.target && { key: attempt.target.key, quota: attempt.target.target.quota });
  const lease = waiting === undefined ? undefined : await waiting;
  let forward: ForwardSlice;
  try {
    forward = await sendUpstream(dependencies, context, attempt.upstreamRequest, attempt.auth, timeoutMs);
    if (check) forward = await check(forward);
  } catch (error) {
    gate?.failed(lease);
    throw error;
  }
  gate?.answered(context, lease, forward);
  return forward;
}

/**
 * After an upstream 401 on a token a credential exchange gave: the token is forgotten, a new one
 * asked for, and the attempt rebuilt with it (`rebuild`) and sent once more (`again`). A request
 * whose body is a stream cannot be sent twice: its 401 stands.
 */
async function renewOn401(
  exchanges: CredentialExchanges | undefined,
  forward: ForwardSlice,
  attempt: SentAttempt,
  rebuild: (auth: AuthSlice) => SentAttempt,
  again: (attempt: SentAttempt) => Promise<ForwardSlice>,
): Promise<ForwardSlice> {
  if (forward.status !== 401 || exchanges === undefined || attempt.auth.target.credentials.exchangedToken === undefined || attempt.upstreamRequest.body instanceof Readable) return forward;
  forward.body.destroy();
  forward.memory.release();
  const renewed = await exchanges.renew(attempt.auth);
  return renewed === undefined ? forward : again(rebuild(renewed));
}

/**
 * The forward stage: sends the upstream request the transform stage built and records status,
 * headers and the unread body. It knows nothing about providers. The request is cancelled when
 * the client leaves (`context.signal`). `x-gateway-request-timeout` (milliseconds) overrides the
 * configured total deadline of the attempt (`upstream.timeoutMs`) for one request. The slice gets
 * a lease on the memory budget for whatever reads the answer whole. A routed request is sent by
 * the route executor (`core/routing/executor.ts`): per attempt, this stage builds the attempt as a
 * value (target, credentials, the request with the target's `override_params`, the upstream request
 * from the transform stage's pure {@link buildUpstreamRequest}) on its `routed` slice, then sends
 * it; the answer kept is the one the client gets, and `routed.attempt` is its attempt.
 */
export function forwardHook(dependencies: ForwardDependencies): Hook {
  const executor: ExecutorDependencies = {
    state: dependencies.routing?.state ?? new MemoryRoutingState(),
    random: dependencies.routing?.random ?? Math.random,
    sleep: dependencies.routing?.sleep ?? abortableSleep,
    ...(dependencies.routing?.retry ? { retry: dependencies.routing.retry } : {}),
  };

  const gate = dependencies.quota;
  const send = (context: GatewayContext, attempt: SentAttempt, timeoutMs: number | undefined, check?: (forward: ForwardSlice) => Promise<ForwardSlice>) =>
    sendAttempt(dependencies, context, attempt, timeoutMs, check);

  /** Runs a routed request's plan: each attempt is a value built here (see {@link attemptTarget}, {@link mapAttempt}), kept on the `routed` slice. */
  const route = async (context: GatewayContext, routing: RoutingSlice, handler: OperationHandler, timeoutMs: number | undefined): Promise<void> => {
    const routed: RoutedSlice = { attempts: [] };
    context.routed = routed;
    // When the first attempt and the one whose answer the client gets started: the time between is routing.
    let firstAttemptAt: number | undefined;
    const attemptStarts = new Map<ForwardSlice, number>();
    const skipped: SkippedTarget[] = [];
    // The auth of each target whose credential was exchanged (its token), for mapping its answer again.
    const exchanged = new Map<ResolvedTarget, AuthSlice>();
    const send_ = async (target: ResolvedTarget, attemptTimeoutMs: number | undefined): Promise<ForwardSlice> => {
      const startedAt = performance.now();
      firstAttemptAt ??= startedAt;
      const map = (auth: AuthSlice): Attempt => {
        if (auth !== target.auth) exchanged.set(target, auth);
        routed.tried = attemptTarget(context, target, auth);
        return (routed.attempt = mapAttempt(routed.tried, handler));
      };
      const attempt = map(dependencies.exchanges && target.auth!.provider.credentialExchange ? await dependencies.exchanges.apply(target.auth!) : target.auth!);
      // A stream's first event decides too: an error there falls back like an error status.
      const check = (answer: ForwardSlice) => (attempt.request.streaming && answer.status === 200 && isEventStream(answer) ? checkFirstEvent(answer, context.signal) : Promise.resolve(answer));
      const first = await send(context, { ...attempt, target }, attemptTimeoutMs, check);
      const forward = await renewOn401(dependencies.exchanges, first, attempt, (auth) => ({ ...map(auth), target }), (again) => send(context, again, attemptTimeoutMs, check));
      attemptStarts.set(forward, startedAt);
      return forward;
    };
    try {
      const answer = await executeRoute(
        routing.plan,
        {
          facts: requestFacts(context),
          signal: context.signal,
          startedAt: context.startedAt,
          defaultTimeoutMs: timeoutMs,
          replayable: (context.operation !== 'passthrough' || routing.plan.route.passthrough_idempotent === true) && context.request.stream === undefined,
          send: send_,
          attempts: routed.attempts,
          skipped,
        },
        executor,
      );
      if (firstAttemptAt !== undefined) routed.routingMs = Math.max(0, (attemptStarts.get(answer.forward) ?? answer.forward.sentAt) - firstAttemptAt);
      // The answer's target mapped last (what per-request state an operation keeps was built for it), else mapped again.
      if (routed.attempt?.target !== answer.target) {
        routed.tried = attemptTarget(context, answer.target, exchanged.get(answer.target));
        routed.attempt = mapAttempt(routed.tried, handler);
      }
      routed.tried = routed.attempt;
      routed.target = answer.target.name;
      context.forward = answer.forward;
    } catch (error) {
      if (firstAttemptAt !== undefined) routed.routingMs = performance.now() - firstAttemptAt;
      if (error instanceof GatewayError) Object.assign(error.headers, routeHeaders(routed.attempts, undefined));
      throw error;
    } finally {
      if (skipped.length > 0) routed.skipped = skipped;
    }
  };

  /** Sends a request that is not routed: the transform stage's upstream request, rebuilt with a renewed token after a 401 on an exchanged one. */
  const sendPlain = async (context: GatewayContext, auth: AuthSlice, timeoutMs: number | undefined): Promise<ForwardSlice> => {
    const transform = context.transform!;
    const attempt: SentAttempt = { auth: transform.exchangedAuth ?? auth, request: context.request, upstreamRequest: transform.upstreamRequest };
    // The renewed request differs only in its credentials: the transform slice (the transform stage's) keeps the first mapping.
    const rebuild = (renewed: AuthSlice): SentAttempt => ({
      auth: renewed,
      request: context.request,
      upstreamRequest: buildUpstreamRequest(context, dependencies.operations.get(context.operation)!, renewed).upstreamRequest,
    });
    return renewOn401(dependencies.exchanges, await send(context, attempt, timeoutMs), attempt, rebuild, (again) => send(context, again, timeoutMs));
  };

  return {
    name: 'gateway-forward',
    stage: 'forward',
    async run(context, next) {
      const auth = context.auth;
      const routing = context.routing;
      const handler = routing && dependencies.operations.get(context.operation);
      if (!auth || (!context.transform && !handler)) throw new Error('forward stage reached without a transform and auth slice');
      const timeoutMs = requestTimeout(context);
      gate?.checkHeader(context);
      if (routing === undefined || handler === undefined) context.forward = await sendPlain(context, auth, timeoutMs);
      else await route(context, routing, handler, timeoutMs);
      await next();
    },
  };
}

/** One attempt's target as a value: the target's auth, the request with its `override_params`, the view of the context the operation maps with. */
function attemptTarget(context: GatewayContext, target: ResolvedTarget, auth: AuthSlice = target.auth!): AttemptTarget {
  const request = withOverrides(context.request, target.target.override_params);
  return { target, auth, request, view: attemptView(context, auth, request) };
}

/** The attempt with its upstream request, built by the transform stage's pure mapping on the attempt's view (which the answer's mapping gets too). */
function mapAttempt(tried: AttemptTarget, handler: OperationHandler): Attempt {
  const { upstreamRequest, dropped } = buildUpstreamRequest(tried.view, handler, tried.auth);
  return dropped ? { ...tried, upstreamRequest, dropped } : { ...tried, upstreamRequest };
}

const isEventStream = (forward: ForwardSlice): boolean => {
  const type = forward.headers['content-type'];
  return typeof type === 'string' && type.startsWith('text/event-stream');
};
