import type { ChatAdapter } from '../../../core/spec/index.js';
import { createGeminiStreamMapper, fromGeminiResponse, toGeminiBody } from '../google-shared/index.js';

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
