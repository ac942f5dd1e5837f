import { type ErrorBody, errorBody, readErrorReply, type UpstreamReply } from '../../core/spec/provider/index.js';

/** Lumen's errors are `{"error": {"message", "code"}}`; anything else is described by status and a snippet. */
export function mapLumenError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  const error = (json?.error ?? {}) as { message?: unknown; code?: unknown };
  return errorBody(reply.status, error.message, error.code, snippet);
}
