import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';

export interface RequiredMetadataParams {
  /** Keys `x-gateway-metadata` must carry, with non-empty values. */
  keys: string[];
}

/** Denies requests whose metadata lacks a required key. */
export const requiredMetadata = defineGuardrail<RequiredMetadataParams>(
  {
    id: 'required-metadata',
    version: '1.0.0',
    description: 'Denies requests whose x-gateway-metadata lacks one of the required keys.',
    stages: ['input'],
    incremental: false,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['keys'],
      properties: { keys: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } },
    },
  },
  (params) => (input) => {
    const missing = params.keys.filter((key) => !input.metadata[key]);
    return missing.length === 0 ? ALLOW : { action: 'deny', reason: `metadata lacks ${missing.join(', ')}`, flagged: [] };
  },
);
