import { type ErrorBody, errorBody, errorTypeForStatus, isRecord, readErrorReply, type UpstreamReply } from '../../../core/spec/index.js';

/**
 * ElevenLabs errors: `{"detail": {"status": "voice_not_found", "message": "…"}}`, or FastAPI's
 * validation list `{"detail": [{"loc", "msg", "type"}]}`, or `{"detail": "text"}`: the message (or the
 * joined `msg`s) is kept, `detail.status` is the code; the status names the type.
 */
export function mapElevenLabsError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  const detail = json?.detail;
  const type = errorTypeForStatus(reply.status);
  if (isRecord(detail) && typeof detail.message === 'string') {
    return { message: detail.message, type, param: null, code: typeof detail.status === 'string' ? detail.status : null };
  }
  if (Array.isArray(detail)) {
    const messages = detail.filter(isRecord).map((item) => (typeof item.msg === 'string' ? item.msg : '')).filter(Boolean);
    if (messages.length > 0) return { message: messages.join('; '), type, param: null, code: null };
  }
  if (typeof detail === 'string') return { message: detail, type, param: null, code: null };
  return errorBody(reply.status, undefined, null, json ? '' : snippet);
}
