import type { ErrorBody, UpstreamReply } from '../../../core/spec/index.js';
import { errorBody, readErrorReply } from '../../shared/chat-mapping.js';

/**
 * Bedrock errors: a JSON body `{"message": "..."}` (sometimes `Message`) and the exception name in
 * the `x-amzn-errortype` header (`ValidationException:http://...`), which becomes the code.
 */
export function mapBedrockError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  const header = reply.headers['x-amzn-errortype'];
  const errorType = (Array.isArray(header) ? header[0] : header)?.split(':')[0] ?? (typeof json?.__type === 'string' ? json.__type.split('#').at(-1) : undefined);
  return errorBody(reply.status, json?.message ?? json?.Message, errorType ?? null, json ? '' : snippet);
}
