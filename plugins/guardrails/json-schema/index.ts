import { createRequire } from 'node:module';
import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';
import { jsonText } from '../json-output/index.js';

export interface JsonSchemaParams {
  /** The JSON Schema the answer must satisfy (compiled once, at boot). */
  schema: Record<string, unknown>;
  allowFence?: boolean;
}

/** Denies an answer that is not JSON or does not satisfy the schema. */
export const jsonSchema = defineGuardrail<JsonSchemaParams>(
  {
    id: 'json-schema',
    version: '1.0.0',
    description: 'Denies an answer that is not JSON satisfying a JSON Schema (ajv, compiled once at boot).',
    stages: ['output'],
    incremental: false,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['schema'],
      properties: { schema: { type: 'object' }, allowFence: { type: 'boolean' } },
    },
  },
  (params) => {
    // Loaded here, not on import: the guardrail is registered by default, and Ajv costs start-up
    // to every gateway whether or not a policy uses it (docs/performance.md, "Fifth pass").
    const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    const validate = new Ajv({ allErrors: false, strict: false }).compile(params.schema);
    return (input) => {
      for (const text of input.texts) {
        let value: unknown;
        try {
          value = JSON.parse(jsonText(text, params.allowFence ?? false));
        } catch {
          return { action: 'deny', reason: 'answer is not valid JSON', flagged: [] };
        }
        if (!validate(value)) {
          const problem = validate.errors?.[0];
          return { action: 'deny', reason: `answer does not match the schema: ${problem?.instancePath || '(root)'} ${problem?.message ?? ''}`.trim(), flagged: [] };
        }
      }
      return ALLOW;
    };
  },
);
