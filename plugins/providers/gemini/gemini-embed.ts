import type { EmbedAdapter, EmbeddingResponse } from '../../../core/spec/index.js';
import { checkTextInput, encodeEmbedding, textInputs } from '../google-shared/index.js';
import { geminiModelPath } from './gemini-chat.js';

interface BatchEmbedResponse {
  embeddings?: Array<{ values?: number[] }>;
  usageMetadata?: { promptTokenCount?: number; totalTokenCount?: number };
}

/** Google AI Studio embeddings: every input in one `batchEmbedContents` call. */
export const geminiEmbed: EmbedAdapter = {
  validate: checkTextInput,
  toUpstream(request, target) {
    checkTextInput(request);
    const model = geminiModelPath(request.model);
    const requests = textInputs(request).map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(request.dimensions === undefined ? {} : { outputDimensionality: request.dimensions }),
    }));
    return {
      method: 'POST',
      url: `${target.baseUrl}/${model}:batchEmbedContents`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requests }),
    };
  },
  fromUpstream(body, request): EmbeddingResponse {
    const response = body as BatchEmbedResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.embeddings)) throw new TypeError('Gemini embedding response without embeddings');
    // batchEmbedContents reports no token counts; when a future answer carries usageMetadata it is used.
    const prompt = response.usageMetadata?.promptTokenCount ?? 0;
    return {
      object: 'list',
      data: response.embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(embedding.values ?? [], request.encoding_format) })),
      model: request.model,
      usage: { prompt_tokens: prompt, total_tokens: response.usageMetadata?.totalTokenCount ?? prompt },
    };
  },
};
