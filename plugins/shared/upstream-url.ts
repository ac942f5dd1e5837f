import type { ProviderTarget, UpstreamRequest } from '../../core/spec/index.js';

/**
 * The same adapter with its upstream URL rewritten per request: for a provider whose OpenAI-shaped
 * paths sit under a per-request prefix (an account and gateway id) or need a query (an api-version),
 * so the shared compatible adapters serve it unchanged.
 */
export function withUpstreamUrl<Adapter extends { toUpstream(request: never, target: ProviderTarget, original?: Uint8Array): UpstreamRequest }>(
  adapter: Adapter,
  rewrite: (url: string, target: ProviderTarget) => string,
): Adapter {
  return {
    ...adapter,
    toUpstream(request: never, target: ProviderTarget, original?: Uint8Array): UpstreamRequest {
      const upstream = adapter.toUpstream(request, target, original);
      return { ...upstream, url: rewrite(upstream.url, target) };
    },
  };
}
