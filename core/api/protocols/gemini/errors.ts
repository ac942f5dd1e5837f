import type { GatewayError } from '../../../errors.js';
import type { ErrorBody } from '../../../spec/unified.js';

/** The canonical status names Google's APIs give each HTTP status (google.rpc.Code). */
const STATUS_BY_CODE: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's status name for an HTTP status. */
export const googleStatusOf = (code: number): string => STATUS_BY_CODE[code] ?? (code >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');

/**
 * Google's error object, `{"error": {"code", "message", "status", "details"}}`. The gateway's own
 * error code (`guardrail_denied`, `unsupported_parameter`, …) is in an `ErrorInfo` detail, as
 * Google reports its own reasons, with the offending field in its metadata when known.
 */
export interface GoogleErrorBody {
  error: { code: number; message: string; status: string; details?: Array<Record<string, unknown>> };
}

export function googleErrorBody(body: ErrorBody, code: number): GoogleErrorBody {
  const detail: Record<string, unknown> = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: body.code ?? body.type, domain: 'llm-gateway' };
  if (body.param) detail.metadata = { field: body.param };
  return { error: { code, message: body.message, status: googleStatusOf(code), details: [detail] } };
}

/** A gateway error (its own or an upstream's) as Google's APIs render it. */
export const renderGoogleError = (error: GatewayError): GoogleErrorBody => googleErrorBody(error.body, error.status);
