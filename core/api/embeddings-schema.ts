import type { EmbeddingRequest } from '../spec/unified.js';
import { validateTextOrTokens } from './completions-schema.js';
import { invalid, optionalEnum, optionalNumber, optionalString, requireString } from './validate.js';

const MAX_INPUTS = 2048;

/**
 * Validates an embedding request against the API spec: `input` a non-empty string, or an array of
 * 1 to 2048 strings (none empty), token ids or token-id arrays. Unknown fields are kept.
 */
export function validateEmbeddingRequest(body: Record<string, unknown>): EmbeddingRequest {
  requireString(body.model, 'model', { nonEmpty: true });
  const input = body.input;
  if (input === undefined || input === null) throw invalid('is required.', { param: 'input' });
  if (input === '') throw invalid('must not be an empty string.', { param: 'input' });
  validateTextOrTokens(input, 'input');
  // An array of strings or of token-id arrays is a batch of inputs: at most 2048 of them. A flat
  // array of token ids is one input, bounded by the model's token limit instead.
  if (Array.isArray(input) && typeof input[0] !== 'number') {
    if (input.length > MAX_INPUTS) throw invalid(`must hold at most ${MAX_INPUTS} inputs, got ${input.length}.`, { param: 'input' });
    const empty = input.indexOf('');
    if (empty >= 0) throw invalid('must not be an empty string.', { param: `input[${empty}]` });
  }
  optionalEnum(body.encoding_format, 'encoding_format', ['float', 'base64']);
  optionalNumber(body.dimensions, 'dimensions', { min: 1, integer: true });
  optionalString(body.user, 'user');
  return body as EmbeddingRequest;
}
