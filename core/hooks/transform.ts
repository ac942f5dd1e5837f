import { assertStableUrl } from '../http/request-path.js';
import type { OperationHandler } from '../api/operation.js';
import { readErrorBody } from '../api/operation.js';
import { upstreamError } from '../errors.js';
import { writeResponse } from '../pipeline/response.js';
import type { Hook } from '../pipeline/hook.js';
import type { AuthSlice, GatewayContext, RequestSlice, TransformSlice } from '../pipeline/context.js';
import type { ResolvedTarget } from '../routing/plan.js';
import { routeHeaders } from '../routing/resolve.js';
import { isRecord } from '../spec/is-record.js';

/** Upstream error bodies are read up to this size for mapping; the rest is not read. */
const ERROR_BODY_LIMIT = 1024 * 1024;
/** Upstream headers an error response keeps. */
const KEPT_ERROR_HEADERS = ['retry-after', 'retry-after-ms', 'x-request-id'];

/** The provider plugin's pure mapping of the request for one target, with its auth applied, as the transform slice. */
function mapRequest(context: GatewayContext, handler: OperationHandler, auth: AuthSlice): TransformSlice {
  const { provider, target } = auth;
  const mapped = handler.toUpstream(context, provider, target);
  assertStableUrl(mapped.url);
  // Forwarded headers go in before auth() runs and its headers last, so a forwarded header can
  // never replace one the provider's auth set (and a signing plugin signs what is sent).
  const upstreamRequest = { ...mapped, headers: { ...mapped.headers, ...auth.forwardHeaders } };
  Object.assign(upstreamRequest.headers, provider.auth(upstreamRequest, target));
  const dropped = handler.dropped?.(context);
  return dropped && dropped.length > 0 ? { upstreamRequest, dropped } : { upstreamRequest };
}

/** The request with a target's `override_params` merged into its JSON body (the model named too). */
function withOverrides(request: RequestSlice, overrides: Readonly<Record<string, unknown>> | undefined): RequestSlice {
  if (overrides === undefined || !isRecord(request.body)) return request;
  const body = { ...request.body, ...overrides };
  return { ...request, body, raw: undefined, rawText: undefined, ...(typeof overrides.model === 'string' ? { model: overrides.model } : {}) };
}

/**
 * The provider-transform stage: before `next()` the provider plugin maps the unified request to an
 * upstream request (URL, headers, body) and its auth is applied; after `next()` the upstream answer
 * is mapped back: errors through the provider's `mapError` (status kept, `Retry-After` kept), a
 * success through the operation's response mapping (plain or streamed). On a routed request the
 * mapping runs per attempt (`routing.prepare`, called by the forward stage's executor) and the
 * answer is mapped by the provider of the target that answered.
 */
export function transformHook(dependencies: { operations: ReadonlyMap<string, OperationHandler> }): Hook {
  /** A routed request's mapping for one attempt's target (`routing.prepare`). */
  const prepare = (context: GatewayContext, target: ResolvedTarget): void => {
    context.request = withOverrides(context.routing!.validated!, target.target.override_params);
    context.transform = mapRequest(context, dependencies.operations.get(context.operation)!, target.auth!);
  };
  return {
    name: 'gateway-transform',
    stage: 'transform',
    async run(context, next) {
      const handler = dependencies.operations.get(context.operation);
      if (!context.auth || !handler) throw new Error(`transform stage reached without auth or a handler for ${context.operation}`);
      if (handler.answerLocally) {
        const local = await handler.answerLocally(context, context.auth.provider);
        if (local) {
          writeResponse(context, local);
          return;
        }
      }
      const routing = context.routing;
      if (routing === undefined) {
        context.transform = mapRequest(context, handler, context.auth);
      } else {
        // One function for every request, not a closure per request (issue 21: a closure made here
        // and kept on the context had every routed request's objects promoted to the old generation).
        routing.validated = context.request;
        routing.prepare = prepare;
      }

      await next();

      const forward = context.forward;
      // The auth slice names the target that answered (the route executor moves it per attempt).
      const { provider } = context.auth;
      if (!forward) throw new Error('transform stage resumed without a forward slice');
      const extra = routing ? routeHeaders(routing.attempts, routing.target) : undefined;
      if (forward.status >= 400 && handler.mapsErrors) {
        const body = await readErrorBody(forward, context.signal, ERROR_BODY_LIMIT);
        forward.endedAt = performance.now();
        const kept: Record<string, string> = { ...extra };
        for (const name of KEPT_ERROR_HEADERS) {
          const value = forward.headers[name];
          if (typeof value === 'string') kept[name] = value;
        }
        throw upstreamError(forward.status, provider.mapError({ status: forward.status, headers: forward.headers, body }), provider.id, kept);
      }
      const response = await handler.respond(context, provider, forward);
      if (extra) Object.assign(response.headers, extra);
      writeResponse(context, response);
    },
  };
}
