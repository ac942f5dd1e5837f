import { type ErrorBody, errorBody, errorTypeForStatus, isRecord, readErrorReply, type UpstreamReply } from '../../../core/spec/index.js';

/**
 * Replicate errors are problem documents: `{"title": "Input validation failed", "detail": "…",
 * "status": 422, "invalid_fields": [{"field", "description"}]}`: `detail` (with the invalid fields'
 * descriptions) is the message, the first invalid field the param; the status names the type.
 */
export function mapReplicateError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  if (json && (typeof json.detail === 'string' || typeof json.title === 'string')) {
    const fields = Array.isArray(json.invalid_fields) ? json.invalid_fields.filter(isRecord) : [];
    const described = fields.map((field) => (typeof field.description === 'string' ? field.description : '')).filter(Boolean);
    const detail = typeof json.detail === 'string' ? json.detail : String(json.title);
    const message = [detail, ...described.filter((description) => !detail.includes(description))].join(' ');
    const param = typeof fields[0]?.field === 'string' ? fields[0].field : null;
    return { message, type: errorTypeForStatus(reply.status), param, code: null };
  }
  return errorBody(reply.status, undefined, null, json ? '' : snippet);
}
