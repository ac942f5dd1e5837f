import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { LookupFunction } from 'node:net';
import type { WebSocket, WebSocketServer } from 'ws';
import { errors, GatewayError, toGatewayError, upstreamError } from '../../../errors.js';
import type { PolicyRegistry } from '../../../guardrails/registry.js';
import { clientAddress } from '../../../http/client-address.js';
import { flattenHeaders } from '../../../http/headers.js';
import { canonicalPath, rawPathOf } from '../../../http/request-path.js';
import { timeOrderedId } from '../../../ids.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import type { Pipeline } from '../../../pipeline/runner.js';
import type { UpstreamRequest } from '../../../spec/provider.js';
import { metadataOf, strictOf, traceIdOf } from '../../request-headers.js';
import { admittedUpstream, realtime } from './handler.js';
import { RealtimeSession, type SessionDependencies } from './session.js';

type WebSocketModule = typeof import('ws');
let webSocketModule: Promise<WebSocketModule> | undefined;
/** `ws`, loaded on the first session: it brings `https`, `tls` and `zlib` (tens of ms), which a gateway without sessions never needs at start-up. */
const loadWebSocket = (): Promise<WebSocketModule> => (webSocketModule ??= import('ws'));

/** The path of the Realtime API. */
export const REALTIME_PATH = '/v1/realtime';
/** A browser cannot set headers on a WebSocket: it sends its key as this subprotocol (`openai-insecure-api-key.<key>`). */
const KEY_PROTOCOL = 'openai-insecure-api-key.';
/** Most bytes of a provider's refusal read for mapping. */
const REFUSAL_BODY_LIMIT = 64 * 1024;

/** What the upgrade needs from the gateway. */
export interface RealtimeOptions {
  readonly bounds: SessionDependencies['bounds'] & { readonly maxFrameBytes: number };
  /** How long the provider's handshake may take (the upstream connect timeout). */
  readonly handshakeTimeoutMs: number;
  readonly trustProxy: number;
  readonly policies: PolicyRegistry;
  readonly charge: SessionDependencies['charge'];
  /** The custom-host guard's connect-time lookup, for a session to a custom host. */
  readonly guardedLookup?: LookupFunction;
}

