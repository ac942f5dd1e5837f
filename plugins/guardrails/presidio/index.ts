import { ALLOW, defineGuardrail, type GuardrailVerdict, isRecord } from '../../../core/spec/index.js';
import { DEFAULT_VENDOR_TIMEOUT_MS, eachDistinct, judgesSide, postJson, secretSource, trimBase, VENDOR_PARAM_PROPERTIES, VendorError, type VendorParams } from '../../shared/vendor-guardrail.js';

const VENDOR = 'presidio';

export interface PresidioParams extends VendorParams {
  /** The analyzer service's URL (`http://presidio-analyzer:3000`). */
  baseUrl: string;
  /** Language of the texts (default `en`). */
  language?: string;
  /** Entity types to look for (`EMAIL_ADDRESS`, `CREDIT_CARD`, …); default all the analyzer knows. */
  entities?: string[];
  /** Score (0–1) at or above which a found entity denies (default 0.5). */
  scoreThreshold?: number;
  /** Per entity type, its own score threshold. */
  thresholds?: Record<string, number>;
}

interface Finding {
  readonly entity_type: string;
  readonly start: number;
  readonly end: number;
  readonly score: number;
}

const isFinding = (value: unknown): value is Finding =>
  isRecord(value) && typeof value.entity_type === 'string' && Number.isInteger(value.start) && Number.isInteger(value.end) && typeof value.score === 'number';

/**
 * Microsoft Presidio's analyzer (`POST {baseUrl}/analyze`): each distinct text analysed; an entity
 * found at or above its score threshold denies, and its value is listed as flagged (masked in the
 * log). While a stream flows, an entity touching the end of the window is left for the next one.
 * Masking with placeholders is the `pii` guardrail's (`action: 'mask'`), not this one's.
 */
export const presidio = defineGuardrail<PresidioParams>(
  {
    id: VENDOR,
    version: '1.0.0',
    description: "Asks a Microsoft Presidio analyzer for PII and denies when it finds an entity above a score threshold (the values are masked in the log).",
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['baseUrl'],
      properties: {
        ...VENDOR_PARAM_PROPERTIES,
        language: { type: 'string', pattern: '^[a-z]{2}$' },
        entities: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[A-Z0-9_]+$' } },
        scoreThreshold: { type: 'number', minimum: 0, maximum: 1 },
        thresholds: { type: 'object', additionalProperties: { type: 'number', minimum: 0, maximum: 1 } },
      },
    },
  },
  (params, dependencies) => {
    // The analyzer has no authentication of its own; a key is sent (Bearer) when one is given, for a proxy in front of it.
    const secret = secretSource(VENDOR, params, dependencies, true);
    const url = `${trimBase(params.baseUrl)}/analyze`;
    const floor = Math.min(params.scoreThreshold ?? 0.5, ...Object.values(params.thresholds ?? {}));
    return async (input): Promise<GuardrailVerdict> => {
      if (!judgesSide(params, input)) return ALLOW;
      const apiKey = (await secret())?.apiKey;
      const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
      const found = await eachDistinct(input.texts, async (text) => {
        const answer = await postJson(
          dependencies.http,
          VENDOR,
          url,
          { text, language: params.language ?? 'en', score_threshold: floor, ...(params.entities ? { entities: params.entities } : {}) },
          headers,
          params.timeoutMs ?? DEFAULT_VENDOR_TIMEOUT_MS,
        );
        if (!Array.isArray(answer) || !answer.every(isFinding)) throw new VendorError(VENDOR, 'answer is not a list of findings');
        return answer.filter(
          (finding) =>
            finding.score >= (params.thresholds?.[finding.entity_type] ?? params.scoreThreshold ?? 0.5) &&
            finding.start >= 0 &&
            finding.end <= text.length &&
            finding.start < finding.end &&
            !(input.partial && finding.end >= text.length),
        );
      });
      const hits = input.texts.flatMap((text, index) => (found[index] ?? []).map((finding) => ({ type: finding.entity_type, value: text.slice(finding.start, finding.end) })));
      if (hits.length === 0) return ALLOW;
      const types = [...new Set(hits.map((hit) => hit.type))];
      return { action: 'deny', reason: `${VENDOR}: ${types.join(', ')}`, flagged: [...new Set(hits.map((hit) => hit.value))] };
    };
  },
);
