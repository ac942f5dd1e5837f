import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors, type GatewayError } from '../errors.js';
import { requireDependency } from '../require.js';

// Required, not imported: Node 24's `node:http` exports getters (WebSocket, MessageEvent, …) that
// load its bundled undici, and an ES import reads every export of a built-in module. Measured on
// the 2-core bench machine: 28–40 ms to import it, 3–5 ms to require it.
const { createServer, STATUS_CODES } = requireDependency('node:http') as typeof import('node:http');

/** Node's server timeouts, in milliseconds (0 disables one). */
export interface ServerTimeouts {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

/**
 * How often Node checks the headers and request timeouts: a quarter of the shorter one, between
 * 100 ms and Node's default 30 s, so that a 60 s limit fires within 75 s rather than 90 s.
 */
function checkingIntervalMs(timeouts: ServerTimeouts): number {
  const set = [timeouts.headersTimeoutMs, timeouts.requestTimeoutMs].filter((ms) => ms > 0);
  if (set.length === 0) return 30_000;
  return Math.min(30_000, Math.max(100, Math.floor(Math.min(...set) / 4)));
}

/** A request Node refused before the app saw it, as an OpenAI-shaped error. */
function clientErrorOf(error: NodeJS.ErrnoException): GatewayError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return errors.requestTimeout('The request (headers or body) did not arrive in time.', { code: 'request_timeout' });
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') return errors.invalidRequest('The request headers are too large.', { code: 'headers_too_large' });
  return errors.invalidRequest('The request is not valid HTTP/1.1.', { code: 'malformed_request' });
}

/** Answers a request Node's parser refused (or that timed out) with a JSON error, then closes. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const started = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage?.headersSent;
  if (!socket.writable || started || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const gatewayError = clientErrorOf(error);
  const body = JSON.stringify(gatewayError.toJSON());
  socket.end(
    `HTTP/1.1 ${gatewayError.status} ${STATUS_CODES[gatewayError.status]}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Answers a request whose `Expect` header is not `100-continue` (Node's own answer is a bare 417):
 * 417 with a JSON error, and the connection closed since its body was not read.
 */
function answerUnmetExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify(
    errors.expectationFailed('The Expect header can only be "100-continue".', { param: 'expect', code: 'expectation_failed' }).toJSON(),
  );
  response.shouldKeepAlive = false;
  response.writeHead(417, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
}

/**
 * The gateway's HTTP server with explicit timeouts: time for the headers, for the whole request,
 * and for an idle keep-alive connection (the body's idle timeout is the route's). A request refused
 * by Node itself (timed out, malformed, an `Expect` other than 100-continue) gets an OpenAI-shaped
 * JSON error and the connection closed. Upgrade requests go to `upgrade` (absent: refused by Node).
 */
/** A listener for the server's upgrade requests (the Realtime API's WebSockets), which cuts the connections it holds when the server closes. */
export interface UpgradeListener {
  (request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Whether an upgrade request is this listener's; any other (`Upgrade: h2c` from curl) is served as a plain request, as without a listener. */
  accepts(request: IncomingMessage): boolean;
  closeAll(): void;
}

/** Each server's upgrade listener, cut by {@link closeGatewayServer} once the grace period is over. */
const upgradeListeners = new WeakMap<Server, UpgradeListener>();

export function createGatewayServer(listener: RequestListener<typeof IncomingMessage, typeof ServerResponse>, timeouts: ServerTimeouts, upgrade?: UpgradeListener): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(timeouts),
      shouldUpgradeCallback: (request) => upgrade?.accepts(request) ?? false,
    },
    listener,
  );
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnmetExpectation);
  if (upgrade) {
    server.on('upgrade', upgrade);
    upgradeListeners.set(server, upgrade);
  }
  return server;
}

/** How often a draining server closes the keep-alive sockets whose requests have finished. */
const DRAIN_SWEEP_MS = 100;

/**
 * Stops accepting, closes idle keep-alive sockets, lets requests in flight (streams included) finish
 * for up to `graceMs`, then cuts what is left. A socket whose request finishes during the drain is
 * closed within {@link DRAIN_SWEEP_MS} (Node would keep it until its keep-alive time-out), so the
 * drain ends with the last request, not with the grace period.
 */
export function closeGatewayServer(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.closeAllConnections();
      // Upgraded connections (Realtime sessions) are no longer the server's to close.
      upgradeListeners.get(server)?.closeAll();
    }, graceMs);
    const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS);
    server.close(() => {
      clearTimeout(timer);
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}
