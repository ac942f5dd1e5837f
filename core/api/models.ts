import type { ModelList } from '../spec/unified.js';
import { respondWithJson } from './json-response.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { pick } from './strict-fields.js';

const MODEL_FIELDS = ['id', 'object', 'created', 'owned_by'];

/** OpenAI's model list schema only. */
export function strictModelList(list: ModelList): ModelList {
  return { object: 'list', data: (list.data ?? []).map((model) => pick(model, MODEL_FIELDS)) };
}

/**
 * The list a key limited to `allowed` models is shown: exactly its allowed models, in the key's
 * order, each with the provider's entry when the provider lists it, else a minimal entry (owned by
 * the key's provider, `created` 0): a model alias, or a model the provider serves without listing
 * it, is still one the key may use, and a list intersected with the provider's would hide it.
 */
export function allowedModelList(list: ModelList, allowed: readonly string[], owner: string): ModelList {
  const listed = new Map((list.data ?? []).map((model) => [model.id, model]));
  return {
    ...list,
    object: 'list',
    data: [...new Set(allowed)].map((id) => listed.get(id) ?? { id, object: 'model' as const, created: 0, owned_by: owner }),
  };
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
        const list = adapter.fromUpstream(body, target);
        const allowed = context.key?.allowedModels;
        return allowed === undefined ? list : allowedModelList(list, allowed, provider.id);
      },
      strict: strictModelList,
      record: () => {},
    }),
};
