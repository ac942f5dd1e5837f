// A worked example of a custom guardrail: it redacts (or denies) internal host names such as
// `build-01.corp.internal` so they never leave in a prompt or reach a client in an answer.
//
// In your own project, import from the package instead of these relative paths:
//   import { defineGuardrail, findSpans, replaceSpans, spanValues, countByKind, ALLOW } from 'llm-gateway/guardrails';
import { ALLOW, countByKind, defineGuardrail, findSpans, replaceSpans, spanValues } from '../../plugins/guardrails/index.js';

/** The params users pass in gateway.config.ts; tsc checks them against this type. */
export interface InternalHostsParams {
  /** Domain suffixes that are internal, e.g. `["corp.internal"]`. */
  domains: string[];
  /** `redact` (default) or `deny`. */
  action?: 'redact' | 'deny';
}

export const internalHosts = defineGuardrail<InternalHostsParams>(
  {
    // The manifest: listed at GET /admin/plugins; `params` is the JSON Schema checked at boot.
    id: 'internal-hosts',
    version: '1.0.0',
    description: 'Redacts or denies internal host names (given domain suffixes).',
    stages: ['input', 'output'],
    // It matches spans, so it can judge a stream window by window.
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['domains'],
      properties: {
        domains: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[a-z0-9.-]+$' } },
        action: { enum: ['redact', 'deny'] },
      },
    },
  },
  // Runs once per policy entry, at boot: compile what you can here, not per request.
  (params) => {
    const suffixes = params.domains.map((domain) => domain.replace(/\./g, '\\.')).join('|');
    const pattern = new RegExp(`\\b[a-z0-9-]+(?:\\.[a-z0-9-]+)*\\.(?:${suffixes})\\b`, 'gi');
    return (input) => {
      // `partial` is true while a stream flows: findSpans leaves a match touching the end for later.
      const found = input.texts.map((text) => findSpans(text, pattern, 'host', input.partial));
      const all = found.flat();
      if (all.length === 0) return ALLOW;
      // Reasons and counts go to the log; never put the matched value in them. `flagged` lists the
      // matched values so that the log masks them (the log never stores the list itself).
      const flagged = spanValues(input.texts, found);
      if (params.action === 'deny') return { action: 'deny', reason: 'internal host name', flagged };
      return { action: 'transform', texts: input.texts.map((text, index) => replaceSpans(text, found[index], () => '[internal host]')), changes: countByKind(all), flagged };
    };
  },
);
