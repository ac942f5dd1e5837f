import type { ChatAdapter, ContentPartSupport } from '../../../core/spec/index.js';
import { ANTHROPIC_CONTENT_PARTS, checkAnthropicRequest, createAnthropicStreamMapper, fromAnthropicResponse, toAnthropicBody } from '../anthropic/index.js';
import { createGeminiStreamMapper, fromGeminiResponse, GOOGLE_CONTENT_PARTS, toGeminiBody } from '../google-shared/index.js';
import { publisherOf, vertexHeaders, vertexModelUrl } from './vertex-target.js';

/** The `anthropic_version` Vertex AI expects in the body of Claude requests. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** File and audio parts as the model's publisher takes them: Claude as Anthropic does, Gemini as Google does. */
export const vertexContentParts = (model: string): ContentPartSupport =>
  publisherOf(model).publisher === 'anthropic' ? ANTHROPIC_CONTENT_PARTS : GOOGLE_CONTENT_PARTS;

/**
 * Vertex AI chat: Gemini models through `generateContent` / `streamGenerateContent?alt=sse`, Claude
 * models through `rawPredict` / `streamRawPredict` with the Anthropic mapping (model named in the URL).
 */
export function vertexChat(options: { defaultMaxTokens: number }): ChatAdapter {
  const isAnthropic = (model: string) => publisherOf(model).publisher === 'anthropic';
  return {
    validate(request) {
      if (isAnthropic(request.model)) checkAnthropicRequest(request);
    },
    toUpstream(request, target) {
      if (isAnthropic(request.model)) {
        const { model: _model, ...body } = toAnthropicBody(request, options);
        const { url } = vertexModelUrl(target, request.model, request.stream ? 'streamRawPredict' : 'rawPredict');
        return { method: 'POST', url, headers: vertexHeaders(target), body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body }) };
      }
      const { url } = vertexModelUrl(target, request.model, request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
      return { method: 'POST', url, headers: vertexHeaders(target), body: JSON.stringify(toGeminiBody(request)) };
    },
    fromUpstream: (body, request, target) => (isAnthropic(request.model) ? fromAnthropicResponse(body, request, target) : fromGeminiResponse(body, request, target)),
    stream: {
      createMapper: (request, target) => (isAnthropic(request.model) ? createAnthropicStreamMapper(request, target) : createGeminiStreamMapper(request, target)),
    },
  };
}
