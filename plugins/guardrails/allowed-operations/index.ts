import { ALLOW, defineGuardrail, type OperationName } from '../../../core/spec/index.js';

export interface AllowedOperationsParams {
  operations: OperationName[];
}

const OPERATIONS: OperationName[] = ['chat', 'completion', 'embed', 'imageGenerate', 'imageEdit', 'imageVariation', 'speech', 'messages', 'messagesCountTokens', 'generateContent', 'geminiCountTokens', 'geminiEmbed', 'geminiModels', 'passthrough'];

/** Denies request types (operations) not on the list. */
export const allowedOperations = defineGuardrail<AllowedOperationsParams>(
  {
    id: 'allowed-operations',
    version: '1.0.0',
    description: 'Denies request types (operations such as chat, embed, passthrough) not on the list.',
    stages: ['input'],
    incremental: false,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['operations'],
      properties: { operations: { type: 'array', minItems: 1, items: { enum: OPERATIONS } } },
    },
  },
  (params) => {
    const allowed = new Set(params.operations);
    return (input) => (allowed.has(input.operation) ? ALLOW : { action: 'deny', reason: `operation ${input.operation} not allowed`, flagged: [] });
  },
);
