import type { ProviderRegistration } from '../../../core/spec/index.js';
import { compatibleEmbedAdapter } from '../openai-compatible/index.js';
import { openAIChat } from './openai-chat.js';
import { mapOpenAIError } from './openai-error.js';

export interface OpenAIParams {
  /** Default base URL (default `https://api.openai.com/v1`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
  /** Sent as `OpenAI-Organization`. */
  organization?: string;
  /** Sent as `OpenAI-Project`. */
  project?: string;
}

const openAIEmbed = compatibleEmbedAdapter({ provider: 'openai' });

/** The OpenAI provider: chat (plain and streamed) and embeddings; pass-through for everything else. */
export function openai(params: OpenAIParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'openai',
      kind: 'provider',
      version: '1.0.0',
      description: 'OpenAI API (api.openai.com): chat completions, plain and streamed, and embeddings; other /v1 paths pass through.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: {
          baseUrl: { type: 'string', pattern: '^https?://' },
          organization: { type: 'string', minLength: 1 },
          project: { type: 'string', minLength: 1 },
        },
      },
    },
    params,
    create() {
      const baseUrl = (params.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
      return {
        id: 'openai',
        name: 'OpenAI',
        operations: { chat: openAIChat, embed: openAIEmbed },
        baseUrl: () => baseUrl,
        auth(_request, target) {
          const headers: Record<string, string> = {};
          if (target.credentials.apiKey) headers.authorization = `Bearer ${target.credentials.apiKey}`;
          if (params.organization) headers['openai-organization'] = params.organization;
          if (params.project) headers['openai-project'] = params.project;
          return headers;
        },
        mapError: mapOpenAIError,
      };
    },
  };
}
