import { withoutDefaults } from '../cache/cacheable.js';
import { parseJsonObject, readBody } from '../http/body.js';
import type { TransformSlice } from '../pipeline/context.js';
import { isRecord } from '../spec/is-record.js';
import type { ProviderPlugin, RerankAdapter } from '../spec/provider.js';
import type { RerankRequest, RerankResponse, RerankResult, Usage } from '../spec/unified.js';
import { respondWithJson } from './json-response.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { validateRerankRequest } from './rerank-schema.js';
import { pick } from './strict-fields.js';

const RESPONSE_FIELDS = ['id', 'model', 'results', 'usage'];
const RESULT_FIELDS = ['index', 'relevance_score', 'document'];
const USAGE_FIELDS = ['prompt_tokens', 'total_tokens', 'search_units'];

/** The rerank answer's documented fields only (Cohere's shape as the gateway answers it). */
export function strictRerankResponse(response: RerankResponse): RerankResponse {
  const strict = pick(response, RESPONSE_FIELDS);
  strict.results = (response.results ?? []).map((result) => pick(result, RESULT_FIELDS));
  if (response.usage && typeof response.usage === 'object') strict.usage = pick(response.usage, USAGE_FIELDS);
  return strict;
}

/**
 * The contract's answer from whatever order and count the provider gave: results best first (ties
 * by index), at most `top_n`, each with its document exactly when `return_documents` is true (the
 * document as the client sent it: a string as `{ text }`). A result whose index names no document
 * is the provider's fault.
 */
export function rankedAnswer(response: RerankResponse, request: RerankRequest): RerankResponse {
  if (!Array.isArray(response.results)) throw new TypeError('rerank answer without results');
  const results = response.results.map((result): RerankResult => {
    const { index, relevance_score: score } = result;
    if (!Number.isInteger(index) || index < 0 || index >= request.documents.length || typeof score !== 'number') {
      throw new TypeError(`rerank result with index ${String(index)} and score ${String(score)}`);
    }
    const { document: _document, ...rest } = result;
    if (request.return_documents !== true) return rest;
    const sent = request.documents[index];
    return { ...rest, document: typeof sent === 'string' ? { text: sent } : sent };
  });
  results.sort((first, second) => second.relevance_score - first.relevance_score || first.index - second.index);
  return { ...response, model: response.model || request.model, results: request.top_n === undefined ? results : results.slice(0, request.top_n) };
}

/** The usage a rerank answer reports, as tokens (for the log and pricing) and search units. */
function rerankUsage(response: RerankResponse): { usage?: Usage; searches?: number } {
  const usage = response.usage;
  if (!usage) return {};
  const tokens = usage.prompt_tokens ?? usage.total_tokens;
  return {
    ...(typeof tokens === 'number' ? { usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: usage.total_tokens ?? tokens } } : {}),
    ...(typeof usage.search_units === 'number' ? { searches: usage.search_units } : {}),
  };
}

function recordRerank(response: RerankResponse, transform: TransformSlice): void {
  const { usage, searches } = rerankUsage(response);
  if (usage) transform.usage = usage;
  transform.units = { requests: 1, ...(searches !== undefined ? { searches } : {}) };
  if (response.model) transform.model = response.model;
}

function requireAdapter(provider: ProviderPlugin): RerankAdapter {
  const adapter = provider.operations.rerank;
  if (!adapter) throw unsupportedOperation(provider.id, 'rerank', 'POST /v1/rerank');
  return adapter;
}

/** `POST /v1/rerank`: Cohere's shape on every provider that has a rerank API; answered best first. */
export const rerank: OperationHandler = {
  name: 'rerank',
  mapsErrors: true,

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateRerankRequest(parseJsonObject(rawText));
    return { body, raw, rawText, model: body.model, streaming: false };
  },

  toUpstream(context, provider, target) {
    const adapter = requireAdapter(provider);
    const request = context.request.body as RerankRequest;
    adapter.validate?.(request);
    return adapter.toUpstream(request, target, context.request.raw);
  },

  respond: (context, provider, forward) =>
    respondWithJson(context, provider, forward, {
      map(body, target, headers) {
        const request = context.request.body as RerankRequest;
        return rankedAnswer(requireAdapter(provider).fromUpstream(body, request, target, headers), request);
      },
      strict: strictRerankResponse,
      record: recordRerank,
    }),

  // Exact lookups only: a ranking is asked of exactly these documents.
  cache: {
    identity: (body) => (isRecord(body) ? withoutDefaults(body, { return_documents: false }) : undefined),
    storable: (answer) => Array.isArray((answer as RerankResponse).results) && (answer as RerankResponse).results.length > 0,
    usage(answer) {
      const response = answer as RerankResponse;
      const { usage } = rerankUsage(response);
      return { ...(usage ? { usage } : {}), ...(response.model ? { model: response.model } : {}) };
    },
    replay: async (context, answer) => ({ status: 200, headers: {}, body: { json: context.strict ? strictRerankResponse(answer as RerankResponse) : answer } }),
  },
};
