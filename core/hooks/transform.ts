import { assertStableUrl } from '../http/request-path.js';
import type { OperationHandler } from '../api/operation.js';
import { readErrorBody } from '../api/operation.js';
import { upstreamError } from '../errors.js';
import { respond } from '../pipeline/response.js';
import type { Hook } from '../pipeline/hook.js';

/** Upstream error bodies are read up to this size for mapping; the rest is not read. */
const ERROR_BODY_LIMIT = 1024 * 1024;
/** Upstream headers an error response keeps. */
const KEPT_ERROR_HEADERS = ['retry-after', 'retry-after-ms', 'x-request-id'];

/**
 * The provider-transform stage: before `next()` the provider plugin maps the unified request to an
 * upstream request (URL, headers, body) and its auth is applied; after `next()` the upstream answer
 * is mapped back: errors through the provider's `mapError` (status kept, `Retry-After` kept), a
 * success through the operation's response mapping (plain or streamed).
 */
export function transformHook(dependencies: { operations: ReadonlyMap<string, OperationHandler> }): Hook {
  return {
    name: 'gateway-transform',
    stage: 'transform',
    async run(context, next) {
      const auth = context.auth;
      const handler = dependencies.operations.get(context.operation);
      if (!auth || !handler) throw new Error(`transform stage reached without auth or a handler for ${context.operation}`);
      const { provider, target } = auth;

      const mapped = handler.toUpstream(context, provider, target);
      assertStableUrl(mapped.url);
      // Forwarded headers go in before auth() runs and its headers last, so a forwarded header can
      // never replace one the provider's auth set (and a signing plugin signs what is sent).
      const upstreamRequest = { ...mapped, headers: { ...mapped.headers, ...auth.forwardHeaders } };
      Object.assign(upstreamRequest.headers, provider.auth(upstreamRequest, target));
      context.transform = { upstreamRequest };

      await next();

      const forward = context.forward;
      if (!forward) throw new Error('transform stage resumed without a forward slice');
      if (forward.status >= 400 && handler.mapsErrors) {
        const body = await readErrorBody(forward, context.signal, ERROR_BODY_LIMIT);
        forward.endedAt = performance.now();
        const kept: Record<string, string> = {};
        for (const name of KEPT_ERROR_HEADERS) {
          const value = forward.headers[name];
          if (typeof value === 'string') kept[name] = value;
        }
        throw upstreamError(forward.status, provider.mapError({ status: forward.status, headers: forward.headers, body }), provider.id, kept);
      }
      respond(context, await handler.respond(context, provider, forward));
    },
  };
}
