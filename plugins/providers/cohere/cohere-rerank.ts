import { type RerankAdapter, type RerankResponse, rerankDocumentTexts } from '../../../core/spec/index.js';

/** Fields of the unified request Cohere's Rerank v2 takes as they are (`return_documents` is the gateway's: v2 never echoes documents). */
const PASSED_FIELDS = ['top_n', 'max_tokens_per_doc'] as const;

interface CohereRerankAnswer {
  id?: string;
  results?: Array<{ index: number; relevance_score: number }>;
  meta?: { billed_units?: { search_units?: unknown; input_tokens?: unknown } };
}

/** Rerank v2 (`POST /v2/rerank`): documents as texts; billed in search units (`meta.billed_units.search_units`). */
export const cohereRerank: RerankAdapter = {
  toUpstream(request, target) {
    const body: Record<string, unknown> = { model: request.model, query: request.query, documents: rerankDocumentTexts(request) };
    for (const field of PASSED_FIELDS) if (request[field] !== undefined) body[field] = request[field];
    return { method: 'POST', url: `${target.baseUrl}/rerank`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  },
  fromUpstream(raw, request): RerankResponse {
    const value = (raw ?? {}) as CohereRerankAnswer;
    if (!Array.isArray(value.results)) throw new TypeError('Cohere rerank response without results');
    const billed = value.meta?.billed_units;
    const usage: NonNullable<RerankResponse['usage']> = {};
    if (typeof billed?.search_units === 'number') usage.search_units = billed.search_units;
    if (typeof billed?.input_tokens === 'number') Object.assign(usage, { prompt_tokens: billed.input_tokens, total_tokens: billed.input_tokens });
    return {
      ...(value.id ? { id: value.id } : {}),
      model: request.model,
      results: value.results.map(({ index, relevance_score }) => ({ index, relevance_score })),
      usage,
    };
  },
};
