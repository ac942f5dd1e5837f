import { type EmbedAdapter, type EmbeddingRequest, errors } from '../../../core/spec/index.js';
import { vectorToBase64 } from '../../shared/chat-mapping.js';

/** Embed v2 (`POST /v2/embed`): texts up to 96 per call; `input_type` (required by v3+ models) defaults to `search_document`. */
function checkInput(request: EmbeddingRequest): undefined {
  const input = request.input;
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || !texts.every((item) => typeof item === 'string')) throw errors.invalidRequest('Cohere embeds text; token arrays are not supported.', { param: 'input', code: 'invalid_value' });
  if (texts.length > 96) throw errors.invalidRequest('Cohere embeds at most 96 texts per request.', { param: 'input', code: 'invalid_value' });
}

export const cohereEmbed: EmbedAdapter = {
  validate: checkInput,
  toUpstream(request, target) {
    checkInput(request);
    const body: Record<string, unknown> = {
      model: request.model,
      texts: typeof request.input === 'string' ? [request.input] : request.input,
      input_type: typeof request.input_type === 'string' ? request.input_type : 'search_document',
      embedding_types: ['float'],
    };
    if (typeof request.dimensions === 'number') body.output_dimension = request.dimensions;
    if (typeof request.truncate === 'string') body.truncate = request.truncate;
    return { method: 'POST', url: `${target.baseUrl}/embed`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  },
  fromUpstream(raw, request) {
    const value = (raw ?? {}) as { embeddings?: { float?: unknown } | unknown[]; meta?: { billed_units?: { input_tokens?: unknown } } };
    const vectors = Array.isArray(value.embeddings) ? value.embeddings : (value.embeddings as { float?: unknown } | undefined)?.float;
    if (!Array.isArray(vectors)) throw new TypeError('Cohere embed response without float embeddings');
    const tokens = typeof value.meta?.billed_units?.input_tokens === 'number' ? value.meta.billed_units.input_tokens : 0;
    const base64 = request.encoding_format === 'base64';
    return {
      object: 'list',
      data: (vectors as number[][]).map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? vectorToBase64(vector) : vector })),
      model: request.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  },
};
