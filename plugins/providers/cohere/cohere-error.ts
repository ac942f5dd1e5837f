import type { ErrorBody, UpstreamReply } from '../../../core/spec/index.js';
import { errorBody, readErrorReply } from '../../shared/chat-mapping.js';

/** Cohere errors are `{"id": "...", "message": "..."}`; the status names the type. */
export function mapCohereError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  return errorBody(reply.status, json?.message, null, json ? '' : snippet);
}
