import type { CompletionAdapter, CompletionResponse } from '../../../core/spec/index.js';
import { openAIStreamablePost } from './openai-body.js';
import { createOpenAIStreamMapper } from './openai-stream.js';

/** OpenAI text completions: identity, streams as chat (usage always asked for). */
export const openAICompletion: CompletionAdapter = {
  toUpstream: (request, target, original) => openAIStreamablePost('/completions', request, target, original),

  fromUpstream(body) {
    const response = body as CompletionResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.choices)) {
      throw new TypeError('OpenAI completion response without choices');
    }
    return response;
  },

  stream: {
    createMapper: () => createOpenAIStreamMapper<CompletionResponse>(),
  },
};
