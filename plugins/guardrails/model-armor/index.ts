import { ALLOW, defineGuardrail, type GuardrailVerdict, isRecord } from '../../../core/spec/index.js';
import {
  DEFAULT_VENDOR_TIMEOUT_MS,
  eachDistinct,
  judgesSide,
  postJson,
  requireApiKey,
  secretSource,
  trimBase,
  VENDOR_PARAM_PROPERTIES,
  VendorError,
  type VendorParams,
} from '../../shared/vendor-guardrail.js';

const VENDOR = 'model-armor';

export interface ModelArmorParams extends VendorParams {
  /** Google Cloud project id. */
  project: string;
  /** The template's location (`us-central1`); also picks the regional endpoint. */
  location: string;
  /** The Model Armor template id. */
  template: string;
}

/** The filters of a sanitization result that matched (`rai`, `pi_and_jailbreak`, `sdp`, …), at any depth of their result. */
export function matchedFilters(result: Record<string, unknown>): string[] {
  const matched = (value: unknown): boolean =>
    isRecord(value) ? value.matchState === 'MATCH_FOUND' || Object.values(value).some(matched) : Array.isArray(value) ? value.some(matched) : false;
  const filters = isRecord(result.filterResults) ? result.filterResults : {};
  return Object.entries(filters)
    .filter(([, value]) => matched(value))
    .map(([name]) => name);
}

/**
 * Google Cloud Model Armor: `templates/{template}:sanitizeUserPrompt` for the input and
 * `:sanitizeModelResponse` for the output, one call per distinct text, with an OAuth access token
 * as the secret (`Authorization: Bearer`). `MATCH_FOUND` denies; an invocation that ran no filter
 * (`FAILURE`) is an error.
 */
export const modelArmor = defineGuardrail<ModelArmorParams>(
  {
    id: VENDOR,
    version: '1.0.0',
    description: "Asks Google Cloud Model Armor to sanitize prompts and answers under a template (responsible AI, prompt injection and jailbreak, sensitive data, malicious URLs).",
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['project', 'location', 'template'],
      properties: {
        ...VENDOR_PARAM_PROPERTIES,
        project: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
        location: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' },
        template: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,63}$' },
      },
    },
  },
  (params, dependencies) => {
    const secret = secretSource(VENDOR, params, dependencies);
    const base = trimBase(params.baseUrl ?? `https://modelarmor.${params.location}.rep.googleapis.com`);
    const template = `${base}/v1/projects/${params.project}/locations/${params.location}/templates/${params.template}`;
    return async (input): Promise<GuardrailVerdict> => {
      if (!judgesSide(params, input) || input.texts.every((text) => text.trim() === '')) return ALLOW;
      const headers = { authorization: `Bearer ${requireApiKey(VENDOR, await secret())}` };
      const found = await eachDistinct(input.texts, async (text) => {
        const [method, body] = input.side === 'input' ? ['sanitizeUserPrompt', { userPromptData: { text } }] : ['sanitizeModelResponse', { modelResponseData: { text } }];
        const answer = await postJson(dependencies.http, VENDOR, `${template}:${method}`, body, headers, params.timeoutMs ?? DEFAULT_VENDOR_TIMEOUT_MS);
        const result = isRecord(answer) && isRecord(answer.sanitizationResult) ? answer.sanitizationResult : undefined;
        if (!result || (result.filterMatchState !== 'MATCH_FOUND' && result.filterMatchState !== 'NO_MATCH_FOUND')) throw new VendorError(VENDOR, 'answer has no sanitizationResult');
        if (result.invocationResult === 'FAILURE') throw new VendorError(VENDOR, 'no filter ran (invocationResult FAILURE)');
        return result.filterMatchState === 'MATCH_FOUND' ? (matchedFilters(result).length ? matchedFilters(result) : ['match']) : [];
      });
      const filters = [...new Set(found.flatMap((names) => names ?? []))];
      return filters.length === 0 ? ALLOW : { action: 'deny', reason: `${VENDOR}: ${filters.join(', ')}` };
    };
  },
);
