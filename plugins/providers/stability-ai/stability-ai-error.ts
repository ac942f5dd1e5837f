import { type ErrorBody, errorBody, errorTypeForStatus, readErrorReply, type UpstreamReply } from '../../../core/spec/index.js';

/**
 * Stability AI errors: `{"id": "…", "name": "bad_request", "errors": ["prompt: cannot be empty"]}`:
 * the messages joined, `name` as the code (`content_moderation`, `rate_limit_exceeded`, …); the
 * status names the type.
 */
export function mapStabilityError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  const messages = Array.isArray(json?.errors) ? json.errors.filter((message): message is string => typeof message === 'string') : [];
  const code = typeof json?.name === 'string' ? json.name : null;
  if (messages.length > 0) return { message: messages.join('; '), type: errorTypeForStatus(reply.status), param: null, code };
  if (typeof json?.message === 'string') return { message: json.message, type: errorTypeForStatus(reply.status), param: null, code };
  return errorBody(reply.status, undefined, code, json ? '' : snippet);
}
