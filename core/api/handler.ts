import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Context as KoaContext } from 'koa';
import { GatewayError, toGatewayError } from '../errors.js';
import { clientAddress } from '../http/client-address.js';
import { flattenHeaders } from '../http/headers.js';
import type { MemoryBudget, MemoryLease } from '../http/memory-budget.js';
import { pipeInto } from '../http/pipe.js';
import { canonicalPath, rawPathOf } from '../http/request-path.js';
import { timeOrderedId } from '../ids.js';
import type { GatewayContext, GatewayResponse } from '../pipeline/context.js';
import { writeResponse } from '../pipeline/response.js';
import type { Pipeline } from '../pipeline/runner.js';
import type { OperationHandler } from './operation.js';
import { metadataOf, strictOf, traceIdOf } from './request-headers.js';
import { servingAuth } from '../routing/attempt.js';

const ms = (value: number) => Math.max(0, value).toFixed(3);

function serverTiming(context: GatewayContext): string {
  const now = performance.now();
  const forward = context.forward;
  const upstream = forward ? (forward.endedAt ?? forward.headersAt) - forward.sentAt : 0;
  // A routed request's failed attempts and back-off waits are routing time, not the gateway's own.
  const routing = context.routed?.routingMs;
  if (routing === undefined) return `gateway;dur=${ms(now - context.startedAt - upstream)}, upstream;dur=${ms(upstream)}`;
  return `gateway;dur=${ms(Math.max(0, now - context.startedAt - upstream - routing))}, routing;dur=${ms(routing)}, upstream;dur=${ms(upstream)}`;
}

function errorResponse(error: GatewayError, handler: OperationHandler, context?: GatewayContext): GatewayResponse {
  const own = context && handler.errorResponse?.(error, context);
  if (own) return own;
  return { status: error.status, headers: { ...error.headers }, body: { json: handler.renderError ? handler.renderError(error) : error.toJSON() } };
}

/** Writes a response straight to Node's response (Koa's own responder is bypassed for control and speed). */
function send(res: ServerResponse, context: GatewayContext, response: GatewayResponse): void {
  const headers: Record<string, string | string[]> = {
    ...response.headers,
    'x-gateway-trace-id': context.traceId,
    'server-timing': serverTiming(context),
  };
  const auth = servingAuth(context);
  if (auth) headers['x-gateway-provider'] = auth.provider.id;
  const body = response.body;
  if (body === null) {
    res.writeHead(response.status, headers).end();
  } else if ('json' in body) {
    const bytes = body.serialised ?? Buffer.from(JSON.stringify(body.json));
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(bytes.length);
    res.writeHead(response.status, headers).end(bytes);
  } else if ('bytes' in body) {
    headers['content-length'] = String(body.bytes.byteLength);
    res.writeHead(response.status, headers).end(body.bytes);
  } else {
    res.writeHead(response.status, headers);
    res.flushHeaders();
    // A client that goes away destroys the source, which cancels the upstream read.
    pipeInto(body.stream, res);
  }
}

/** How the route reads request bodies and tells the client's address. */
export interface HandlerOptions {
  readonly bodyLimitBytes: number;
  /** Request bodies held in memory count against it (503 past it); absent: not counted. */
  readonly memoryBudget?: MemoryBudget;
  /** Most time between two body chunks (408); absent or 0: no limit. */
  readonly bodyTimeoutMs?: number;
  /** Proxy hops trusted in X-Forwarded-For (0: the socket's address). */
  readonly trustProxy?: number;
}

/**
 * The Koa side of every gateway operation: builds the typed context, runs the pipeline and writes
 * the response. The body is read by `context.loadRequest`, which the auth stage runs once the
 * caller is known: an unauthenticated request is refused with its body unread and its connection
 * closed. The log stage is bound to the response's `close` event, so it runs exactly once for every
 * request, whatever happened before.
 */
export function gatewayHandler(pipeline: Pipeline, handler: OperationHandler, options: HandlerOptions): (koa: KoaContext) => Promise<void> {
  const route = gatewayRoute(pipeline, handler, options);
  return (koa) => {
    koa.respond = false;
    return route(koa.req, koa.res, koa.path, koa.querystring);
  };
}

/**
 * A gateway operation on Node's request and response, as {@link gatewayHandler} runs it for Koa and
 * the server's own dispatch ({@link operationListener}) runs it without Koa. `routedPath`: the path
 * the request was routed on (the context's path when the request's own is refused); `query`: the
 * query string without its `?`.
 */
export type GatewayRoute = (req: IncomingMessage, res: ServerResponse, routedPath: string, query: string) => Promise<void>;

