import { type RerankAdapter, type RerankResponse, type RerankResult, rerankDocumentTexts } from '../../../core/spec/index.js';
import type { RerankQuirks } from './compatible-manifest.js';

interface RerankAnswer {
  id?: string;
  model?: string;
  results?: Array<RerankResult & Record<string, unknown>>;
  data?: Array<RerankResult & Record<string, unknown>>;
  usage?: { prompt_tokens?: unknown; total_tokens?: unknown };
}

/**
 * The rerank adapter of a server with a Jina-style `/rerank` (Jina, vLLM, llama.cpp, and Voyage
 * with its renamed fields): documents go up as texts, `return_documents` stays in the gateway (it
 * adds the documents itself), results come back from `results` (or the manifest's field).
 */
export function compatibleRerankAdapter(options: { provider: string; path?: string; quirks?: RerankQuirks }): RerankAdapter {
  const quirks = options.quirks ?? {};
  const path = options.path ?? '/rerank';
  const resultsField = quirks.resultsField ?? 'results';
  const scoreField = quirks.scoreField ?? 'relevance_score';
  return {
    toUpstream(request, target) {
      const { return_documents: _returnDocuments, ...rest } = request;
      const body: Record<string, unknown> = { ...rest, documents: rerankDocumentTexts(request) };
      for (const [from, to] of Object.entries(quirks.renamedFields ?? {})) {
        if (from in body) {
          body[to] = body[from];
          delete body[from];
        }
      }
      return { method: 'POST', url: `${target.baseUrl}${path}`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
    },

    fromUpstream(raw, request): RerankResponse {
      const answer = (raw ?? {}) as RerankAnswer;
      const results = answer[resultsField as 'results' | 'data'];
      if (!Array.isArray(results)) throw new TypeError(`${options.provider} rerank response without ${resultsField}`);
      const usage = answer.usage ?? {};
      const total = typeof usage.total_tokens === 'number' ? usage.total_tokens : undefined;
      const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : total;
      // The provider's other fields are kept: strict answers drop them, others carry them.
      const { results: _results, data: _data, usage: _usage, ...rest } = answer;
      return {
        ...rest,
        model: answer.model ?? request.model,
        results: results.map((result) => ({ index: result.index, relevance_score: result[scoreField] as number })),
        ...(prompt !== undefined ? { usage: { prompt_tokens: prompt, total_tokens: total ?? prompt } } : {}),
      };
    },
  };
}
