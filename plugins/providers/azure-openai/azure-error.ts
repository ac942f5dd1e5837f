import type { ErrorBody, UpstreamReply } from '../../../core/spec/index.js';
import { errorBody, readErrorReply } from '../../shared/chat-mapping.js';
import { mapOpenAIError } from '../openai/openai-error.js';

/**
 * Azure errors are OpenAI-shaped (`{"error": {code, message, param, ...}}`; a prompt the content
 * filter blocked is a 400 with code `content_filter`), except the gateway-level ones of Azure's
 * front door (`{"statusCode": 401, "message": ...}`).
 */
export function mapAzureError(reply: UpstreamReply): ErrorBody {
  const { json } = readErrorReply(reply);
  if (json && !json.error && typeof json.message === 'string') return errorBody(reply.status, json.message, json.code ?? null);
  const mapped = mapOpenAIError(reply);
  const code = (json?.error as { code?: unknown } | undefined)?.code;
  // Azure puts its error class in `code` and often leaves `type` out: the status names the type then.
  return typeof code === 'string' && mapped.code === null ? { ...mapped, code } : mapped;
}
