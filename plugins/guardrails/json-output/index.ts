import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';

export interface JsonOutputParams {
  /** Also accept JSON inside one Markdown code fence (```json … ```). Default false. */
  allowFence?: boolean;
}

const FENCE = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/;

/** The JSON text of an answer, unwrapping one code fence when allowed. */
export function jsonText(text: string, allowFence: boolean): string {
  const fenced = allowFence ? FENCE.exec(text) : null;
  return fenced ? fenced[1] : text;
}

/** Denies an answer that is not parseable JSON. */
export const jsonOutput = defineGuardrail<JsonOutputParams>(
  {
    id: 'json-output',
    version: '1.0.0',
    description: 'Denies an answer that is not parseable JSON (optionally inside one code fence).',
    stages: ['output'],
    incremental: false,
    params: { type: 'object', additionalProperties: false, properties: { allowFence: { type: 'boolean' } } },
  },
  (params) => (input) => {
    for (const text of input.texts) {
      try {
        JSON.parse(jsonText(text, params.allowFence ?? false));
      } catch {
        return { action: 'deny', reason: 'answer is not valid JSON', flagged: [] };
      }
    }
    return ALLOW;
  },
);
