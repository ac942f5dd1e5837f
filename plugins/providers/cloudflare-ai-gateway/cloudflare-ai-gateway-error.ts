import type { ErrorBody, UpstreamReply } from '../../../core/spec/index.js';
import { isRecord } from '../../../core/spec/index.js';
import { mapCloudflareError } from '../cloudflare-workers-ai/cloudflare-error.js';

/**
 * AI Gateway's own failures are Cloudflare's envelope with the list under `error` (`{"success": false,
 * "error": [{"code": 2009, "message": "Unauthorized"}]}`); a provider's error behind it is relayed in
 * OpenAI's shape. Both are read by the Workers AI mapper once the list is under `errors`.
 */
export function mapAIGatewayError(reply: UpstreamReply): ErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(reply.body).toString('utf8'));
  } catch {
    return mapCloudflareError(reply);
  }
  if (isRecord(parsed) && Array.isArray(parsed.error)) {
    return mapCloudflareError({ ...reply, body: Buffer.from(JSON.stringify({ success: false, errors: parsed.error })) });
  }
  return mapCloudflareError(reply);
}
