/** The built-in guardrail plugins (`llm-gateway/guardrails`), and what a custom one is built with. */
export { allowedModels, type AllowedModelsParams } from './allowed-models/index.js';
export { allowedOperations, type AllowedOperationsParams } from './allowed-operations/index.js';
export { azureContentSafety, type AzureContentSafetyParams } from './azure-content-safety/index.js';
export { bannedWords, type BannedWordsParams } from './banned-words/index.js';
export { bedrockGuardrails, type BedrockGuardrailsParams } from './bedrock-guardrails/index.js';
export { codeDetection, type CodeDetectionParams } from './code-detection/index.js';
export { jsonOutput, type JsonOutputParams } from './json-output/index.js';
export { jsonSchema, type JsonSchemaParams } from './json-schema/index.js';
export { lakeraGuard, type LakeraGuardParams } from './lakera-guard/index.js';
export { lengthBounds, type LengthBoundsParams } from './length-bounds/index.js';
export { llmJudge, type LlmJudgeParams } from './llm-judge/index.js';
export { maxTokens, type MaxTokensParams } from './max-tokens/index.js';
export { modelArmor, type ModelArmorParams } from './model-armor/index.js';
export { openaiModeration, type OpenAIModerationParams } from './openai-moderation/index.js';
export { pii, type PiiAction, type PiiParams } from './pii/index.js';
export { presidio, type PresidioParams } from './presidio/index.js';
export { promptInjection, type PromptInjectionParams } from './prompt-injection/index.js';
export { regex, type RegexParams } from './regex/index.js';
export { requiredMetadata, type RequiredMetadataParams } from './required-metadata/index.js';
export { requiredWords, type RequiredWordsParams } from './required-words/index.js';
export { urlAllowlist, type UrlAllowlistParams } from './url-allowlist/index.js';
export { webhook, type WebhookParams } from './webhook/index.js';
import { allowedModels } from './allowed-models/index.js';
import { allowedOperations } from './allowed-operations/index.js';
import { azureContentSafety } from './azure-content-safety/index.js';
import { bannedWords } from './banned-words/index.js';
import { bedrockGuardrails } from './bedrock-guardrails/index.js';
import { codeDetection } from './code-detection/index.js';
import { jsonOutput } from './json-output/index.js';
import { jsonSchema } from './json-schema/index.js';
import { lakeraGuard } from './lakera-guard/index.js';
import { lengthBounds } from './length-bounds/index.js';
import { llmJudge } from './llm-judge/index.js';
import { maxTokens } from './max-tokens/index.js';
import { modelArmor } from './model-armor/index.js';
import { openaiModeration } from './openai-moderation/index.js';
import { pii } from './pii/index.js';
import { presidio } from './presidio/index.js';
import { promptInjection } from './prompt-injection/index.js';
import { regex } from './regex/index.js';
import { requiredMetadata } from './required-metadata/index.js';
import { requiredWords } from './required-words/index.js';
import { urlAllowlist } from './url-allowlist/index.js';
import { webhook } from './webhook/index.js';

/** Every built-in guardrail factory (register them in `guardrails` to list them all at /admin/plugins). */
export const builtinGuardrails = [
  regex,
  bannedWords,
  requiredWords,
  lengthBounds,
  pii,
  jsonOutput,
  jsonSchema,
  allowedModels,
  maxTokens,
  requiredMetadata,
  allowedOperations,
  codeDetection,
  urlAllowlist,
  promptInjection,
  webhook,
  openaiModeration,
  azureContentSafety,
  bedrockGuardrails,
  lakeraGuard,
  modelArmor,
  presidio,
  llmJudge,
] as const;

export {
  ALLOW,
  countByKind,
  defineGuardrail,
  disjoint,
  findSpans,
  replaceSpans,
  spanValues,
  step,
  type GuardrailChanges,
  type GuardrailCheck,
  type GuardrailFactory,
  type GuardrailInput,
  type GuardrailManifest,
  type GuardrailParameters,
  type GuardrailPlugin,
  type GuardrailRegistration,
  type GuardrailSide,
  type GuardrailStep,
  type GuardrailVerdict,
  type PolicyDefinition,
  type Span,
  type StreamWindow,
} from '../../core/spec/index.js';
