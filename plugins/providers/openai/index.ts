import { OPENAI_CONTENT_PARTS, type ProviderRegistration } from '../../../core/spec/index.js';
import { openAIChat } from './openai-chat.js';
import { openAICompletion } from './openai-completion.js';
import { openAIEmbed } from './openai-embed.js';
import { mapOpenAIError } from './openai-error.js';
import { openAIImageEdit, openAIImageVariation, openAITranscription, openAITranslation } from './openai-multipart.js';
import { openAIImageGenerate } from './openai-images.js';
import { openAIModels } from './openai-models.js';
import { openAIRealtime } from './openai-realtime.js';
import { openAIResponses } from './openai-responses.js';
import { openAISpeech } from './openai-speech.js';

export interface OpenAIParams {
  /** Default base URL (default `https://api.openai.com/v1`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
  /** Sent as `OpenAI-Organization`. */
  organization?: string;
  /** Sent as `OpenAI-Project`. */
  project?: string;
}

/**
 * The OpenAI provider: every operation of the unified API (chat and embeddings on the
 * OpenAI-compatible base; the others identity mappings); pass-through for everything else.
 */
export function openai(params: OpenAIParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'openai',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description:
        'OpenAI API (api.openai.com): chat and text completions (plain and streamed), the Responses API (natively), the Realtime API (WebSocket), embeddings, image generation, edits and variations, speech, transcription, translation, models; other /v1 paths pass through.',
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
    // LiteLLM's names, for `llm-gateway import litellm`: its prefixes, and the bare model names it sends here.
    foreignNames: { litellm: ['openai', 'text_completion_openai'], litellmBareModels: /^(gpt-|o\d|text-embedding-|chatgpt-|dall-e|tts-|whisper)/ },
    create() {
      const baseUrl = (params.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
      return {
        id: 'openai',
        name: 'OpenAI',
        operations: {
          chat: openAIChat,
          imageEdit: openAIImageEdit,
          imageVariation: openAIImageVariation,
          transcription: openAITranscription,
          translation: openAITranslation,
          completion: openAICompletion,
          embed: openAIEmbed,
          imageGenerate: openAIImageGenerate,
          speech: openAISpeech,
          models: openAIModels,
          responses: openAIResponses,
          realtime: openAIRealtime,
        },
        capabilities: { contentParts: () => OPENAI_CONTENT_PARTS },
        baseUrl: () => baseUrl,
        auth(_request, target) {
          const headers: Record<string, string> = {};
          if (target.credentials.apiKey) headers.authorization = `Bearer ${target.credentials.apiKey}`;
          if (params.organization) headers['openai-organization'] = params.organization;
          if (params.project) headers['openai-project'] = params.project;
          return headers;
        },
        authHeaders: ['authorization', 'openai-organization', 'openai-project'],
        mapError: mapOpenAIError,
        pricing: { catalogProvider: 'openai' },
      };
    },
  };
}
