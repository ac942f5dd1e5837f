import type { EmbedAdapter, EmbeddingResponse } from '../../../core/spec/index.js';
import { checkTextInput, encodeEmbedding, textInputs } from '../google-shared/index.js';
import { vertexHeaders, vertexModelUrl } from './vertex-target.js';

interface PredictResponse {
  predictions?: Array<{ embeddings?: { values?: number[]; statistics?: { token_count?: number } } }>;
}

/** Vertex AI text embeddings through the model's `predict` method (one instance per input). */
export const vertexEmbed: EmbedAdapter = {
  validate: checkTextInput,
  toUpstream(request, target) {
    checkTextInput(request);
    const body: Record<string, unknown> = { instances: textInputs(request).map((content) => ({ content })) };
    if (request.dimensions !== undefined) body.parameters = { outputDimensionality: request.dimensions };
    return { method: 'POST', url: vertexModelUrl(target, request.model, 'predict').url, headers: vertexHeaders(target), body: JSON.stringify(body) };
  },
  fromUpstream(body, request): EmbeddingResponse {
    const response = body as PredictResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.predictions)) throw new TypeError('Vertex AI predict response without predictions');
    let tokens = 0;
    const data = response.predictions.map((prediction, index) => {
      tokens += prediction.embeddings?.statistics?.token_count ?? 0;
      return { object: 'embedding' as const, index, embedding: encodeEmbedding(prediction.embeddings?.values ?? [], request.encoding_format) };
    });
    return { object: 'list', data, model: request.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
  },
};
