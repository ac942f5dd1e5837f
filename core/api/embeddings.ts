import { withoutDefaults } from '../cache/cacheable.js';
import { parseJsonObject, readBody } from '../http/body.js';
import { isRecord } from '../spec/is-record.js';
import type { EmbedAdapter, ProviderPlugin } from '../spec/provider.js';
import type { EmbeddingRequest, EmbeddingResponse } from '../spec/unified.js';
import { checkEmbeddingTokenLimit } from './embeddings-tokens.js';
import { validateEmbeddingRequest } from './embeddings-schema.js';
import { respondWithJson } from './json-response.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { pick } from './strict-fields.js';

const RESPONSE_FIELDS = ['object', 'data', 'model', 'usage'];
const ITEM_FIELDS = ['object', 'index', 'embedding'];
const USAGE_FIELDS = ['prompt_tokens', 'total_tokens'];

/** OpenAI's embedding response schema only. */
export function strictEmbeddingResponse(response: EmbeddingResponse): EmbeddingResponse {
  const strict = pick(response, RESPONSE_FIELDS);
  strict.data = (response.data ?? []).map((item) => pick(item, ITEM_FIELDS));
  if (response.usage && typeof response.usage === 'object') strict.usage = pick(response.usage, USAGE_FIELDS);
  return strict;
}

function requireAdapter(provider: ProviderPlugin): EmbedAdapter {
  const adapter = provider.operations.embed;
  if (!adapter) throw unsupportedOperation(provider.id, 'embed', 'POST /v1/embeddings');
  return adapter;
}

/** `POST /v1/embeddings`: float or base64 vectors; OpenAI embedding models' token limits checked before sending. */
export const embeddings: OperationHandler = {
  name: 'embed',
  mapsErrors: true,

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateEmbeddingRequest(parseJsonObject(rawText));
    await checkEmbeddingTokenLimit(body);
    return { body, raw, rawText, model: body.model, streaming: false };
  },

  toUpstream(context, provider, target) {
    const adapter = requireAdapter(provider);
    const request = context.request.body as EmbeddingRequest;
    adapter.validate?.(request);
    return adapter.toUpstream(request, target, context.request.raw);
  },

  respond: (context, provider, forward) =>
    respondWithJson(context, provider, forward, {
      map: (body, target, headers) => requireAdapter(provider).fromUpstream(body, context.request.body as EmbeddingRequest, target, headers),
      strict: strictEmbeddingResponse,
      record(response, transform) {
        const usage = response.usage;
        if (usage) transform.usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: usage.total_tokens };
        if (response.model) transform.model = response.model;
      },
    }),

  // Exact lookups only: an embedding is asked for a text's exact vector, never a near one.
  cache: {
    identity: (body) => (isRecord(body) ? withoutDefaults(body, { encoding_format: 'float' }) : undefined),
    storable: (answer) => Array.isArray((answer as EmbeddingResponse).data) && (answer as EmbeddingResponse).data.length > 0,
    usage(answer) {
      const { usage, model } = answer as EmbeddingResponse;
      return {
        ...(usage ? { usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: usage.total_tokens } } : {}),
        ...(model ? { model } : {}),
      };
    },
    replay: async (context, answer) => ({ status: 200, headers: {}, body: { json: context.strict ? strictEmbeddingResponse(answer as EmbeddingResponse) : answer } }),
  },
};
