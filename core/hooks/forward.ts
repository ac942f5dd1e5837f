import { errors, GatewayError } from '../errors.js';
import type { MemoryBudget } from '../http/memory-budget.js';
import type { UpstreamClient } from '../http/upstream.js';
import type { ForwardSlice, GatewayContext } from '../pipeline/context.js';
import type { Hook } from '../pipeline/hook.js';
import { abortableSleep, executeRoute, type ExecutorDependencies } from '../routing/executor.js';
import type { ResolvedTarget, SkippedTarget } from '../routing/plan.js';
import { routeHeaders } from '../routing/resolve.js';
import { checkFirstEvent } from '../routing/first-event.js';
import { requestFacts } from '../routing/facts.js';
import { MemoryRoutingState } from '../routing/state.js';

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

/**
 * The forward stage: sends the upstream request the transform stage built and records status,
 * headers and the unread body. It knows nothing about providers. The request is cancelled when
 * the client leaves (`context.signal`). `x-gateway-request-timeout` (milliseconds) overrides the
 * configured total deadline of the attempt (`upstream.timeoutMs`) for one request. The slice gets
 * a lease on the memory budget for whatever reads the answer whole. A routed request is sent by
 * the route executor (`core/routing/executor.ts`): per attempt, the transform stage's mapping for
 * that target, then the send; the answer kept is the one the client gets.
 */
export function forwardHook(dependencies: {
  upstream: UpstreamClient;
  /** The shared count of bytes held in memory; answers read whole grow a lease on it. */
  memoryBudget: MemoryBudget;
  /** Most bytes of one answer read whole (`upstream.maxAnswerBytes`). */
  maxAnswerBytes: number;
  /** Headers added to every upstream request (trace context: `traceparent`). */
  traceHeaders?: (context: GatewayContext) => Record<string, string>;
  /** Breakers, balancer statistics, randomness and waits of routed requests; default: in memory, `Math.random`. */
  routing?: Partial<ExecutorDependencies>;
}): Hook {
  const executor: ExecutorDependencies = {
    state: dependencies.routing?.state ?? new MemoryRoutingState(),
    random: dependencies.routing?.random ?? Math.random,
    sleep: dependencies.routing?.sleep ?? abortableSleep,
    ...(dependencies.routing?.retry ? { retry: dependencies.routing.retry } : {}),
  };

  const send = async (context: GatewayContext, guarded: boolean, timeoutMs: number | undefined): Promise<ForwardSlice> => {
    const transform = context.transform!;
    const extra = dependencies.traceHeaders?.(context);
    const upstreamRequest =
      extra && Object.keys(extra).length > 0 ? { ...transform.upstreamRequest, headers: { ...transform.upstreamRequest.headers, ...extra } } : transform.upstreamRequest;
    const sentAt = performance.now();
    const answer = await dependencies.upstream.send(upstreamRequest, { signal: context.signal, guarded, timeoutMs });
    return {
      ...answer,
      sentAt,
      headersAt: performance.now(),
      memory: dependencies.memoryBudget.lease(),
      maxAnswerBytes: dependencies.maxAnswerBytes,
    };
  };

  return {
    name: 'gateway-forward',
    stage: 'forward',
    async run(context, next) {
      const auth = context.auth;
      if (!auth || (!context.transform && !context.routing)) throw new Error('forward stage reached without a transform and auth slice');
      const timeoutMs = requestTimeout(context);
      const routing = context.routing;
      if (routing === undefined) {
        context.forward = await send(context, auth.target.customHost, timeoutMs);
        await next();
        return;
      }
      const prepare = routing.prepare!;
      let prepared: ResolvedTarget | undefined;
      // When the first attempt and the one whose answer the client gets started: the time between is routing.
      let firstAttemptAt: number | undefined;
      const attemptStarts = new WeakMap<ForwardSlice, number>();
      const skipped: SkippedTarget[] = [];
      const attempt = async (target: ResolvedTarget, attemptTimeoutMs: number | undefined): Promise<ForwardSlice> => {
        const startedAt = performance.now();
        firstAttemptAt ??= startedAt;
        context.auth = target.auth!;
        prepared = target;
        prepare(context, target);
        let forward = await send(context, target.auth!.target.customHost, attemptTimeoutMs);
        // A stream's first event decides too: an error there falls back like an error status.
        if (context.request.streaming && forward.status === 200 && isEventStream(forward)) forward = await checkFirstEvent(forward, context.signal);
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
            send: attempt,
            attempts: routing.attempts,
            skipped,
          },
          executor,
        );
        if (firstAttemptAt !== undefined) routing.routingMs = Math.max(0, (attemptStarts.get(answer.forward) ?? answer.forward.sentAt) - firstAttemptAt);
        context.auth = answer.target.auth!;
        if (prepared !== answer.target) prepare(context, answer.target);
        routing.target = answer.target.name;
        context.forward = answer.forward;
      } catch (error) {
        if (firstAttemptAt !== undefined) routing.routingMs = performance.now() - firstAttemptAt;
        if (error instanceof GatewayError) Object.assign(error.headers, routeHeaders(routing.attempts, undefined));
        throw error;
      } finally {
        if (skipped.length > 0) routing.skipped = skipped;
      }
      await next();
    },
  };
}

const isEventStream = (forward: ForwardSlice): boolean => {
  const type = forward.headers['content-type'];
  return typeof type === 'string' && type.startsWith('text/event-stream');
};
