import { type ErrorBody, errorBody, errorTypeForStatus, isRecord, readErrorReply, type UpstreamReply } from '../../../core/spec/index.js';

/**
 * watsonx.ai errors: `{"errors": [{"code": "json_validation_error", "message": "…", "more_info": "…"}],
 * "trace": "…", "status_code": 400}`: the messages (joined) and the first code are kept; the status
 * names the type. Anything else is described by its status.
 */
export function mapWatsonxError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  const list = json && Array.isArray(json.errors) ? json.errors.filter(isRecord) : [];
  if (list.length > 0) {
    const message = list.map((error) => (typeof error.message === 'string' ? error.message : '')).filter(Boolean).join('; ');
    const code = typeof list[0].code === 'string' ? list[0].code : null;
    return { message: message || `The provider returned HTTP ${reply.status}.`, type: errorTypeForStatus(reply.status), param: null, code };
  }
  return errorBody(reply.status, typeof json?.message === 'string' ? json.message : undefined, null, json ? '' : snippet);
}
