import type { ErrorBody, UpstreamReply } from '../../core/spec/index.js';

const TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error' };

/** Acme's errors are `{"fault": {"reason", "kind"}}`; anything else is described by status. */
export function mapAcmeError(reply: UpstreamReply): ErrorBody {
  const type = TYPES[reply.status] ?? 'api_error';
  try {
    const fault = (JSON.parse(Buffer.from(reply.body).toString('utf8')) as { fault?: { reason?: unknown; kind?: unknown } }).fault;
    if (fault && typeof fault.reason === 'string') return { message: fault.reason, type, param: null, code: typeof fault.kind === 'string' ? fault.kind : null };
  } catch {
    // not JSON
  }
  return { message: `Acme returned HTTP ${reply.status}.`, type, param: null, code: null };
}
