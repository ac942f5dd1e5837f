import { type ErrorBody, errorBody, readErrorReply, type UpstreamReply } from '../../../core/spec/index.js';

/**
 * Deepgram errors come in two documented shapes: `{"err_code", "err_msg", "request_id"}` and
 * `{"category", "message", "details", "request_id"}`: the message (with its details) is kept and the
 * code or category becomes `code`; the status names the type.
 */
export function mapDeepgramError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  if (json && typeof json.err_msg === 'string') return errorBody(reply.status, json.err_msg, json.err_code);
  if (json && typeof json.message === 'string') {
    const details = typeof json.details === 'string' && json.details ? ` ${json.details}` : '';
    return errorBody(reply.status, `${json.message}${details}`, json.category);
  }
  return errorBody(reply.status, undefined, null, json ? '' : snippet);
}
