import type { ModelList, ModelsAdapter } from '../../../core/spec/index.js';

/** OpenAI's `GET /models` is already the unified list. */
export const openAIModels: ModelsAdapter = {
  toUpstream: (target) => ({ method: 'GET', url: `${target.baseUrl}/models`, headers: { accept: 'application/json' } }),

  fromUpstream(body) {
    const list = body as ModelList;
    if (typeof list !== 'object' || list === null || !Array.isArray(list.data)) throw new TypeError('OpenAI model list without data');
    return { ...list, object: 'list' };
  },
};
