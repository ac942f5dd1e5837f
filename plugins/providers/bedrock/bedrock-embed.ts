import { type EmbedAdapter, type EmbeddingRequest, type EmbeddingResponse, errors } from '../../../core/spec/index.js';
import { vectorToBase64 } from '../../shared/chat-mapping.js';
import { modelPath } from './bedrock-request.js';

/**
 * Embeddings through InvokeModel with the model's own body: Titan text models (one text per
 * request, `inputText`) and Cohere embed models (`texts`, up to 96, `input_type` required).
 */
const isCohere = (model: string): boolean => /(^|\.)cohere\.embed/.test(model);

const texts = (input: EmbeddingRequest['input']): string[] | undefined =>
  typeof input === 'string' ? [input] : Array.isArray(input) && input.every((item) => typeof item === 'string') ? (input as string[]) : undefined;

/** Refuses inputs the model cannot embed (400 naming `input`). */
function checkInput(request: EmbeddingRequest): undefined {
  const list = texts(request.input);
  if (!list) throw errors.invalidRequest('Bedrock embedding models take text; token arrays are not supported.', { param: 'input', code: 'invalid_value' });
  if (!isCohere(request.model) && list.length !== 1) {
    throw errors.invalidRequest('Titan embedding models embed one text per request; send a single string.', { param: 'input', code: 'invalid_value' });
  }
  if (isCohere(request.model) && list.length > 96) throw errors.invalidRequest('Cohere embedding models on Bedrock take at most 96 texts per request.', { param: 'input', code: 'invalid_value' });
}

function body(request: EmbeddingRequest): Record<string, unknown> {
  const list = texts(request.input)!;
  if (isCohere(request.model)) {
    const out: Record<string, unknown> = { texts: list, input_type: typeof request.input_type === 'string' ? request.input_type : 'search_document' };
    if (typeof request.truncate === 'string') out.truncate = request.truncate;
    if (typeof request.dimensions === 'number') out.output_dimension = request.dimensions;
    return out;
  }
  const out: Record<string, unknown> = { inputText: list[0] };
  if (typeof request.dimensions === 'number') out.dimensions = request.dimensions;
  if (typeof request.normalize === 'boolean') out.normalize = request.normalize;
  return out;
}

function vectors(value: Record<string, unknown>, cohere: boolean): number[][] {
  if (!cohere) {
    if (!Array.isArray(value.embedding)) throw new TypeError('Titan embedding response without embedding');
    return [value.embedding as number[]];
  }
  const embeddings = value.embeddings as unknown;
  if (Array.isArray(embeddings)) return embeddings as number[][];
  const floats = (embeddings as { float?: unknown } | undefined)?.float;
  if (Array.isArray(floats)) return floats as number[][];
  throw new TypeError('Cohere embedding response without embeddings');
}

export const bedrockEmbed: EmbedAdapter = {
  validate: checkInput,
  toUpstream(request, target) {
    checkInput(request);
    return { method: 'POST', url: modelPath(target.baseUrl, request.model, 'invoke'), headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body(request)) };
  },
  fromUpstream(raw, request, _target, headers = {}): EmbeddingResponse {
    const value = (raw ?? {}) as Record<string, unknown>;
    const cohere = isCohere(request.model);
    const base64 = request.encoding_format === 'base64';
    // Titan counts input tokens in its body; InvokeModel reports them in a response header for every model.
    const header = Number(headers['x-amzn-bedrock-input-token-count']);
    const tokens = typeof value.inputTextTokenCount === 'number' ? value.inputTextTokenCount : Number.isInteger(header) ? header : 0;
    return {
      object: 'list',
      data: vectors(value, cohere).map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? vectorToBase64(vector) : vector })),
      model: request.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  },
};
