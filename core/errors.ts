import type { ErrorBody } from './spec/unified.js';

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

const make =
  (status: number, type: string) =>
  (message: string, options: { param?: string | null; code?: string | null; headers?: Record<string, string> } = {}) =>
    new GatewayError(status, { message, type, param: options.param ?? null, code: options.code ?? null }, options.headers);

export const errors = {
  invalidRequest: make(400, 'invalid_request_error'),
  authentication: make(401, 'authentication_error'),
  permission: make(403, 'permission_error'),
  notFound: make(404, 'not_found_error'),
  methodNotAllowed: make(405, 'invalid_request_error'),
  /** The client stopped sending its request body (the connection is closed). */
  requestTimeout: make(408, 'timeout_error'),
  tooLarge: make(413, 'request_too_large'),
  /** An `Expect` header the server cannot meet (anything but `100-continue`). */
  expectationFailed: make(417, 'invalid_request_error'),
  rateLimited: make(429, 'rate_limit_error'),
  /** The client went away before its response was complete (nginx's 499); only ever logged. */
  clientClosed: make(499, 'client_closed_request'),
  internal: make(500, 'api_error'),
  badGateway: make(502, 'upstream_error'),
  upstreamTimeout: make(504, 'timeout_error'),
  /** The gateway is out of a shared resource (memory budget); comes with Retry-After. */
  overloaded: make(503, 'overloaded_error'),
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
      | 'INVALID_CONFIG',
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'BootError';
  }
}
