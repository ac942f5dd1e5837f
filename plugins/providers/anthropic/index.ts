import type { ProviderRegistration } from '../../../core/spec/index.js';
import { anthropicBatches } from './anthropic-batches.js';
import { anthropicChat } from './anthropic-chat.js';
import { ANTHROPIC_CONTENT_PARTS } from './anthropic-chat-request.js';
import { mapAnthropicError } from './anthropic-error.js';
import { anthropicMessages } from './anthropic-messages.js';

export { ANTHROPIC_CONTENT_PARTS, toAnthropicBody, checkAnthropicRequest, type AnthropicRequestBody } from './anthropic-chat-request.js';
export { fromAnthropicResponse, mapAnthropicUsage, mapAnthropicStopReason } from './anthropic-chat-response.js';
export { createAnthropicStreamMapper } from './anthropic-stream.js';
export { mapAnthropicError, parseAnthropicError, describeReply } from './anthropic-error.js';
export { anthropicHeaders, createMessagesStreamMapper, messageOf, messagesEventStep, tokenCountOf } from './anthropic-messages.js';

/** `max_tokens` sent when the client gives none (Anthropic requires it). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicParams {
  /** Default base URL (default `https://api.anthropic.com/v1`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
  /** The `anthropic-version` header (default `2023-06-01`). */
  version?: string;
  /** `max_tokens` when the request has none (default 4096; the thinking budget is added when thinking is on). */
  defaultMaxTokens?: number;
}

/**
 * Anthropic (Messages API): chat, plain and streamed, with tools, images and extended thinking; and
 * the Messages API itself natively (`POST /v1/messages`, count_tokens); OpenAI's batches translated
 * to Message Batches.
 */
export function anthropic(params: AnthropicParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'anthropic',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Anthropic Messages API: chat plain and streamed, tools, images, extended thinking, prompt-cache usage; the Messages API natively.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: {
          baseUrl: { type: 'string', pattern: '^https?://' },
          version: { type: 'string', minLength: 1 },
          defaultMaxTokens: { type: 'integer', minimum: 1 },
        },
      },
    },
    params,
    // LiteLLM's names, for `llm-gateway import litellm`: its prefix, and bare Claude model names.
    foreignNames: { litellm: ['anthropic'], litellmBareModels: /^claude/ },
    create() {
      const baseUrl = (params.baseUrl ?? 'https://api.anthropic.com/v1').replace(/\/+$/, '');
      const version = params.version ?? '2023-06-01';
      return {
        id: 'anthropic',
        name: 'Anthropic',
        operations: { chat: anthropicChat({ defaultMaxTokens: params.defaultMaxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS }), messages: anthropicMessages, batches: anthropicBatches },
        capabilities: { developerRole: () => false, contentParts: () => ANTHROPIC_CONTENT_PARTS },
        baseUrl: () => baseUrl,
        auth(request, target): Record<string, string> {
          // A native Messages request carries the version its client asked for (set by its mapping);
          // a version that arrived through x-gateway-forward-headers never replaces the configured one.
          const forwarded = (target.headers['x-gateway-forward-headers'] ?? '').toLowerCase().split(',').some((name) => name.trim() === 'anthropic-version');
          const mapped = forwarded ? undefined : request.headers['anthropic-version'];
          const headers: Record<string, string> = { 'anthropic-version': mapped ?? version };
          if (target.credentials.apiKey) headers['x-api-key'] = target.credentials.apiKey;
          return headers;
        },
        authHeaders: ['x-api-key', 'authorization'],
        mapError: mapAnthropicError,
        // Message Batches are billed at 50% of the standard price (Anthropic's pricing page).
        pricing: { catalogProvider: 'anthropic', batchDiscount: 0.5 },
      };
    },
  };
}
