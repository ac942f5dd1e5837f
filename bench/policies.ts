import type { PolicyDefinition } from '../core/guardrails/policy.js';
import { lengthBounds, pii, regex } from '../plugins/guardrails/index.js';

/**
 * The guardrail policy of the bench's `virtual key + 3 guardrails` gateway: PII redaction, a word
 * count and a redacting regex on the input. The bench's chat message carries one e-mail address,
 * so the PII guardrail rewrites every request.
 */
export function benchPolicies(): Record<string, PolicyDefinition> {
  return {
    three: {
      input: [pii({ action: 'redact' }), lengthBounds({ unit: 'words', max: 100_000 }), regex({ pattern: '\\b(?:password|secret)\\b', flags: 'i', mode: 'redact' })],
    },
  };
}
