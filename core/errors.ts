/** The error body every gateway error and every mapped upstream error has. */
export interface ErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
  /** Set when the error came from a provider. */
  provider?: string;
}

/**
 * The one catalogue of gateway errors. Every error a client sees is a {@link GatewayError}; its
 * body is always OpenAI-shaped: `{"error": {"message", "type", "param", "code"}}`.
 */
export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    /** Extra response headers (e.g. `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
    this.name = 'GatewayError';
  }

  toJSON(): { error: ErrorBody } {
    return { error: this.body };
  }
}

/**
 * The one status-to-type table: the OpenAI error `type` an HTTP status means when nothing more is
 * known. The gateway's own errors take their type from it (5xx ones name the gateway's condition
 * instead), and providers map an upstream's status with {@link errorTypeForStatus}.
 */
export const ERROR_TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

/**
 * The error type of `status` by {@link ERROR_TYPE_BY_STATUS}: any other 5xx is `api_error`, any other
 * status `invalid_request_error`. `quirks` are a provider's own meanings of a status (Anthropic's
 * 529 is `overloaded_error`), consulted first.
 */
export function errorTypeForStatus(status: number, quirks: Readonly<Record<number, string>> = {}): string {
  return quirks[status] ?? ERROR_TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** What a catalogue entry takes besides the message. */
type GatewayErrorOptions = { param?: string | null; code?: string | null; headers?: Record<string, string> };

const make =
  (status: number, type = errorTypeForStatus(status)) =>
  (message: string, options: GatewayErrorOptions = {}) =>
    new GatewayError(status, { message, type, param: options.param ?? null, code: options.code ?? null }, options.headers);

export const errors = {
  invalidRequest: make(400),
  authentication: make(401),
  permission: make(403),
  notFound: make(404),
  /** The change clashes with what is stored (a name taken, an object still in use). */
  conflict: make(409),
  methodNotAllowed: make(405),
  /** The client stopped sending its request body (the connection is closed). */
  requestTimeout: make(408),
  tooLarge: make(413),
  /** An `Expect` header the server cannot meet (anything but `100-continue`). */
  expectationFailed: make(417),
  rateLimited: make(429),
  /** The client went away before its response was complete (nginx's 499); only ever logged. */
  clientClosed: make(499, 'client_closed_request'),
  internal: make(500),
  badGateway: make(502, 'upstream_error'),
  upstreamTimeout: make(504, 'timeout_error'),
  /** `x-gateway-cache: only-if-cached` and the cache holds no answer (HTTP's only-if-cached miss is 504). */
  cacheMiss: make(504, 'cache_miss_error'),
  /** The gateway is out of a shared resource (memory budget); comes with Retry-After. */
  overloaded: make(503, 'overloaded_error'),
  /** Something the gateway depends on (the shared state during a failover) cannot answer now; comes with Retry-After. */
  unavailable: make(503, 'service_unavailable_error'),
  /**
   * 403 `route_not_allowed`: a virtual key named (in `x-gateway-config`) a route that is neither
   * its own nor granted to it (`allowed_routes`), or that does not exist (the two are not told
   * apart, so a key cannot probe which routes exist). See `core/routing/access.ts`.
   */
  routeNotAllowed: (message: string, options: GatewayErrorOptions = {}): GatewayError => make(403)(message, { param: 'x-gateway-config', code: 'route_not_allowed', ...options }),
  /**
   * 400 `gateway_key_not_forwardable`: a header that would go upstream (the provider credential in
   * `Authorization`, or a header named in `x-gateway-forward-headers`) holds a gateway key (the
   * account key or a virtual key); `param` names the header. A gateway key never leaves the gateway.
   */
  gatewayKeyNotForwardable: (message: string, options: GatewayErrorOptions = {}): GatewayError => make(400)(message, { code: 'gateway_key_not_forwardable', ...options }),
};

/** An upstream's own error: its status is kept, its body mapped by the provider, `provider` added. */
export function upstreamError(
  status: number,
  body: ErrorBody,
  provider: string,
  headers: Record<string, string> = {},
): GatewayError {
  return new GatewayError(status, { ...body, provider }, headers);
}

/** Anything thrown that is not a GatewayError becomes a 500 that reveals nothing internal. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return errors.internal('The gateway failed to handle this request.', { code: 'internal_error' });
}

/** A configuration or plugin problem found at boot. Start-up fails with its message. */
export class BootError extends Error {
  constructor(
    readonly code:
      | 'UNKNOWN_STAGE'
      | 'DUPLICATE_HOOK'
      | 'UNKNOWN_HOOK'
      | 'HOOK_ORDER_CYCLE'
      | 'HOOK_ORDER_STAGE'
      | 'DUPLICATE_PLUGIN'
      | 'INVALID_MANIFEST'
      | 'INVALID_PARAMS'
      | 'INVALID_CONFIG'
      | 'ADMIN_ROUTE_UNDECLARED',
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'BootError';
  }
}
