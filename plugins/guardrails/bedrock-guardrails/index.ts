import { ALLOW, defineGuardrail, type GuardrailVerdict, isRecord, type StoredCredential } from '../../../core/spec/index.js';
import { signRequest } from '../../shared/aws-sigv4/sigv4.js';
import { DEFAULT_VENDOR_TIMEOUT_MS, judgesSide, postJson, trimBase, VENDOR_PARAM_PROPERTIES, VendorError } from '../../shared/vendor-guardrail.js';

const VENDOR = 'bedrock-guardrails';

/**
 * Field names a stored credential may hold its parts under: plain, or the ones the Bedrock provider's
 * credentials use (so one stored AWS credential serves both).
 */
const FIELDS = {
  secretAccessKey: ['secretAccessKey', 'x-gateway-cloud-c-secret-access-key'],
  sessionToken: ['sessionToken', 'x-gateway-cloud-c-session-token'],
  region: ['region', 'x-gateway-cloud-c-region'],
} as const;

export interface BedrockGuardrailsParams {
  /** The guardrail's id or ARN. */
  guardrailIdentifier: string;
  /** `DRAFT` or a version number. */
  guardrailVersion: string;
  /** AWS region (`us-east-1`); else the stored credential's `region` field. */
  region?: string;
  /** Default `https://bedrock-runtime.<region>.amazonaws.com`. */
  baseUrl?: string;
  /** The access key id and secret (`process.env.X!` in `gateway.config.ts`), with a session token for temporary credentials. */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /**
   * Or a stored vault credential: its API key is the access key id, its fields `secretAccessKey`,
   * `sessionToken`, `region` (or the Bedrock provider's `x-gateway-cloud-c-…` field names).
   */
  credential?: string;
  /** Time allowed for the answer (default 2000 ms); the policy step's `timeoutMs` also applies. */
  timeoutMs?: number;
  /** Which sides it judges (default both). */
  sides?: Array<'input' | 'output'>;
}

interface AwsSecret {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region?: string;
}

const field = (secret: StoredCredential, names: readonly string[]): string | undefined => names.map((name) => secret.fields?.[name]).find((value) => typeof value === 'string' && value !== '');

/** What a Bedrock intervention was about, from its assessments: policy kinds and types or names, never the matched text. */
export function interventionReasons(assessments: unknown): string[] {
  const reasons = new Set<string>();
  const list = Array.isArray(assessments) ? assessments : [];
  const acted = (item: unknown) => isRecord(item) && item.action !== 'NONE' && (item.detected === undefined || item.detected === true);
  for (const assessment of list) {
    if (!isRecord(assessment)) continue;
    const topics = isRecord(assessment.topicPolicy) && Array.isArray(assessment.topicPolicy.topics) ? assessment.topicPolicy.topics : [];
    for (const topic of topics) if (acted(topic) && typeof topic.name === 'string') reasons.add(`topic ${topic.name}`);
    const filters = isRecord(assessment.contentPolicy) && Array.isArray(assessment.contentPolicy.filters) ? assessment.contentPolicy.filters : [];
    for (const filter of filters) if (acted(filter) && typeof filter.type === 'string') reasons.add(`content ${filter.type}`);
    const words = isRecord(assessment.wordPolicy) ? [...(Array.isArray(assessment.wordPolicy.customWords) ? assessment.wordPolicy.customWords : []), ...(Array.isArray(assessment.wordPolicy.managedWordLists) ? assessment.wordPolicy.managedWordLists : [])] : [];
    if (words.some(acted)) reasons.add('words');
    const sensitive = isRecord(assessment.sensitiveInformationPolicy) ? assessment.sensitiveInformationPolicy : {};
    for (const entity of Array.isArray(sensitive.piiEntities) ? sensitive.piiEntities : []) if (acted(entity) && typeof entity.type === 'string') reasons.add(`pii ${entity.type}`);
    for (const regex of Array.isArray(sensitive.regexes) ? sensitive.regexes : []) if (acted(regex) && typeof regex.name === 'string') reasons.add(`regex ${regex.name}`);
    const grounding = isRecord(assessment.contextualGroundingPolicy) && Array.isArray(assessment.contextualGroundingPolicy.filters) ? assessment.contextualGroundingPolicy.filters : [];
    for (const filter of grounding) if (acted(filter) && typeof filter.type === 'string') reasons.add(`grounding ${filter.type}`);
  }
  return [...reasons];
}

