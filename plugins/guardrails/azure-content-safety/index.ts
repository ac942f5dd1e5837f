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

const VENDOR = 'azure-content-safety';

export const AZURE_CATEGORIES = ['Hate', 'SelfHarm', 'Sexual', 'Violence'] as const;
export type AzureCategory = (typeof AZURE_CATEGORIES)[number];

/** The most characters one text analysis takes; a longer text is analysed in pieces. */
export const ANALYZE_MAX_CHARS = 10_000;

export interface AzureContentSafetyParams extends VendorParams {
  /** The resource's endpoint (`https://<resource>.cognitiveservices.azure.com`). */
  baseUrl: string;
  /** Default `2024-09-01`. */
  apiVersion?: string;
  /** Text analysis (`text:analyze`) on every side it judges (default true). */
  analyze?: boolean;
  /** The categories analysed (default all four). */
  categories?: AzureCategory[];
  /** Severity at or above which a category denies, by category; the others use `threshold`. */
  thresholds?: Partial<Record<AzureCategory, number>>;
  /** Severity at or above which any analysed category denies (default 4, "medium"). */
  threshold?: number;
  /** `FourSeverityLevels` (0, 2, 4, 6; the default) or `EightSeverityLevels` (0–7). */
  outputType?: 'FourSeverityLevels' | 'EightSeverityLevels';
  /** Blocklists (created in the resource) to match too: any match denies. */
  blocklistNames?: string[];
  /** Prompt Shields (`text:shieldPrompt`) on the input: the last text as the user prompt, the earlier ones as documents (default false). */
  promptShields?: boolean;
  /** Protected material detection (`text:detectProtectedMaterial`) on the output (default false). */
  protectedMaterial?: boolean;
}

/** The reasons a text analysis denies, under the params. */
export function analysisReasons(answer: unknown, params: Pick<AzureContentSafetyParams, 'thresholds' | 'threshold'>): string[] {
  if (!isRecord(answer) || !Array.isArray(answer.categoriesAnalysis)) throw new VendorError(VENDOR, 'answer has no categoriesAnalysis');
  const reasons: string[] = [];
  if (Array.isArray(answer.blocklistsMatch) && answer.blocklistsMatch.length > 0) {
    const names = [...new Set(answer.blocklistsMatch.map((match) => (isRecord(match) && typeof match.blocklistName === 'string' ? match.blocklistName : '?')))];
    reasons.push(`blocklist ${names.join(', ')}`);
  }
  for (const analysis of answer.categoriesAnalysis) {
    if (!isRecord(analysis) || typeof analysis.category !== 'string' || typeof analysis.severity !== 'number') throw new VendorError(VENDOR, 'answer has a malformed categoriesAnalysis');
    const limit = params.thresholds?.[analysis.category as AzureCategory] ?? params.threshold ?? 4;
    if (analysis.severity >= limit) reasons.push(`${analysis.category} severity ${analysis.severity}`);
  }
  return reasons;
}

/** Pieces of at most `size` characters (a surrogate pair is never split). */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end--;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/**
 * Azure AI Content Safety: text analysis with severity thresholds per category (and blocklists),
 * Prompt Shields on the user prompt and documents of the input, protected material on the output.
 */
export const azureContentSafety = defineGuardrail<AzureContentSafetyParams>(
  {
    id: VENDOR,
    version: '1.0.0',
    description: 'Asks Azure AI Content Safety: harm categories by severity threshold, blocklists, Prompt Shields (input) and protected material (output).',
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['baseUrl'],
      properties: {
        ...VENDOR_PARAM_PROPERTIES,
        apiVersion: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$' },
        analyze: { type: 'boolean' },
        categories: { type: 'array', minItems: 1, items: { enum: [...AZURE_CATEGORIES] } },
        thresholds: { type: 'object', additionalProperties: false, properties: Object.fromEntries(AZURE_CATEGORIES.map((category) => [category, { type: 'integer', minimum: 0, maximum: 7 }])) },
        threshold: { type: 'integer', minimum: 0, maximum: 7 },
        outputType: { enum: ['FourSeverityLevels', 'EightSeverityLevels'] },
        blocklistNames: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        promptShields: { type: 'boolean' },
        protectedMaterial: { type: 'boolean' },
      },
    },
  },
  (params, dependencies) => {
    const secret = secretSource(VENDOR, params, dependencies);
    const base = `${trimBase(params.baseUrl)}/contentsafety`;
    const query = `?api-version=${params.apiVersion ?? '2024-09-01'}`;
    const timeoutMs = params.timeoutMs ?? DEFAULT_VENDOR_TIMEOUT_MS;
    const analyze = params.analyze !== false;
    if (!analyze && !params.promptShields && !params.protectedMaterial) throw new Error('enable at least one of analyze, promptShields, protectedMaterial');

    return async (input): Promise<GuardrailVerdict> => {
      if (!judgesSide(params, input) || input.texts.every((text) => text.trim() === '')) return ALLOW;
      const headers = { 'ocp-apim-subscription-key': requireApiKey(VENDOR, await secret()) };
      const call = (operation: string, body: unknown) => postJson(dependencies.http, VENDOR, `${base}/text:${operation}${query}`, body, headers, timeoutMs);
      const checks: Array<Promise<string[]>> = [];
      if (analyze) {
        checks.push(
          eachDistinct(input.texts, async (text) => {
            const parts = await Promise.all(
              pieces(text, ANALYZE_MAX_CHARS).map((piece) =>
                call('analyze', {
                  text: piece,
                  ...(params.categories ? { categories: params.categories } : {}),
                  ...(params.blocklistNames ? { blocklistNames: params.blocklistNames, haltOnBlocklistHit: false } : {}),
                  outputType: params.outputType ?? 'FourSeverityLevels',
                }),
              ),
            );
            return parts.flatMap((answer) => analysisReasons(answer, params));
          }).then((reasons) => reasons.flatMap((found) => found ?? [])),
        );
      }
      if (params.promptShields && input.side === 'input') {
        const texts = input.texts.filter((text) => text.trim() !== '');
        checks.push(
          call('shieldPrompt', { userPrompt: texts[texts.length - 1], documents: texts.slice(0, -1) }).then((answer) => {
            const user = isRecord(answer) && isRecord(answer.userPromptAnalysis) ? answer.userPromptAnalysis.attackDetected : undefined;
            const documents = isRecord(answer) && Array.isArray(answer.documentsAnalysis) ? answer.documentsAnalysis : undefined;
            if (typeof user !== 'boolean' || !documents) throw new VendorError(VENDOR, 'answer has no userPromptAnalysis');
            const attacked = documents.filter((document) => isRecord(document) && document.attackDetected === true).length;
            return [...(user ? ['prompt attack in the user prompt'] : []), ...(attacked > 0 ? [`prompt attack in ${attacked} document(s)`] : [])];
          }),
        );
      }
      if (params.protectedMaterial && input.side === 'output') {
        checks.push(
          eachDistinct(input.texts, async (text) => {
            const answer = await call('detectProtectedMaterial', { text });
            const detected = isRecord(answer) && isRecord(answer.protectedMaterialAnalysis) ? answer.protectedMaterialAnalysis.detected : undefined;
            if (typeof detected !== 'boolean') throw new VendorError(VENDOR, 'answer has no protectedMaterialAnalysis');
            return detected;
          }).then((found) => (found.some(Boolean) ? ['protected material'] : [])),
        );
      }
      const reasons = [...new Set((await Promise.all(checks)).flat())];
      return reasons.length === 0 ? ALLOW : { action: 'deny', reason: `${VENDOR}: ${reasons.join('; ')}` };
    };
  },
);
