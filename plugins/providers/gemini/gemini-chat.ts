import type { ChatAdapter } from '../../../core/spec/index.js';
import { createGeminiStreamMapper, fromGeminiResponse, googleBody, googleGenerateContent, toGeminiBody } from '../google-shared/index.js';

/** The model path segment: `models/gemini-x` and `gemini-x` both name `gemini-x`. */
export const geminiModelPath = (model: string): string => `models/${encodeURIComponent(model.replace(/^models\//, ''))}`;

/** Google AI Studio chat: `generateContent`, streamed through `streamGenerateContent?alt=sse`. */
export const geminiChat: ChatAdapter = {
  toUpstream(request, target) {
    const method = request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return {
      method: 'POST',
      url: `${target.baseUrl}/${geminiModelPath(request.model)}:${method}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(toGeminiBody(request)),
    };
  },
  fromUpstream: fromGeminiResponse,
  stream: { createMapper: createGeminiStreamMapper },
};

/**
 * The Gemini API natively: the client's body as written to `models/{model}:{method}`. countTokens
 * takes the whole request (system instruction, tools) as `generateContentRequest`, naming the model.
 */
export const geminiGenerateContent = googleGenerateContent({
  url: (target, model, method) => `${target.baseUrl}/${geminiModelPath(model)}:${method}`,
  headers: () => ({ 'content-type': 'application/json' }),
  countBody: (request) => ({ generateContentRequest: { model: geminiModelPath(request.model), ...googleBody(request) } }),
});