export function gatewayRoute(pipeline: Pipeline, handler: OperationHandler, options: HandlerOptions): GatewayRoute {
  return async (req, res, routedPath, query) => {
    const startedAt = performance.now();
    const headers = flattenHeaders(req.headers);
    const controller = new AbortController();
    const lease = options.memoryBudget?.lease();
    let loading: Promise<void> | undefined;
    // The gateway's own headers, each parsed once; the first refused one is the request's answer.
    const traceId = parsedHeader(traceIdOf, headers['x-gateway-trace-id']);
    const path = parsedHeader(canonicalPath, rawPathOf(req.url));
    const metadata = parsedHeader(metadataOf, headers['x-gateway-metadata']);
    const strict = parsedHeader(strictOf, headers['x-gateway-strict-api-compliance']);
    const headerError = firstError(traceId, path, metadata, strict);
    const context: GatewayContext = {
      traceId: traceId instanceof GatewayError ? timeOrderedId() : traceId,
      startedAt,
      operation: handler.name,
      incoming: {
        method: req.method ?? 'GET',
        path: path instanceof GatewayError ? routedPath : path,
        search: query ? `?${query}` : '',
        headers,
        clientAddress: clientAddress(req, options.trustProxy ?? 0),
      },
      signal: controller.signal,
      metadata: metadata instanceof GatewayError ? {} : metadata,
      strict: strict instanceof GatewayError ? true : strict,
      request: { streaming: false },
      loadRequest: () => (loading ??= loadRequest(context, handler, req, options, lease)),
    };
    // The log stage and the clean-up wait until the request's own work (parse, stages) is over,
    // so whatever a stage reserved or created is settled even when the client left early.
    let working = true;
    let closed = false;
    const settle = (): void => {
      lease?.release();
      // The answer read whole (if any) is no longer held once the response is done.
      context.forward?.memory.release();
      void pipeline.complete(context);
      void context.request.cleanup?.().catch(() => {});
    };
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      if (working) closed = true;
      else queueMicrotask(settle);
    });

    try {
      if (headerError) context.error = headerError;
      else if (!controller.signal.aborted) await pipeline.run(context);
      if (context.error) {
        writeResponse(context, errorResponse(context.error, handler, context));
        // The body was not read (unauthenticated, or refused part-way): close the connection rather than drain it.
        if (!req.complete) res.shouldKeepAlive = false;
      }
    } finally {
      working = false;
      if (closed) queueMicrotask(settle);
    }
    if (res.destroyed) return;
    send(res, context, context.response ?? errorResponse(toGatewayError(new Error('no response')), handler));
  };
}

/** A header's value as `parse` reads it, or the gateway error `parse` threw (no closure per header and request). */
function parsedHeader<V, T>(parse: (value: V) => T, value: V): T | GatewayError {
  try {
    return parse(value);
  } catch (error) {
    return toGatewayError(error);
  }
}

/** The first of the parsed headers that was refused, in the order they are checked. */
function firstError(first: unknown, second: unknown, third: unknown, fourth: unknown): GatewayError | undefined {
  if (first instanceof GatewayError) return first;
  if (second instanceof GatewayError) return second;
  if (third instanceof GatewayError) return third;
  return fourth instanceof GatewayError ? fourth : undefined;
}

/** Reads and parses the request body into `context.request` (once the caller is known). */
async function loadRequest(context: GatewayContext, handler: OperationHandler, req: IncomingMessage, options: HandlerOptions, lease: MemoryLease | undefined): Promise<void> {
  context.request = await handler.parse(req, {
    bodyLimitBytes: options.bodyLimitBytes,
    strict: context.strict,
    ...(lease ? { lease } : {}),
    ...(options.bodyTimeoutMs ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
  });
}

/** Request targets whose path and query Koa's URL parsing takes apart differently from a plain split (it falls back to the full parser). */
const UNUSUAL_TARGET = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * The server's request listener: a request for one of the unified operations (`METHOD path`, the
 * path as it is sent upstream) goes straight to its {@link GatewayRoute}, other requests to Koa
 * (`fallback`). Issue 21: Koa's context, its response-finished listeners and its middleware chain
 * were ~3 KB of allocation per model call, and the operations use none of them (they write the
 * response themselves). Koa's own routing of the same requests stays for a request this cannot
 * place (an unacceptable path, an unusual request target), with the same result.
 */
export function operationListener(
  routes: ReadonlyMap<string, GatewayRoute>,
  fallback: RequestListener,
  /** A failure that is not a gateway error (a bug); the request is answered 500. */
  onUnexpectedError: (error: unknown) => void,
): RequestListener {
  return (req, res) => {
    const target = req.url ?? '/';
    if (target.startsWith('/v1/') && !UNUSUAL_TARGET.test(target)) {
      const queryAt = target.indexOf('?');
      let path: string | undefined;
      try {
        path = canonicalPath(queryAt === -1 ? target : target.slice(0, queryAt));
      } catch {
        // refused by Koa's route to the pass-through handler, which answers 400 invalid_path
      }
      const route = path === undefined ? undefined : routes.get(`${req.method} ${path}`);
      if (route) {
        route(req, res, path!, queryAt === -1 ? '' : target.slice(queryAt + 1)).catch((error: unknown) => {
          const gatewayError = toGatewayError(error);
          if (gatewayError !== error) onUnexpectedError(error);
          if (res.headersSent) res.destroy();
          else {
            const body = JSON.stringify(gatewayError.toJSON());
            res.writeHead(gatewayError.status, { ...gatewayError.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
          }
        });
        return;
      }
    }
    fallback(req, res);
  };
}
