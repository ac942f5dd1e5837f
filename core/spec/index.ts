export * from './conformance.js';
export * from './content-parts.js';
export * from './fake-render.js';
export * from './guardrail.js';
export * from './is-record.js';
export * from './key-resolver.js';
export * from './manifest.js';
export * from './messages.js';
export * from './provider.js';
export * from './stage.js';
export * from './unified.js';
export * from './responses.js';

// The plugin toolkit: everything a provider or guardrail needs from the core, so that plugin code
// imports only this module (and `plugins/shared`). Lint enforces it (`.ci/eslint.config.js`).

/** Errors: the one catalogue (`errors.invalidRequest(message, { param, code })` refuses a request) and the status-to-type table. */
export { ERROR_TYPE_BY_STATUS, errors, errorTypeForStatus, GatewayError } from '../errors.js';
/** Multipart: re-encodes a spooled form upstream, files byte for byte. */
export { encodeMultipart } from '../http/multipart.js';
/** Server-sent events: the decoder, one event's framing, the end marker. */
export { SSE_DONE, SseDecoder, sseData } from '../http/sse.js';
/** Guardrails: declaring one, and the span helpers most of them share. */
export { ALLOW, countByKind, defineGuardrail, disjoint, escapeRegExp, findSpans, replaceSpans, spanValues, type GuardrailCheck, type Span } from '../guardrails/define.js';
/** Guardrail policies, as `gateway.config.ts` declares them. */
export { step, type FailMode, type GuardrailStep, type PolicyDefinition, type StreamWindow } from '../guardrails/policy.js';

// The configuration (config/) imports only this module; what it names from the rest of core is re-exported here.
export { BootError } from '../errors.js';
export type { Hook, Next } from '../pipeline/hook.js';
export type { PricingOptions } from '../vault/pricing.js';
/** Routes, as `gateway.config.ts` names them (`routes`, `models`), and the circuit breaker settings. */
export { parseRoute, parseRouteCache, type Route, type RouteCache, type CacheEmbedding, type Target, type Strategy, type RetryPolicy } from '../routing/route.js';
export { DEFAULT_BREAKER, DEFAULT_RETRY, type BreakerSettings, type RetrySettings } from '../routing/state.js';
export { toolInput } from './tool-input.js';
export { unifiedMessagesUsage, messagesUsage } from './messages-usage.js';
