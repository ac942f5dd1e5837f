import { ALLOW, defineGuardrail, escapeRegExp } from '../../../core/spec/index.js';

export interface AllowedModelsParams {
  /** Model names; `*` matches any characters (`gpt-4o*`). */
  models: string[];
}

/** Denies requests for a model not on the list. */
export const allowedModels = defineGuardrail<AllowedModelsParams>(
  {
    id: 'allowed-models',
    version: '1.0.0',
    description: 'Denies requests for a model not on the list (`*` wildcards).',
    stages: ['input'],
    incremental: false,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['models'],
      properties: { models: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } },
    },
  },
  (params) => {
    const pattern = new RegExp(`^(?:${params.models.map((model) => model.split('*').map(escapeRegExp).join('.*')).join('|')})$`);
    return (input) => (input.model !== undefined && pattern.test(input.model) ? ALLOW : { action: 'deny', reason: 'model not allowed', flagged: [] });
  },
);
