import { type EmbeddingRequest, errors } from '../../../core/spec/index.js';
import { vectorToBase64 } from '../../shared/chat-mapping.js';

/** Google's embedding APIs take text only: token-array inputs are refused. */
export function checkTextInput(request: EmbeddingRequest): undefined {
  const input = request.input;
  if (typeof input === 'string') return;
  if (Array.isArray(input) && input.every((entry) => typeof entry === 'string')) return;
  throw errors.invalidRequest('This provider embeds text only: send a string or an array of strings, not token arrays.', { param: 'input', code: 'invalid_value' });
}

export const textInputs = (request: EmbeddingRequest): string[] => (typeof request.input === 'string' ? [request.input] : (request.input as string[]));

/** A float vector as OpenAI's `encoding_format: base64` gives it: little-endian float32 bytes. */
export function encodeEmbedding(values: number[], format: EmbeddingRequest['encoding_format']): number[] | string {
  return format === 'base64' ? vectorToBase64(values) : values;
}
