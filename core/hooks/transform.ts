import { assertStableUrl } from '../http/request-path.js';
import type { OperationHandler } from '../api/operation.js';
import { readErrorBody } from '../api/operation.js';
import { upstreamError } from '../errors.js';
import { writeResponse } from '../pipeline/response.js';
import type { Hook } from '../pipeline/hook.js';
import type { AuthSlice, GatewayContext, RequestSlice } from '../pipeline/context.js';
import type { UpstreamRequest } from '../spec/provider.js';
import { routeHeaders } from '../routing/resolve.js';
import { isRecord } from '../spec/is-record.js';
import type { CredentialExchanges } from './credential-exchange.js';

/** Upstream error bodies are read up to this size for mapping; the rest is not read. */
const ERROR_BODY_LIMIT = 1024 * 1024;
/** Upstream headers an error response keeps. */
const KEPT_ERROR_HEADERS = ['retry-after', 'retry-after-ms', 'x-request-id'];

/** What mapping a request for one target gives: the upstream request, and the request fields it left out. */
export interface UpstreamMapping {
  readonly upstreamRequest: UpstreamRequest;
  readonly dropped?: readonly string[];
  /** The auth it was built with, when a credential exchange gave it a token. */
  readonly exchangedAuth?: AuthSlice;
}

/**
 * The provider plugin's pure mapping of a request for one target, with its auth applied: the
 * operation's `toUpstream`, then the forwarded headers, then `provider.auth()` on the final request.
 * `context` is the request's context as the target sees it (its `auth` and `request` are the
 * target's: the request's own on the plain path, an attempt's view on a routed one); nothing is
 * written to it. The forward stage's route executor calls this for each attempt.
 */
export function buildUpstreamRequest(context: GatewayContext, handler: OperationHandler, auth: AuthSlice): UpstreamMapping {
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
export function withOverrides(request: RequestSlice, overrides: Readonly<Record<string, unknown>> | undefined): RequestSlice {
  if (overrides === undefined || !isRecord(request.body)) return request;
  const body = { ...request.body, ...overrides };
  return { ...request, body, raw: undefined, rawText: undefined, ...(typeof overrides.model === 'string' ? { model: overrides.model } : {}) };
}

/**
 * The provider-transform stage: before `next()` the provider plugin maps the unified request to an
 * upstream request (URL, headers, body) and its auth is applied; after `next()` the upstream answer
 * is mapped back: errors through the provider's `mapError` (status kept, `Retry-After` kept), a
 * success through the operation's response mapping (plain or streamed). On a routed request the
 * forward stage's route executor maps the request per attempt with {@link buildUpstreamRequest};
 * after `next()` this stage records the mapping of the attempt that answered (or was tried last)
 * as its slice, and the answer is mapped by that attempt's provider, given the attempt's view.
 */
export function transformHook(dependencies: { operations: ReadonlyMap<string, OperationHandler>; exchanges?: CredentialExchanges }): Hook {
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
        // A credential the provider exchanges first gets its token here (the routed path: per attempt, in the forward stage).
        const auth = dependencies.exchanges && context.auth.provider.credentialExchange ? await dependencies.exchanges.apply(context.auth) : context.auth;
        const mapping = buildUpstreamRequest(context, handler, auth);
        context.transform = auth === context.auth ? mapping : { ...mapping, exchangedAuth: auth };
        await next();
      } else {
        try {
          await next();
        } finally {
          // The mapping of the attempt whose answer the client gets (the last one tried when none answered).
          const attempt = context.routed?.attempt;
          if (attempt) context.transform = attempt.dropped ? { upstreamRequest: attempt.upstreamRequest, dropped: attempt.dropped } : { upstreamRequest: attempt.upstreamRequest };
        }
      }

      const forward = context.forward;
      if (!forward) throw new Error('transform stage resumed without a forward slice');
      // A routed answer is mapped by the provider of the attempt that gave it, on that attempt's view.
      const attempt = context.routed?.attempt;
      const mapping = attempt ? attempt.view : context;
      const { provider } = attempt ? attempt.auth : context.auth;
      const extra = context.routed ? routeHeaders(context.routed.attempts, context.routed.target) : undefined;
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
      const response = await handler.respond(mapping, provider, forward);
      if (extra) Object.assign(response.headers, extra);
      writeResponse(context, response);
    },
  };
}
