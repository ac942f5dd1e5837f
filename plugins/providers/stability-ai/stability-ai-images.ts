import { type Clock, errors, type ImageGenerateAdapter, type ImageGenerateRequest, type ImageResponse, isRecord, nowSeconds } from '../../../core/spec/index.js';
import { formBody } from '../../shared/form-body.js';

/** Stability's aspect ratios, as width / height. */
const ASPECT_RATIOS: ReadonlyArray<readonly [string, number]> = [
  ['21:9', 21 / 9],
  ['16:9', 16 / 9],
  ['3:2', 3 / 2],
  ['5:4', 5 / 4],
  ['1:1', 1],
  ['4:5', 4 / 5],
  ['2:3', 2 / 3],
  ['9:16', 9 / 16],
  ['9:21', 9 / 21],
];

/** The Stable Diffusion 3.5 models served by `/generate/sd3` (the model goes in the form). */
export const SD3_MODELS = ['sd3.5-large', 'sd3.5-large-turbo', 'sd3.5-medium', 'sd3.5-flash', 'sd3-large', 'sd3-large-turbo', 'sd3-medium'];

/**
 * The generate endpoint for a model: `ultra`, `core`, or `sd3` with the model named. OpenAI's image
 * model names (and none) mean Stable Image Core, the general-purpose tier.
 */
export function endpointOf(model: string | undefined): { path: 'ultra' | 'core' | 'sd3'; model?: string } {
  if (model === undefined || model === 'dall-e-2' || model === 'dall-e-3' || model === 'core' || model === 'stable-image-core') return { path: 'core' };
  if (model === 'ultra' || model === 'stable-image-ultra') return { path: 'ultra' };
  if (SD3_MODELS.includes(model)) return { path: 'sd3', model };
  throw errors.invalidRequest(`Stability AI has no image model "${model.slice(0, 60)}": use stable-image-ultra, stable-image-core or ${SD3_MODELS.join(', ')}.`, {
    param: 'model',
    code: 'invalid_value',
  });
}

/** `WIDTHxHEIGHT` as the nearest of Stability's aspect ratios. */
export function aspectRatioOf(size: string): string {
  const match = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  if (!match) throw errors.invalidRequest(`size must be WIDTHxHEIGHT (e.g. 1024x1024), got "${size.slice(0, 40)}".`, { param: 'size', code: 'invalid_value' });
  const ratio = Number(match[1]) / Number(match[2]);
  return ASPECT_RATIOS.reduce((best, candidate) => (Math.abs(Math.log(candidate[1] / ratio)) < Math.abs(Math.log(best[1] / ratio)) ? candidate : best))[0];
}

/** The form Stability takes for a unified image request; refuses what it cannot carry. */
export function toStabilityForm(request: ImageGenerateRequest): { path: string; fields: Record<string, string> } {
  if (request.n !== undefined && request.n !== null && request.n !== 1) {
    throw errors.invalidRequest('Stability AI generates one image per request: n must be 1.', { param: 'n', code: 'unsupported_parameter' });
  }
  if (request.response_format === 'url') {
    throw errors.invalidRequest('Stability AI answers image bytes, not URLs: use response_format "b64_json" (or leave it out).', { param: 'response_format', code: 'unsupported_parameter' });
  }
  const endpoint = endpointOf(request.model);
  const fields: Record<string, string> = { prompt: request.prompt };
  if (endpoint.model) fields.model = endpoint.model;
  if (typeof request.size === 'string' && request.size !== 'auto') fields.aspect_ratio = aspectRatioOf(request.size);
  const format = request.output_format;
  if (format !== undefined) {
    if (format !== 'png' && format !== 'jpeg' && format !== 'webp') throw errors.invalidRequest('output_format must be png, jpeg or webp.', { param: 'output_format', code: 'invalid_value' });
    fields.output_format = format;
  } else {
    fields.output_format = 'png';
  }
  // Stability's own fields, passed as the client named them.
  for (const field of ['negative_prompt', 'seed', 'style_preset', 'cfg_scale']) {
    const value = request[field];
    if (typeof value === 'string' || typeof value === 'number') fields[field] = String(value);
  }
  return { path: `/stable-image/generate/${endpoint.path}`, fields };
}

/** Stability's JSON answer (`{image, finish_reason, seed}`) as OpenAI's image response. */
export function fromStability(body: unknown, clock?: Clock): ImageResponse {
  if (!isRecord(body) || typeof body.image !== 'string') throw new TypeError('Stability AI answer without image');
  const image: ImageResponse['data'][number] & Record<string, unknown> = { b64_json: body.image };
  // A filtered image comes back blurred with CONTENT_FILTERED: said on the image, dropped by strict answers.
  if (typeof body.finish_reason === 'string' && body.finish_reason !== 'SUCCESS') image.finish_reason = body.finish_reason;
  if (typeof body.seed === 'number') image.seed = body.seed;
  return { created: nowSeconds(clock), data: [image] };
}

/** `POST /v1/images/generations` → `POST /v2beta/stable-image/generate/{ultra|core|sd3}` (multipart, JSON answer). */
export function stabilityImageGenerate(clock?: Clock): ImageGenerateAdapter {
  return {
    validate(request) {
      toStabilityForm(request);
      return undefined;
    },
    toUpstream(request, target) {
      const { path, fields } = toStabilityForm(request);
      const { body, contentType } = formBody(fields);
      return { method: 'POST', url: `${target.baseUrl}${path}`, headers: { 'content-type': contentType, accept: 'application/json' }, body };
    },
    fromUpstream: (body) => fromStability(body, clock),
  };
}
