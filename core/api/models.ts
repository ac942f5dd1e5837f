import type { ModelList } from '../spec/unified.js';
import { respondWithJson } from './json-response.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { pick } from './strict-fields.js';

const MODEL_FIELDS = ['id', 'object', 'created', 'owned_by'];

/** OpenAI's model list schema only. */
export function strictModelList(list: ModelList): ModelList {
  return { object: 'list', data: (list.data ?? []).map((model) => pick(model, MODEL_FIELDS)) };
}

/** `GET /v1/models`: the provider's list, in the OpenAI list shape. (`/v1/models/{id}` passes through.) */
export const models: OperationHandler = {
  name: 'models',
  method: 'GET',
  mapsErrors: true,

  async parse() {
    return { streaming: false };
  },

  toUpstream(_context, provider, target) {
    const adapter = provider.operations.models;
    if (!adapter) throw unsupportedOperation(provider.id, 'models', 'GET /v1/models');
    return adapter.toUpstream(target);
  },

  respond: (context, provider, forward) =>
    respondWithJson(context, provider, forward, {
      map(body, target) {
        const adapter = provider.operations.models;
        if (!adapter) throw unsupportedOperation(provider.id, 'models', 'GET /v1/models');
        return adapter.fromUpstream(body, target);
      },
      strict: strictModelList,
      record: () => {},
    }),
};
