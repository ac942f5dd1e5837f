import type { ProviderRegistration } from '../../../core/spec/index.js';
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from '../anthropic/index.js';
import { googleCatalogueModelName } from '../google-shared/index.js';
import { vertexChat, vertexContentParts } from './vertex-chat.js';
import { vertexEmbed } from './vertex-embed.js';
import { vertexGenerateContent, vertexMessages } from './vertex-messages.js';
import { mapVertexError } from './vertex-error.js';
import { VERTEX_BATCH_GCS_HEADER, vertexBatches } from './vertex-batches.js';
import { regionOf, vertexBaseUrl } from './vertex-target.js';

export interface VertexParams {
  /** `max_tokens` for Claude models when the request has none (default 4096). */
  defaultMaxTokens?: number;
  /** Where batch prediction jobs read and write when the request names none (`gs://bucket/prefix`; docs/batches.md). */
  batchGcsUri?: string;
}

export { VERTEX_BATCH_GCS_HEADER };

/** Google Vertex AI (the spec's cloud-b): Gemini and Claude chat, text embeddings. */
export function vertexAI(params: VertexParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'vertex-ai',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Google Vertex AI: Gemini (generateContent) and Claude (rawPredict) chat, plain and streamed; the Messages API natively for Claude; the Gemini API natively for Gemini; embeddings through predict; OpenAI batches as Gemini batch prediction jobs over Cloud Storage.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { defaultMaxTokens: { type: 'integer', minimum: 1 }, batchGcsUri: { type: 'string', pattern: '^gs://' } },
      },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['vertex_ai'] },
    create() {
      return {
        id: 'vertex-ai',
        name: 'Google Vertex AI',
        operations: {
          chat: vertexChat({ defaultMaxTokens: params.defaultMaxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS }), embed: vertexEmbed, messages: vertexMessages, generateContent: vertexGenerateContent,
          batches: vertexBatches(params.batchGcsUri ? { gcsUri: params.batchGcsUri } : {}),
        },
        // Gemini reads the unified thinking budget and top_k (Claude takes the Messages API natively).
        capabilities: { developerRole: () => false, contentParts: vertexContentParts, chatExtensions: () => ['thinking', 'top_k'] },
        baseUrl: (headers) => vertexBaseUrl(regionOf(headers)),
        auth(_request, target): Record<string, string> {
          return target.credentials.apiKey ? { authorization: `Bearer ${target.credentials.apiKey}` } : {};
        },
        authHeaders: ['authorization', 'x-goog-api-key'],
        mapError: mapVertexError,
        // The catalogue's Google prices fall back to Anthropic's for the Claude models Vertex serves.
        modelCatalogue: { catalogProvider: 'google-vertex' },
        // Batch prediction is billed at 50% of the online price (Vertex AI's pricing page).
        pricing: { catalogProvider: 'google', modelName: googleCatalogueModelName, batchDiscount: 0.5 },
      };
    },
  };
}
