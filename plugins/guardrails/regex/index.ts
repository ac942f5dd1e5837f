import { ALLOW, defineGuardrail, findSpans, replaceSpans, spanValues } from '../../../core/spec/index.js';

export interface RegexParams {
  /** A JavaScript regular expression source. */
  pattern: string;
  /** Flags among `i`, `m`, `s`, `u` (`g` is implied). */
  flags?: string;
  /** `deny` (default): a match denies. `redact`: matches are replaced by `replacement`. */
  mode?: 'deny' | 'redact';
  /** Default `[REDACTED]`. */
  replacement?: string;
  /** Names the match in the log (`changes` and the denial reason); default `pattern`. */
  label?: string;
}

/** Denies or redacts text matching a regular expression. */
export const regex = defineGuardrail<RegexParams>(
  {
    id: 'regex',
    version: '1.0.0',
    description: 'Denies text matching a regular expression, or redacts the matches.',
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['pattern'],
      properties: {
        pattern: { type: 'string', minLength: 1 },
        flags: { type: 'string', pattern: '^[imsu]*$' },
        mode: { enum: ['deny', 'redact'] },
        replacement: { type: 'string' },
        label: { type: 'string', pattern: '^[a-z0-9_-]{1,40}$' },
      },
    },
  },
  (params) => {
    const pattern = new RegExp(params.pattern, `${params.flags ?? ''}g`);
    const label = params.label ?? 'pattern';
    const replacement = params.replacement ?? '[REDACTED]';
    return (input) => {
      const found = input.texts.map((text) => findSpans(text, pattern, label, input.partial));
      const count = found.reduce((sum, spans) => sum + spans.length, 0);
      if (count === 0) return ALLOW;
      if (params.mode === 'redact') {
        return { action: 'transform', texts: input.texts.map((text, index) => replaceSpans(text, found[index], () => replacement)), changes: { [label]: count }, flagged: spanValues(input.texts, found) };
      }
      return { action: 'deny', reason: `text matches the ${label} expression`, flagged: spanValues(input.texts, found) };
    };
  },
);