/** The server's `upgrade` listener, and the sessions it holds. */
export interface RealtimeUpgrade {
  (request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Whether the server hands it this upgrade request: a WebSocket upgrade of a `/v1/realtime` path. */
  accepts(request: IncomingMessage): boolean;
  /** Cuts every open session (the gateway is closing). */
  closeAll(): void;
}

/**
 * The Realtime API over WebSocket: an upgrade request to `/v1/realtime` runs the pipeline like any
 * request (authentication, including a browser's `openai-insecure-api-key.<key>` subprotocol; the
 * target and its credentials; limits; the guardrail policy). A refusal is the usual JSON error with
 * its status, before any upgrade. Once admitted, the provider's WebSocket is opened with the
 * provider's credentials (the client never holds them); its refusal is mapped like any upstream
 * error, still before the client's upgrade. Then the client's connection is upgraded and the two are
 * relayed as one {@link RealtimeSession}, whose end runs the log stage: one entry per session.
 */
export function realtimeUpgrade(pipeline: Pipeline, options: RealtimeOptions): RealtimeUpgrade {
  const sessions = new Set<RealtimeSession>();
  // The upgrade's answer carries the trace id and the provider, like every answer of the gateway.
  const upgrading = new WeakMap<IncomingMessage, GatewayContext>();
  let server: WebSocketServer | undefined;
  const serverOf = (ws: WebSocketModule): WebSocketServer => {
    if (server) return server;
    // Text is relayed as received and checked by the endpoints: UTF-8 is not validated twice on the way.
    server = new ws.WebSocketServer({ noServer: true, maxPayload: options.bounds.maxFrameBytes, perMessageDeflate: false, handleProtocols: chosenProtocol, clientTracking: false, skipUTF8Validation: true });
    server.on('headers', (headers, request) => {
      const context = upgrading.get(request);
      if (context) headers.push(`x-gateway-trace-id: ${context.traceId}`, `x-gateway-provider: ${context.auth!.provider.id}`);
    });
    return server;
  };

  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => {});
    let path: string;
    try {
      path = canonicalPath(rawPathOf(request.url));
    } catch (error) {
      refuse(socket, toGatewayError(error));
      return;
    }
    if (path !== REALTIME_PATH || request.headers.upgrade?.toLowerCase() !== 'websocket') {
      refuse(socket, errors.notFound(`No WebSocket endpoint at ${path}; the Realtime API is GET ${REALTIME_PATH}?model=<model>.`, { code: 'route_not_found' }));
      return;
    }
    void admit(request, socket, head).catch(() => socket.destroy());
  };

  const admit = async (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const context = sessionContext(request, options.trustProxy);
    const complete = () => void pipeline.complete(context);
    if (!(context.error instanceof GatewayError)) await pipeline.run(context);
    const upstreamRequest = context.error ? undefined : admittedUpstream(context);
    if (!upstreamRequest) return refuseSession(socket, context, context.error ?? errors.internal('The session was not admitted.', { code: 'internal_error' }), complete);
    const ws = await loadWebSocket();
    const opened = await openUpstream(ws, upstreamRequest, context, options, socket);
    if (opened instanceof GatewayError) return refuseSession(socket, context, opened, complete);
    if (!socket.writable) {
      opened.terminate();
      return refuseSession(socket, context, errors.clientClosed('The client left before the session opened.', { code: 'client_closed' }), complete);
    }
    upgrading.set(request, context);
    serverOf(ws).handleUpgrade(request, socket, head, (client) => {
      const policyName = context.guardrail?.policy;
      const session = new RealtimeSession(client, opened, context, upstreamRequest, {
        bounds: options.bounds,
        charge: options.charge,
        policy: policyName === undefined ? undefined : options.policies.get(policyName),
        onEnd: (ended) => {
          sessions.delete(session);
          void pipeline.complete(ended);
        },
      });
      sessions.add(session);
    });
  };

  return Object.assign(upgrade, {
    accepts: (request: IncomingMessage): boolean => request.headers.upgrade?.toLowerCase() === 'websocket' && (request.url ?? '').startsWith(REALTIME_PATH),
    closeAll(): void {
      for (const session of sessions) session.terminate();
    },
  });
}

/** The subprotocol the gateway answers with: `realtime` when offered, else the first one that is not a key; never a key. */
function chosenProtocol(protocols: Set<string>): string | false {
  if (protocols.has('realtime')) return 'realtime';
  for (const protocol of protocols) if (!protocol.startsWith(KEY_PROTOCOL)) return protocol;
  return false;
}

/** The session's context, as the route builds a request's; a browser's key subprotocol becomes `x-gateway-api-key` (and leaves the subprotocol list). */
function sessionContext(request: IncomingMessage, trustProxy: number): GatewayContext {
  const headers = flattenHeaders(request.headers);
  const offered = (headers['sec-websocket-protocol'] ?? '').split(',').map((protocol) => protocol.trim()).filter(Boolean);
  const keyProtocol = offered.find((protocol) => protocol.startsWith(KEY_PROTOCOL));
  if (keyProtocol !== undefined) {
    if (headers['x-gateway-api-key'] === undefined) headers['x-gateway-api-key'] = keyProtocol.slice(KEY_PROTOCOL.length);
    headers['sec-websocket-protocol'] = offered.filter((protocol) => protocol !== keyProtocol).join(', ');
  }
  let failure: GatewayError | undefined;
  const parsed = <T>(parse: (value: string | undefined) => T, value: string | undefined, fallback: T): T => {
    try {
      return parse(value);
    } catch (error) {
      failure ??= toGatewayError(error);
      return fallback;
    }
  };
  const query = (request.url ?? '').split('?')[1] ?? '';
  const context: GatewayContext = {
    traceId: parsed(traceIdOf, headers['x-gateway-trace-id'], timeOrderedId()),
    startedAt: performance.now(),
    operation: 'realtime',
    incoming: { method: 'GET', path: REALTIME_PATH, search: query ? `?${query}` : '', headers, clientAddress: clientAddress(request, trustProxy) },
    signal: new AbortController().signal,
    metadata: parsed(metadataOf, headers['x-gateway-metadata'], {}),
    strict: parsed(strictOf, headers['x-gateway-strict-api-compliance'], true),
    request: { streaming: true },
    loadRequest: async () => {
      context.request = await realtime.parse(request, { bodyLimitBytes: 0, strict: true });
    },
  };
  if (failure) context.error = failure;
  return context;
}

