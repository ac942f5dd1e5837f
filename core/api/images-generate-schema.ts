import type { ImageGenerateRequest } from '../spec/unified.js';
import { characterCount, invalid, optionalEnum, optionalNumber, optionalString, requireString } from './validate.js';

/** The API spec's image model A (the older one, the default) and image model B. */
export const IMAGE_MODEL_A = 'dall-e-2';
export const IMAGE_MODEL_B = 'dall-e-3';

const SIZES_A = ['256x256', '512x512', '1024x1024'];
const SIZES_B = ['1024x1024', '1792x1024', '1024x1792'];

/** Fields sent as null are absent (OpenAI's SDKs send null for "use the default"). */
const given = (value: unknown): boolean => value !== undefined && value !== null;

/**
 * Validates an image generation request. Models A and B get every bound of the API spec; other
 * image models get the generic checks (prompt required and non-empty, `n` 1 to 10, fields of the
 * right type) and then whatever their provider plugin declares (`validate`).
 */
export function validateImageGenerateRequest(body: Record<string, unknown>): ImageGenerateRequest {
  if (given(body.model)) requireString(body.model, 'model', { nonEmpty: true });
  const model = given(body.model) ? (body.model as string) : IMAGE_MODEL_A;
  if (body.prompt === undefined || body.prompt === null) throw invalid('is required.', { param: 'prompt' });
  const prompt = requireString(body.prompt, 'prompt', { nonEmpty: true });
  optionalNumber(body.n, 'n', { min: 1, max: 10, integer: true, nullable: true });
  optionalEnum(body.response_format ?? undefined, 'response_format', ['url', 'b64_json']);
  optionalString(body.user, 'user');
  for (const field of ['quality', 'size', 'style'] as const) {
    if (given(body[field])) requireString(body[field], field);
  }

  if (model === IMAGE_MODEL_A) {
    if (characterCount(prompt) > 1000) throw invalid(`must be at most 1000 characters for ${model}, got ${characterCount(prompt)}.`, { param: 'prompt' });
    if (given(body.quality) && body.quality !== 'standard') {
      throw invalid(`${model} supports only 'standard'; 'hd' is for ${IMAGE_MODEL_B}.`, { param: 'quality' });
    }
    if (given(body.style)) throw invalid(`is supported only by ${IMAGE_MODEL_B}.`, { param: 'style' });
    if (given(body.size)) optionalEnum(body.size, 'size', SIZES_A);
  } else if (model === IMAGE_MODEL_B) {
    if (characterCount(prompt) > 4000) throw invalid(`must be at most 4000 characters for ${model}, got ${characterCount(prompt)}.`, { param: 'prompt' });
    if (given(body.n) && body.n !== 1) throw invalid(`${model} supports only n = 1, got ${body.n}.`, { param: 'n' });
    if (given(body.quality)) optionalEnum(body.quality, 'quality', ['standard', 'hd']);
    if (given(body.style)) optionalEnum(body.style, 'style', ['vivid', 'natural']);
    if (given(body.size)) optionalEnum(body.size, 'size', SIZES_B);
  }
  return body as ImageGenerateRequest;
}
