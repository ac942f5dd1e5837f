import { ALLOW, defineGuardrail, type GuardrailVerdict, isRecord } from '../../../core/spec/index.js';
import { DEFAULT_VENDOR_TIMEOUT_MS, judgesSide, postJson, secretSource, trimBase, VENDOR_PARAM_PROPERTIES, VendorError, type VendorParams } from '../../shared/vendor-guardrail.js';

const VENDOR = 'lakera-guard';

export interface LakeraGuardParams extends VendorParams {
  /** The Lakera project whose policy (detectors, thresholds) applies; default the account's default project. */
  projectId?: string;
}

/** The detector types a `breakdown` reports as detected (`prompt_attack`, `pii/email`, …). */
export function detectedTypes(answer: Record<string, unknown>): string[] {
  const breakdown = Array.isArray(answer.breakdown) ? answer.breakdown : [];
  return [...new Set(breakdown.filter((item) => isRecord(item) && item.detected === true && typeof item.detector_type === 'string').map((item) => (item as { detector_type: string }).detector_type))];
}

/**
 * Lakera Guard's v2 API (`POST {baseUrl}/v2/guard`): the judged texts as the conversation's
 * messages (user messages for the input, assistant messages for the output), the project's
 * policy deciding; `flagged: true` denies.
 */
export const lakeraGuard = defineGuardrail<LakeraGuardParams>(
  {
    id: VENDOR,
    version: '1.0.0',
    description: "Asks Lakera Guard (v2 guard endpoint) under a project's policy: prompt attacks, PII, content, links.",
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      properties: { ...VENDOR_PARAM_PROPERTIES, projectId: { type: 'string', minLength: 1 } },
    },
  },
  (params, dependencies) => {
    // A self-hosted Lakera Guard (its own baseUrl) may run without authentication.
    const secret = secretSource(VENDOR, params, dependencies, params.baseUrl !== undefined);
    const url = `${trimBase(params.baseUrl ?? 'https://api.lakera.ai')}/v2/guard`;
    return async (input): Promise<GuardrailVerdict> => {
      if (!judgesSide(params, input)) return ALLOW;
      const texts = input.texts.filter((text) => text.trim().length > 0);
      if (texts.length === 0) return ALLOW;
      const apiKey = (await secret())?.apiKey;
      const role = input.side === 'input' ? 'user' : 'assistant';
      const body = { messages: texts.map((content) => ({ role, content })), breakdown: true, ...(params.projectId ? { project_id: params.projectId } : {}) };
      const answer = await postJson(dependencies.http, VENDOR, url, body, apiKey ? { authorization: `Bearer ${apiKey}` } : {}, params.timeoutMs ?? DEFAULT_VENDOR_TIMEOUT_MS);
      if (!isRecord(answer) || typeof answer.flagged !== 'boolean') throw new VendorError(VENDOR, 'answer has no flagged');
      if (!answer.flagged) return ALLOW;
      const types = detectedTypes(answer);
      return { action: 'deny', reason: `${VENDOR}: flagged${types.length ? ` (${types.join(', ')})` : ''}` };
    };
  },
);
