import { errors, type ImageGenerateAdapter, type ImageResponse } from '../../../core/spec/index.js';
import { openAIJsonPost } from './openai-body.js';

/** OpenAI's GPT image models (beyond the spec's dall-e-2 / dall-e-3, which the core checks). */
const GPT_IMAGE = /^gpt-image-/;
const GPT_IMAGE_SIZES = ['auto', '1024x1024', '1536x1024', '1024x1536'];
const GPT_IMAGE_QUALITIES = ['auto', 'low', 'medium', 'high'];
const GPT_IMAGE_MAX_PROMPT = 32_000;

const listed = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');

/** OpenAI image generation: identity; its GPT image models' own bounds are declared here. */
export const openAIImageGenerate: ImageGenerateAdapter = {
  toUpstream: (request, target, original) => openAIJsonPost('/images/generations', request, target, original),

  fromUpstream(body) {
    const response = body as ImageResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.data)) {
      throw new TypeError('OpenAI image response without data');
    }
    return response;
  },

  validate(request) {
    if (!request.model || !GPT_IMAGE.test(request.model)) return;
    if (request.prompt.length > GPT_IMAGE_MAX_PROMPT) {
      throw errors.invalidRequest(`${request.model} accepts prompts of at most ${GPT_IMAGE_MAX_PROMPT} characters.`, { param: 'prompt', code: 'invalid_value' });
    }
    if (request.size != null && !GPT_IMAGE_SIZES.includes(request.size)) {
      throw errors.invalidRequest(`${request.model} supports the sizes ${listed(GPT_IMAGE_SIZES)}.`, { param: 'size', code: 'invalid_value' });
    }
    if (request.quality != null && !GPT_IMAGE_QUALITIES.includes(request.quality)) {
      throw errors.invalidRequest(`${request.model} supports the qualities ${listed(GPT_IMAGE_QUALITIES)}.`, { param: 'quality', code: 'invalid_value' });
    }
    if (request.style != null) throw errors.invalidRequest(`${request.model} does not support style.`, { param: 'style', code: 'invalid_value' });
  },
};
