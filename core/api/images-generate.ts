import { parseJsonObject, readBody } from '../http/body.js';
import type { TransformSlice } from '../pipeline/context.js';
import type { ImageGenerateAdapter, ProviderPlugin } from '../spec/provider.js';
import type { ImageGenerateRequest, ImageResponse } from '../spec/unified.js';
import { IMAGE_MODEL_A, validateImageGenerateRequest } from './images-generate-schema.js';
import { respondWithJson } from './json-response.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { pick } from './strict-fields.js';

/** OpenAI's image response schema (`created`, `data`, and the fields its newer image models add). */
const RESPONSE_FIELDS = ['created', 'data', 'background', 'output_format', 'quality', 'size', 'usage'];
const IMAGE_FIELDS = ['b64_json', 'url', 'revised_prompt'];

export function strictImageResponse(response: ImageResponse): ImageResponse {
  const strict = pick(response, RESPONSE_FIELDS);
  strict.data = (response.data ?? []).map((image) => pick(image, IMAGE_FIELDS));
  return strict;
}

/** Image operations count requests and images; token usage is kept when a model reports it. */
export function recordImageUsage(response: ImageResponse, transform: TransformSlice): void {
  transform.units = { requests: 1, images: Array.isArray(response.data) ? response.data.length : 0 };
  const usage = response.usage as { input_tokens?: unknown; output_tokens?: unknown; total_tokens?: unknown } | undefined;
  if (usage && typeof usage.input_tokens === 'number' && typeof usage.output_tokens === 'number') {
    const total = typeof usage.total_tokens === 'number' ? usage.total_tokens : usage.input_tokens + usage.output_tokens;
    transform.usage = { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: total };
  }
}

function requireAdapter(provider: ProviderPlugin): ImageGenerateAdapter {
  const adapter = provider.operations.imageGenerate;
  if (!adapter) throw unsupportedOperation(provider.id, 'imageGenerate', 'POST /v1/images/generations');
  return adapter;
}

/** `POST /v1/images/generations` (JSON). A missing model means image model A. */
export const imagesGenerate: OperationHandler = {
  name: 'imageGenerate',
  mapsErrors: true,

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateImageGenerateRequest(parseJsonObject(rawText));
    return { body, raw, rawText, model: typeof body.model === 'string' ? body.model : IMAGE_MODEL_A, streaming: false };
  },

  toUpstream(context, provider, target) {
    const adapter = requireAdapter(provider);
    const request = context.request.body as ImageGenerateRequest;
    adapter.validate?.(request);
    return adapter.toUpstream(request, target, context.request.raw);
  },

  respond: (context, provider, forward) =>
    respondWithJson(context, provider, forward, {
      map: (body, target, headers) => requireAdapter(provider).fromUpstream(body, context.request.body as ImageGenerateRequest, target, headers),
      strict: strictImageResponse,
      record: recordImageUsage,
    }),
};