/**
 * Amazon Bedrock Guardrails' ApplyGuardrail (`POST /guardrail/{id}/version/{version}/apply`, signed
 * with SigV4): the judged texts as content blocks, `source` INPUT or OUTPUT; `GUARDRAIL_INTERVENED`
 * denies.
 */
export const bedrockGuardrails = defineGuardrail<BedrockGuardrailsParams>(
  {
    id: VENDOR,
    version: '1.0.0',
    description: 'Asks an Amazon Bedrock guardrail (ApplyGuardrail, SigV4-signed) and denies when it intervenes.',
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['guardrailIdentifier', 'guardrailVersion'],
      properties: {
        guardrailIdentifier: { type: 'string', minLength: 1, maxLength: 2048 },
        guardrailVersion: { type: 'string', pattern: '^(DRAFT|[1-9][0-9]{0,7})$' },
        region: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$' },
        accessKeyId: { type: 'string', minLength: 1 },
        secretAccessKey: { type: 'string', minLength: 1, writeOnly: true },
        sessionToken: { type: 'string', minLength: 1, writeOnly: true },
        baseUrl: VENDOR_PARAM_PROPERTIES.baseUrl,
        credential: VENDOR_PARAM_PROPERTIES.credential,
        timeoutMs: VENDOR_PARAM_PROPERTIES.timeoutMs,
        sides: VENDOR_PARAM_PROPERTIES.sides,
      },
    },
  },
  (params, dependencies) => {
    const inline = params.accessKeyId !== undefined || params.secretAccessKey !== undefined;
    if (inline && params.credential !== undefined) throw new Error('give accessKeyId and secretAccessKey, or credential, not both');
    if (!inline && params.credential === undefined) throw new Error('give accessKeyId and secretAccessKey, or credential (a stored credential id)');
    if (inline && (params.accessKeyId === undefined || params.secretAccessKey === undefined)) throw new Error('accessKeyId and secretAccessKey go together');
    if (inline && params.region === undefined) throw new Error('region is required with accessKeyId and secretAccessKey');
    const path = `/guardrail/${encodeURIComponent(params.guardrailIdentifier)}/version/${encodeURIComponent(params.guardrailVersion)}/apply`;

    const secret = async (): Promise<AwsSecret> => {
      if (inline) return { accessKeyId: params.accessKeyId!, secretAccessKey: params.secretAccessKey!, sessionToken: params.sessionToken, region: params.region };
      let stored: StoredCredential;
      try {
        stored = await dependencies.credential(params.credential!);
      } catch {
        throw new VendorError(VENDOR, `the stored credential "${params.credential}" cannot be read`);
      }
      const secretAccessKey = field(stored, FIELDS.secretAccessKey);
      if (!stored.apiKey || !secretAccessKey) throw new VendorError(VENDOR, 'the credential needs an API key (the access key id) and a secretAccessKey field');
      return { accessKeyId: stored.apiKey, secretAccessKey, sessionToken: field(stored, FIELDS.sessionToken), region: params.region ?? field(stored, FIELDS.region) };
    };

    return async (input): Promise<GuardrailVerdict> => {
      if (!judgesSide(params, input)) return ALLOW;
      const texts = [...new Set(input.texts.filter((text) => text.trim().length > 0))];
      if (texts.length === 0) return ALLOW;
      const aws = await secret();
      if (!aws.region) throw new VendorError(VENDOR, 'no region: set region, or a region field on the credential');
      const url = `${trimBase(params.baseUrl ?? `https://bedrock-runtime.${aws.region}.amazonaws.com`)}${path}`;
      const body = JSON.stringify({ source: input.side === 'input' ? 'INPUT' : 'OUTPUT', content: texts.map((text) => ({ text: { text } })) });
      const signed = signRequest(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
        { accessKeyId: aws.accessKeyId, secretAccessKey: aws.secretAccessKey, sessionToken: aws.sessionToken },
        { region: aws.region, service: 'bedrock' },
        new Date(dependencies.clock.now()),
      );
      const answer = await postJson(dependencies.http, VENDOR, url, undefined, signed.headers, params.timeoutMs ?? DEFAULT_VENDOR_TIMEOUT_MS, body);
      const action = isRecord(answer) ? answer.action : undefined;
      if (action === 'NONE') return ALLOW;
      if (action !== 'GUARDRAIL_INTERVENED') throw new VendorError(VENDOR, 'answer has no action');
      const reasons = interventionReasons((answer as { assessments?: unknown }).assessments);
      return { action: 'deny', reason: `${VENDOR}: intervened${reasons.length ? ` (${reasons.join(', ')})` : ''}` };
    };
  },
);
