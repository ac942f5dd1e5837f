import type { GatewayError } from '../../../errors.js';
import type { ErrorBody } from '../../../spec/unified.js';

/** The error types the Messages API documents; any other type is replaced by the one its status means. */
const MESSAGES_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'timeout_error',
  'api_error',
  'overloaded_error',
]);

const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The Messages API error type of an error body with `status`: its own type when Anthropic documents it, else by status. */
export function messagesErrorType(status: number, type: string): string {
  if (MESSAGES_ERROR_TYPES.has(type)) return type;
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** The Messages API's error object, `{"type": "error", "error": {"type", "message"}}`. */
export interface MessagesErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

export const messagesErrorBody = (body: ErrorBody, status: number): MessagesErrorBody => ({
  type: 'error',
  error: { type: messagesErrorType(status, body.type), message: body.message },
});

/** A gateway error (its own or an upstream's) as the Messages API renders it. */
export const renderMessagesError = (error: GatewayError): MessagesErrorBody => messagesErrorBody(error.body, error.status);
