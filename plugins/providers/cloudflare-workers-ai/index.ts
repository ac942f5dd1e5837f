import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { mapCloudflareError } from './cloudflare-error.js';
import { cloudflareChat, cloudflareEmbed, cloudflarePassthroughUrl } from './cloudflare-operations.js';
export { ACCOUNT_HEADER } from './cloudflare-target.js';

export interface CloudflareWorkersAIParams {
  /** Cloudflare's API root (default `https://api.cloudflare.com/client/v4`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
  /** The account used when a request names none in `x-gateway-cloudflare-account-id`. */
  accountId?: string;
}

const DEFAULT_BASE_URL = 'https://api.cloudflare.com/client/v4';

/** Cloudflare Workers AI: chat (plain, streamed, tools) and embeddings on an account, a Cloudflare API token as Bearer. */
export function cloudflareWorkersAI(params: CloudflareWorkersAIParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'cloudflare-workers-ai',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: "Cloudflare Workers AI: chat and embeddings through the account's OpenAI-compatible endpoints; /v1/run/<model> passes through to the native run API.",
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { baseUrl: { type: 'string', pattern: '^https?://' }, accountId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
      },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['cloudflare'] },
    create() {
      const baseUrl = (params.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
      return {
        id: 'cloudflare-workers-ai',
        name: 'Cloudflare Workers AI',
        operations: { chat: cloudflareChat(params.accountId), embed: cloudflareEmbed(params.accountId) },
        capabilities: { developerRole: () => false },
        baseUrl: () => baseUrl,
        auth(_request, target) {
          if (!target.credentials.apiKey) {
            throw errors.authentication('Cloudflare Workers AI needs "Authorization: Bearer <Cloudflare API token>".', { code: 'missing_provider_credentials' });
          }
          return { authorization: `Bearer ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization'],
        mapError: mapCloudflareError,
        passthroughUrl: cloudflarePassthroughUrl(params.accountId),
        pricing: { catalogProvider: 'cloudflare' },
        modelCatalogue: { catalogProvider: 'cloudflare' },
      };
    },
  };
}