/** The WebSocket URL of an upstream request's URL (`https:` → `wss:`, `http:` → `ws:`). */
export const webSocketUrl = (url: string): string => url.replace(/^http(s?):/i, (_match, secure: string) => `ws${secure}:`);

/** Opens the provider's WebSocket; a refusal or failure comes back as the gateway error the client gets. */
function openUpstream(ws: WebSocketModule, upstreamRequest: UpstreamRequest, context: GatewayContext, options: RealtimeOptions, client: Duplex): Promise<WebSocket | GatewayError> {
  const auth = context.auth!;
  const provider = auth.provider;
  return new Promise((resolve) => {
    const upstream = new ws.WebSocket(webSocketUrl(upstreamRequest.url), {
      headers: upstreamRequest.headers,
      perMessageDeflate: false,
      skipUTF8Validation: true,
      maxPayload: options.bounds.maxFrameBytes,
      followRedirects: false,
      ...(options.handshakeTimeoutMs > 0 ? { handshakeTimeout: options.handshakeTimeoutMs } : {}),
      ...(auth.target.customHost && options.guardedLookup ? { lookup: options.guardedLookup } : {}),
    });
    const origin = new URL(upstreamRequest.url).origin;
    const leave = () => upstream.terminate();
    client.once('close', leave);
    const settle = (value: WebSocket | GatewayError) => {
      client.off('close', leave);
      resolve(value);
    };
    upstream.once('open', () => {
      // Held until the session listens: the provider speaks first (`session.created`), before the client's upgrade is done.
      upstream.pause();
      settle(upstream);
    });
    upstream.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size < REFUSAL_BODY_LIMIT) chunks.push(chunk);
        size += chunk.length;
      });
      response.on('error', () => {});
      response.on('end', () => {
        const status = response.statusCode ?? 502;
        const body = Buffer.concat(chunks).subarray(0, REFUSAL_BODY_LIMIT);
        const headers: Record<string, string> = {};
        const retryAfter = response.headers['retry-after'];
        if (typeof retryAfter === 'string') headers['retry-after'] = retryAfter;
        const mapped = status >= 400 ? provider.mapError({ status, headers: response.headers, body }) : { message: `The provider answered the WebSocket handshake with ${status}.`, type: 'upstream_error', param: null, code: 'upstream_error' };
        settle(upstreamError(status >= 400 ? status : 502, mapped, provider.id, headers));
        upstream.terminate();
      });
    });
    upstream.once('error', (error: Error & { code?: string }) => {
      const timedOut = /timed out/i.test(error.message);
      settle(
        timedOut
          ? errors.upstreamTimeout(`The provider's realtime endpoint (${origin}) did not complete its handshake in time.`, { code: 'upstream_timeout' })
          : errors.badGateway(`The provider's realtime endpoint (${origin}) could not be reached.`, { code: 'upstream_unreachable' }),
      );
    });
  });
}

/** Answers a refused session with the JSON error and its status, closes the connection, then logs it. */
function refuseSession(socket: Duplex, context: GatewayContext, error: GatewayError, complete: () => void): void {
  context.error ??= error;
  refuse(socket, error, { 'x-gateway-trace-id': context.traceId, ...(context.auth ? { 'x-gateway-provider': context.auth.provider.id } : {}) });
  complete();
}

/** Writes an OpenAI-shaped JSON error on a socket that was asking to upgrade, and closes it. */
function refuse(socket: Duplex, error: GatewayError, extra: Record<string, string> = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(error.toJSON());
  const headers = { ...error.headers, ...extra, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 408: 'Request Timeout', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };
