import type { ProviderRegistration } from '../../../core/spec/index.js';
import { GOOGLE_CONTENT_PARTS, googleCatalogueModelName, mapGoogleError } from '../google-shared/index.js';
import { geminiBatches } from './gemini-batches.js';
import { geminiChat, geminiGenerateContent } from './gemini-chat.js';
import { geminiEmbed } from './gemini-embed.js';
import { geminiModels } from './gemini-models.js';

export interface GeminiParams {
  /** Default base URL (default `https://generativelanguage.googleapis.com/v1beta`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/** Google Gemini (AI Studio API, key auth): chat plain and streamed, embeddings; OpenAI's batches translated to batch mode. */
export function gemini(params: GeminiParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'gemini',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Google Gemini API (AI Studio key): chat through generateContent / streamGenerateContent, the Gemini API natively, embeddings through batchEmbedContents, the model list.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { baseUrl: { type: 'string', pattern: '^https?://' } },
      },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['gemini'] },
    create() {
      const baseUrl = (params.baseUrl ?? 'https://generativelanguage.googleapis.com/v1beta').replace(/\/+$/, '');
      return {
        id: 'gemini',
        name: 'Google Gemini',
        operations: { chat: geminiChat, embed: geminiEmbed, generateContent: geminiGenerateContent, models: geminiModels, batches: geminiBatches },
        capabilities: { developerRole: () => false, contentParts: () => GOOGLE_CONTENT_PARTS, chatExtensions: () => ['thinking', 'top_k'] },
        baseUrl: () => baseUrl,
        auth(_request, target): Record<string, string> {
          return target.credentials.apiKey ? { 'x-goog-api-key': target.credentials.apiKey } : {};
        },
        authHeaders: ['x-goog-api-key', 'authorization'],
        mapError: mapGoogleError,
        modelCatalogue: { catalogProvider: 'google' },
        // Batch mode is billed at 50% of the standard price (the Gemini API's pricing page).
        pricing: { catalogProvider: 'google', modelName: googleCatalogueModelName, batchDiscount: 0.5 },
      };
    },
  };
}
