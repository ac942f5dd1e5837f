import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { cohereChat } from './cohere-chat.js';
import { cohereEmbed } from './cohere-embed.js';
import { mapCohereError } from './cohere-error.js';
import { cohereRerank } from './cohere-rerank.js';

export interface CohereParams {
  /** Default base URL (default `https://api.cohere.com/v2`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/** Cohere: Chat v2 (plain and streamed, tools), Embed v2 and Rerank v2, Bearer key. */
export function cohere(params: CohereParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'cohere',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Cohere: Chat v2 (plain and streamed, tool calls), Embed v2 and Rerank v2.',
      params: { type: 'object', additionalProperties: false, properties: { baseUrl: { type: 'string', pattern: '^https?://' } } },
    },
    params,
    // LiteLLM's prefixes, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['cohere', 'cohere_chat'] },
    create() {
      const baseUrl = (params.baseUrl ?? 'https://api.cohere.com/v2').replace(/\/+$/, '');
      return {
        id: 'cohere',
        name: 'Cohere',
        operations: { chat: cohereChat, embed: cohereEmbed, rerank: cohereRerank },
        // No developer role upstream: the core sends developer messages as system.
        capabilities: { developerRole: () => false, chatExtensions: () => ['thinking'] },
        baseUrl: () => baseUrl,
        auth(_request, target) {
          if (!target.credentials.apiKey) throw errors.authentication('Cohere needs "Authorization: Bearer <Cohere API key>".', { code: 'missing_provider_credentials' });
          return { authorization: `Bearer ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization'],
        mapError: mapCohereError,
        pricing: { catalogProvider: 'cohere' },
      };
    },
  };
}
