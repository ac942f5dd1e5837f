import { ALLOW, defineGuardrail, type GuardrailVerdict, isRecord } from '../../../core/spec/index.js';
import {
  DEFAULT_VENDOR_TIMEOUT_MS,
  judgesSide,
  postJson,
  requireApiKey,
  secretSource,
  trimBase,
  VENDOR_PARAM_PROPERTIES,
  VendorError,
  type VendorParams,
} from '../../shared/vendor-guardrail.js';

const VENDOR = 'openai-moderation';

/** Most texts sent in one moderation call. */
export const BATCH = 32;

export interface OpenAIModerationParams extends VendorParams {
  /** Moderation model (default `omni-moderation-latest`). */
  model?: string;
  /** The categories that count (`hate`, `self-harm/intent`, …); default every category the service reports. */
  categories?: string[];
  /**
   * Score (0–1) of `category_scores` at or above which a category denies, by category. A counted
   * category without a threshold here uses `threshold`, else the service's own `categories` flag.
   */
  thresholds?: Record<string, number>;
  /** One score threshold for every counted category without its own. */
  threshold?: number;
}

interface ModerationResult {
  readonly categories: Record<string, unknown>;
  readonly category_scores: Record<string, unknown>;
}

/** The categories of one moderation result that deny under the params (in the service's order). */
export function deniedCategories(result: ModerationResult, params: Pick<OpenAIModerationParams, 'categories' | 'thresholds' | 'threshold'>): string[] {
  const counted = params.categories ?? [...new Set([...Object.keys(result.categories), ...Object.keys(result.category_scores)])];
  return counted.filter((category) => {
    const limit = params.thresholds?.[category] ?? params.threshold;
    if (limit === undefined) return result.categories[category] === true;
    const score = result.category_scores[category];
    return typeof score === 'number' && score >= limit;
  });
}

function results(answer: unknown, count: number): ModerationResult[] {
  const list = isRecord(answer) ? answer.results : undefined;
  if (!Array.isArray(list) || list.length !== count || !list.every((item) => isRecord(item) && isRecord(item.categories) && isRecord(item.category_scores))) {
    throw new VendorError(VENDOR, 'answer has no results for the texts sent');
  }
  return list as ModerationResult[];
}

/**
 * OpenAI's moderation endpoint (`POST {baseUrl}/moderations`): the distinct texts of a check in
 * one call (batches of {@link BATCH}, sent at once, for a longer conversation); a text is denied when a counted category is flagged, or scores at or above its threshold.
 */
export const openaiModeration = defineGuardrail<OpenAIModerationParams>(
  {
    id: VENDOR,
    version: '1.0.0',
    description: "Asks OpenAI's moderation endpoint (or any server of the same API) and denies by category, with score thresholds.",
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ...VENDOR_PARAM_PROPERTIES,
        model: { type: 'string', minLength: 1 },
        categories: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        thresholds: { type: 'object', additionalProperties: { type: 'number', minimum: 0, maximum: 1 } },
        threshold: { type: 'number', minimum: 0, maximum: 1 },
      },
    },
  },
  (params, dependencies) => {
    const secret = secretSource(VENDOR, params, dependencies);
    const url = `${trimBase(params.baseUrl ?? 'https://api.openai.com/v1')}/moderations`;
    const model = params.model ?? 'omni-moderation-latest';
    return async (input): Promise<GuardrailVerdict> => {
      if (!judgesSide(params, input)) return ALLOW;
      const texts = [...new Set(input.texts.filter((text) => text.trim().length > 0))];
      if (texts.length === 0) return ALLOW;
      const apiKey = requireApiKey(VENDOR, await secret());
      // A long conversation goes in batches, all at once.
      const batches = Array.from({ length: Math.ceil(texts.length / BATCH) }, (_, index) => texts.slice(index * BATCH, (index + 1) * BATCH));
      const answers = await Promise.all(
        batches.map(async (batch) => results(await postJson(dependencies.http, VENDOR, url, { model, input: batch }, { authorization: `Bearer ${apiKey}` }, params.timeoutMs ?? DEFAULT_VENDOR_TIMEOUT_MS), batch.length)),
      );
      const denied = new Set(answers.flat().flatMap((result) => deniedCategories(result, params)));
      if (denied.size === 0) return ALLOW;
      return { action: 'deny', reason: `${VENDOR}: ${[...denied].join(', ')}` };
    };
  },
);
