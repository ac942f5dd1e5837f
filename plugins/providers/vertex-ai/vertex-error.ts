import type { ErrorBody, UpstreamReply } from '../../../core/spec/index.js';
import { describeReply, parseAnthropicError } from '../anthropic/index.js';
import { mapGoogleError } from '../google-shared/index.js';

/**
 * Vertex AI answers errors in Google's shape (`{"error": {"code", "message", "status"}}`), except
 * that Claude models may answer in Anthropic's (`{"type": "error", "error": {"type", "message"}}`).
 */
export function mapVertexError(reply: UpstreamReply): ErrorBody {
  const text = Buffer.from(reply.body).toString('utf8');
  if (/"type"\s*:\s*"error"/.test(text)) return parseAnthropicError(text, reply.status) ?? describeReply(reply, text);
  return mapGoogleError(reply);
}
