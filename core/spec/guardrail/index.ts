// The guardrail toolkit: the guardrail contract and what a guardrail plugin or a policy needs from
// the core, for guardrail authors (published as `llm-gateway/guardrail`). Guardrail code imports
// only this module or `core/spec` (its index, which re-exports it), and `plugins/shared`.

/** The contract: what a guardrail judges, its verdict, its manifest and registration. */
export * from '../guardrail.js';
/** The plugin manifest and the dependencies `create` receives (logger, HTTP client, clock). */
export * from '../manifest.js';
export * from '../is-record.js';
/** Errors: the one catalogue. */
export { ERROR_TYPE_BY_STATUS, errors, errorTypeForStatus, GatewayError } from '../../errors.js';
/** Declaring a guardrail, and the span helpers most of them share. */
export { ALLOW, countByKind, defineGuardrail, disjoint, escapeRegExp, findSpans, replaceSpans, spanValues, type GuardrailCheck, type Span } from '../../guardrails/define.js';
/** Guardrail policies, as `gateway.config.ts` declares them. */
export { step, type FailMode, type GuardrailStep, type PolicyDefinition, type StreamWindow } from '../../guardrails/policy.js';
