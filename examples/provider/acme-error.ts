import { type ErrorBody, errorTypeForStatus, type UpstreamReply } from '../../core/spec/index.js';

/** Acme's errors are `{"fault": {"reason", "kind"}}`; anything else is described by status. */
export function mapAcmeError(reply: UpstreamReply): ErrorBody {
  const type = errorTypeForStatus(reply.status);
  try {
    const fault = (JSON.parse(Buffer.from(reply.body).toString('utf8')) as { fault?: { reason?: unknown; kind?: unknown } }).fault;
    if (fault && typeof fault.reason === 'string') return { message: fault.reason, type, param: null, code: typeof fault.kind === 'string' ? fault.kind : null };
  } catch {
    // not JSON
  }
  return { message: `Acme returned HTTP ${reply.status}.`, type, param: null, code: null };
}
