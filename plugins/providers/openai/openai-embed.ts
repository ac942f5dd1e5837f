import type { EmbedAdapter, EmbeddingResponse } from '../../../core/spec/index.js';
import { openAIJsonPost } from './openai-body.js';

/** OpenAI embeddings: identity; base64 vectors stay strings. */
export const openAIEmbed: EmbedAdapter = {
  toUpstream: (request, target, original) => openAIJsonPost('/embeddings', request, target, original),

  fromUpstream(body) {
    const response = body as EmbeddingResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.data)) {
      throw new TypeError('OpenAI embedding response without data');
    }
    return response;
  },
};
