import { errors } from '../errors.js';
import type { MemoryBudget } from '../http/memory-budget.js';
import type { UpstreamClient } from '../http/upstream.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { Hook } from '../pipeline/hook.js';

/** Largest per-request time-out a caller may ask for with `x-gateway-request-timeout` (1 hour). */
const MAX_TIMEOUT_MS = 3_600_000;

/**
 * The forward stage: sends the upstream request the transform stage built and records status,
 * headers and the unread body. It knows nothing about providers. The request is cancelled when
 * the client leaves (`context.signal`). `x-gateway-request-timeout` (milliseconds) overrides the
 * configured total deadline of the attempt (`upstream.timeoutMs`) for one request. The slice gets
 * a lease on the memory budget for whatever reads the answer whole.
 */
export function forwardHook(dependencies: {
  upstream: UpstreamClient;
  /** The shared count of bytes held in memory; answers read whole grow a lease on it. */
  memoryBudget: MemoryBudget;
  /** Most bytes of one answer read whole (`upstream.maxAnswerBytes`). */
  maxAnswerBytes: number;
  /** Headers added to every upstream request (trace context: `traceparent`). */
  traceHeaders?: (context: GatewayContext) => Record<string, string>;
}): Hook {
  return {
    name: 'gateway-forward',
    stage: 'forward',
    async run(context, next) {
      const transform = context.transform;
      const auth = context.auth;
      if (!transform || !auth) throw new Error('forward stage reached without a transform and auth slice');
      const timeoutHeader = context.incoming.headers['x-gateway-request-timeout'];
      let timeoutMs: number | undefined;
      if (timeoutHeader !== undefined) {
        timeoutMs = Number(timeoutHeader);
        if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
          throw errors.invalidRequest(`x-gateway-request-timeout must be an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}.`, {
            param: 'x-gateway-request-timeout',
            code: 'invalid_header',
          });
        }
      }
      const extra = dependencies.traceHeaders?.(context);
      const upstreamRequest =
        extra && Object.keys(extra).length > 0 ? { ...transform.upstreamRequest, headers: { ...transform.upstreamRequest.headers, ...extra } } : transform.upstreamRequest;
      const sentAt = performance.now();
      const answer = await dependencies.upstream.send(upstreamRequest, {
        signal: context.signal,
        guarded: auth.target.customHost,
        timeoutMs,
      });
      context.forward = {
        ...answer,
        sentAt,
        headersAt: performance.now(),
        memory: dependencies.memoryBudget.lease(),
        maxAnswerBytes: dependencies.maxAnswerBytes,
      };
      await next();
    },
  };
}
