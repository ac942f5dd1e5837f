import { ALLOW, countByKind, defineGuardrail, replaceSpans, type Span, spanValues } from '../../../core/spec/index.js';
import { detectPii, PII_TYPES, type PiiType } from './pii-detect.js';
import { PiiMask } from './pii-mask.js';

/**
 * `mask` (input side): each value is replaced by a placeholder (`<EMAIL_1>`, the same value the
 * same placeholder within the request), and the gateway puts the values back in the answer. On the
 * output side, where nothing follows to restore it, `mask` redacts.
 */
export type PiiAction = 'redact' | 'mask' | 'deny' | 'allow';
const ACTIONS = ['redact', 'mask', 'deny', 'allow'];

export interface PiiParams {
  /** The action for every type not listed in `types` (default `redact`). */
  action?: PiiAction;
  /** Per-type actions, e.g. `{ card: 'deny', email: 'redact', ipv4: 'allow' }`. */
  types?: Partial<Record<PiiType, PiiAction>>;
  /** What replaces a redacted span; `{type}` becomes its type in upper case. Default `[REDACTED_{type}]`. */
  replacement?: string;
}

/** Detects PII and redacts it or denies, per type. */
export const pii = defineGuardrail<PiiParams>(
  {
    id: 'pii',
    version: '1.0.0',
    description:
      'Detects PII (email, international phone numbers, payment cards with Luhn, IBAN with checksum, US SSN, IPv4/IPv6, secret-looking tokens) and redacts it, masks it (placeholders the answer gets the values back for) or denies, per type.',
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        action: { enum: ACTIONS },
        types: {
          type: 'object',
          additionalProperties: false,
          properties: Object.fromEntries(PII_TYPES.map((type) => [type, { enum: ACTIONS }])),
        },
        replacement: { type: 'string' },
      },
    },
  },
  (params) => {
    const actionOf = (type: PiiType): PiiAction => params.types?.[type] ?? params.action ?? 'redact';
    const wanted = new Set(PII_TYPES.filter((type) => actionOf(type) !== 'allow'));
    const replacement = params.replacement ?? '[REDACTED_{type}]';
    return (input) => {
      // A conversation's earlier turns kept placeholders (input side): they are reused and restored whatever this turn brings.
      const carried = input.side === 'input' ? input.carried : undefined;
      if (wanted.size === 0 && carried === undefined) return ALLOW;
      const found = input.texts.map((text) => (wanted.size === 0 ? [] : detectPii(text, wanted, input.partial)));
      const all = found.flat();
      if (all.length === 0 && carried === undefined) return ALLOW;
      // Every span found, denied or redacted: the log masks them all (a denial leaves the request as sent).
      const flagged = spanValues(input.texts, found);
      const denied = [...new Set(all.filter((span) => actionOf(span.kind as PiiType) === 'deny').map((span) => span.kind))];
      if (denied.length > 0) return { action: 'deny', reason: `PII detected: ${denied.join(', ')}`, flagged };
      const redact = (span: Span) => replacement.replaceAll('{type}', span.kind.toUpperCase());
      const masking = input.side === 'input' && all.some((span) => actionOf(span.kind as PiiType) === 'mask');
      if (!masking && carried === undefined) return { action: 'transform', texts: input.texts.map((text, index) => replaceSpans(text, found[index], redact)), changes: countByKind(all), flagged };
      // Masked spans get placeholders, the others of the same texts their redaction.
      const mask = new PiiMask(input.texts, carried);
      const texts = input.texts.map((text, index) =>
        replaceSpans(text, found[index], (span) => (actionOf(span.kind as PiiType) === 'mask' ? mask.placeholder(text.slice(span.start, span.end), span.kind) : redact(span))),
      );
      // The values the conversation carried may be restored in this answer too: the log masks them as well.
      return { action: 'transform', texts, changes: countByKind(all), flagged: carried === undefined ? flagged : [...flagged, ...mask.values()], restorer: mask.restorer() };
    };
  },
);
