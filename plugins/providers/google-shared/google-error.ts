import { type ErrorBody, errorTypeForStatus, type UpstreamReply } from '../../../core/spec/index.js';

/** Google answers an overloaded model with 503 `UNAVAILABLE`. */
const GOOGLE_STATUS_TYPES = { 503: 'overloaded_error' };

const typeFor = (status: number): string => errorTypeForStatus(status, GOOGLE_STATUS_TYPES);

/** A Google error object (`{code, message, status, details}`) as the gateway's error body. */
export function googleErrorBody(error: Record<string, unknown>, status: number): ErrorBody {
  const httpStatus = typeof error.code === 'number' ? error.code : status;
  return {
    message: typeof error.message === 'string' && error.message ? error.message : `The provider returned HTTP ${status}.`,
    type: typeFor(httpStatus),
    param: null,
    code: typeof error.status === 'string' ? error.status : null,
  };
}

/**
 * Google APIs answer errors as `{"error": {"code", "message", "status", "details"}}` (sometimes as a
 * one-element array of that); anything else is described by status.
 */
export function mapGoogleError(reply: UpstreamReply): ErrorBody {
  const text = Buffer.from(reply.body).toString('utf8');
  try {
    let parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) parsed = parsed[0];
    const error = (parsed as { error?: unknown } | null)?.error;
    if (error && typeof error === 'object') return googleErrorBody(error as Record<string, unknown>, reply.status);
  } catch {
    // not JSON: described below
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return { message: `The provider returned HTTP ${reply.status}${snippet ? `: ${snippet}` : '.'}`, type: typeFor(reply.status), param: null, code: null };
}
