import { type ErrorBody, errorTypeForStatus, isRecord, type UpstreamReply } from '../../../core/spec/index.js';
import { mapCompatibleError } from '../openai-compatible/index.js';

/**
 * Cloudflare's API envelope on failure: `{"success": false, "errors": [{"code": 5007, "message": "…"}],
 * "messages": [], "result": null}`: the first error's message and its numeric code (as a string) are
 * kept; the status names the type. Anything else (an OpenAI-shaped error from the compatible
 * endpoint, a proxy's page) is read as the OpenAI-compatible family's errors are.
 */
export function mapCloudflareError(reply: UpstreamReply): ErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(reply.body).toString('utf8'));
  } catch {
    return mapCompatibleError(reply);
  }
  if (isRecord(parsed) && Array.isArray(parsed.errors) && parsed.errors.length > 0 && isRecord(parsed.errors[0])) {
    const first = parsed.errors[0];
    const message = parsed.errors
      .filter(isRecord)
      .map((error) => (typeof error.message === 'string' ? error.message : ''))
      .filter(Boolean)
      .join('; ');
    return {
      message: message || `The provider returned HTTP ${reply.status}.`,
      type: errorTypeForStatus(reply.status),
      param: null,
      code: typeof first.code === 'number' || typeof first.code === 'string' ? String(first.code) : null,
    };
  }
  return mapCompatibleError(reply);
}
