import type { ProviderTarget, UpstreamRequest } from '../../../core/spec/index.js';

interface StreamableBody {
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  [field: string]: unknown;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * A JSON POST to `path`. The unified API is OpenAI's own, so the client's bytes go up unchanged
 * (unknown fields and 64-bit seeds intact) whenever the request needs no change.
 */
export function openAIJsonPost(path: string, request: object, target: ProviderTarget, original?: Uint8Array): UpstreamRequest {
  return { method: 'POST', url: `${target.baseUrl}${path}`, headers: { ...JSON_HEADERS }, body: original ?? JSON.stringify(request) };
}

/**
 * As {@link openAIJsonPost}, except that streams always ask for usage, which the gateway needs for
 * its log; the gateway drops the usage chunk again when the client did not ask for it.
 */
export function openAIStreamablePost(path: string, request: StreamableBody, target: ProviderTarget, original?: Uint8Array): UpstreamRequest {
  const unchanged = !request.stream || request.stream_options?.include_usage === true;
  if (unchanged) return openAIJsonPost(path, request, target, original);
  return openAIJsonPost(path, { ...request, stream_options: { ...request.stream_options, include_usage: true } }, target);
}
