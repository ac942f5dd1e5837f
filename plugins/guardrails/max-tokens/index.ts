import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';

export interface MaxTokensParams {
  max: number;
  /** `cap` (default): lower (or set) the request's token limit to `max`. `deny`: refuse a larger one. */
  action?: 'cap' | 'deny';
}

/** Caps the request's completion-token limit, or denies one above it. */
export const maxTokens = defineGuardrail<MaxTokensParams>(
  {
    id: 'max-tokens',
    version: '1.0.0',
    description: 'Caps max_tokens / max_completion_tokens (rewriting the request) or denies requests above the cap.',
    stages: ['input'],
    incremental: false,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['max'],
      properties: { max: { type: 'integer', minimum: 1 }, action: { enum: ['cap', 'deny'] } },
    },
  },
  (params) => (input) => {
    const asked = input.parameters.maxTokens;
    if (asked !== undefined && asked <= params.max) return ALLOW;
    if (params.action === 'deny') return asked === undefined ? ALLOW : { action: 'deny', reason: `token limit ${asked} above ${params.max}`, flagged: [] };
    // Text completions default to a short answer (16 tokens): there only a larger limit asked for is lowered.
    if (input.operation === 'completion' ? asked === undefined : input.operation !== 'chat') return ALLOW;
    return { action: 'transform', parameters: { maxTokens: params.max }, changes: { maxTokens: 1 } };
  },
);
