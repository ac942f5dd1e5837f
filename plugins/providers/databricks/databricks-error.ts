import { type ErrorBody, errorBody, readErrorReply, type UpstreamReply } from '../../../core/spec/index.js';
import { mapCompatibleError } from '../openai-compatible/index.js';

/**
 * Databricks REST errors are `{"error_code": "BAD_REQUEST", "message": "…"}`: the message is kept and
 * `error_code` becomes `code`. An OpenAI-shaped error (an external model's, passed on) is read as the
 * compatible family's errors are.
 */
export function mapDatabricksError(reply: UpstreamReply): ErrorBody {
  const { json } = readErrorReply(reply);
  if (json && typeof json.error_code === 'string' && typeof json.message === 'string') return errorBody(reply.status, json.message, json.error_code);
  return mapCompatibleError(reply);
}
