import { type ProviderTarget, type RerankAdapter, type RerankResponse, rerankDocumentTexts } from '../../../core/spec/index.js';

interface BedrockRerankAnswer {
  results?: Array<{ index?: unknown; relevanceScore?: unknown }>;
}

/**
 * The Agents for Bedrock runtime's host for the chat runtime's base URL
 * (`bedrock-runtime.<region>` → `bedrock-agent-runtime.<region>`); a custom host is used as given.
 */
export function agentRuntimeUrl(target: ProviderTarget): string {
  return target.customHost ? target.baseUrl : target.baseUrl.replace('://bedrock-runtime.', '://bedrock-agent-runtime.');
}

/** The model's ARN: as given when it is one, else the foundation model's in the request's region. */
export function rerankModelArn(model: string, region: string): string {
  return model.startsWith('arn:') ? model : `arn:aws:bedrock:${region}::foundation-model/${model}`;
}

/**
 * Rerank through the Agents for Bedrock runtime's `POST /rerank` (Amazon Rerank and Cohere Rerank
 * models, signed with SigV4 for the `bedrock` service like every Bedrock call): one text query,
 * inline text documents, `numberOfResults` from `top_n`. The answer's `relevanceScore` becomes
 * `relevance_score`; Bedrock reports no usage in the body, so the request is counted, not priced by
 * the token.
 */
export function bedrockRerank(regionOf: (headers: ProviderTarget['headers']) => string): RerankAdapter {
  return {
    toUpstream(request, target) {
      const configuration: Record<string, unknown> = { modelConfiguration: { modelArn: rerankModelArn(request.model, regionOf(target.headers)) } };
      if (request.top_n !== undefined) configuration.numberOfResults = Math.min(request.top_n, request.documents.length);
      const body = {
        queries: [{ type: 'TEXT', textQuery: { text: request.query } }],
        sources: rerankDocumentTexts(request).map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
        rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: configuration },
      };
      return { method: 'POST', url: `${agentRuntimeUrl(target)}/rerank`, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) };
    },
    fromUpstream(raw, request): RerankResponse {
      const value = (raw ?? {}) as BedrockRerankAnswer;
      if (!Array.isArray(value.results)) throw new TypeError('Bedrock rerank response without results');
      return {
        model: request.model,
        results: value.results.map((result) => ({ index: result.index as number, relevance_score: result.relevanceScore as number })),
      };
    },
  };
}
