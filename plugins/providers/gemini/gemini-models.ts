import { isRecord, type ModelList, type ModelsAdapter } from '../../../core/spec/index.js';

/**
 * Google AI Studio's `GET /models` (one page of up to 1000 models) as the unified list: each
 * `models/{id}` as `id`, with Google's display name and methods kept beside the OpenAI fields.
 */
export const geminiModels: ModelsAdapter = {
  toUpstream: (target) => ({ method: 'GET', url: `${target.baseUrl}/models?pageSize=1000`, headers: { accept: 'application/json' } }),

  fromUpstream(body): ModelList {
    if (!isRecord(body) || !Array.isArray(body.models)) throw new TypeError('Gemini model list without models');
    return {
      object: 'list',
      data: body.models.filter(isRecord).map((model) => ({
        id: String(model.name ?? '').replace(/^models\//, ''),
        object: 'model' as const,
        created: 0,
        owned_by: 'google',
        ...(typeof model.displayName === 'string' ? { display_name: model.displayName } : {}),
        ...(Array.isArray(model.supportedGenerationMethods) ? { supported_generation_methods: model.supportedGenerationMethods } : {}),
      })),
    };
  },
};
