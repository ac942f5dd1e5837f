import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { withUpstreamUrl } from '../../shared/upstream-url.js';
import { compatibleChatAdapter } from '../openai-compatible/index.js';
import { mapAIGatewayError } from './cloudflare-ai-gateway-error.js';
import { compatRoot } from './cloudflare-ai-gateway-target.js';

export { GATEWAY_HEADER } from './cloudflare-ai-gateway-target.js';

export interface CloudflareAIGatewayParams {
  /** AI Gateway's root (default `https://gateway.ai.cloudflare.com/v1`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
  /** The account used when a request names none in `x-gateway-cloudflare-account-id`. */
  accountId?: string;
  /** The gateway used when a request names none in `x-gateway-cloudflare-gateway-id`. */
  gatewayId?: string;
}

const DEFAULT_BASE_URL = 'https://gateway.ai.cloudflare.com/v1';

/**
 * Cloudflare AI Gateway as an upstream: its OpenAI-compatible `/compat/chat/completions`, models
 * named `<provider>/<model>` (`openai/gpt-4o-mini`, `workers-ai/@cf/…`), the upstream provider's key
 * as Bearer.
 */
export function cloudflareAIGateway(params: CloudflareAIGatewayParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'cloudflare-ai-gateway',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: "Cloudflare AI Gateway as an upstream: chat through a gateway's OpenAI-compatible /compat endpoint (models as <provider>/<model>).",
      params: {
        type: 'object',
        additionalProperties: false,
        properties: {
          baseUrl: { type: 'string', pattern: '^https?://' },
          accountId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
          gatewayId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
        },
      },
    },
    params,
    create() {
      const baseUrl = (params.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
      const rooted = (url: string, target: Parameters<typeof compatRoot>[0]) => compatRoot(target, params) + url.slice(target.baseUrl.length);
      return {
        id: 'cloudflare-ai-gateway',
        name: 'Cloudflare AI Gateway',
        operations: { chat: withUpstreamUrl(compatibleChatAdapter({ provider: 'cloudflare-ai-gateway' }), rooted) },
        capabilities: { developerRole: () => false },
        baseUrl: () => baseUrl,
        auth(_request, target): Record<string, string> {
          if (!target.credentials.apiKey) {
            throw errors.authentication("Cloudflare AI Gateway needs \"Authorization: Bearer <the upstream provider's API key>\".", { code: 'missing_provider_credentials' });
          }
          return { authorization: `Bearer ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization', 'cf-aig-authorization'],
        mapError: mapAIGatewayError,
      };
    },
  };
}
