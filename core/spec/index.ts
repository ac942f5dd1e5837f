export * from './guardrail.js';
export * from './hook.js';
export * from './manifest.js';
export * from './provider.js';
export * from './stage.js';
export * from './unified.js';
// The configuration (config/) imports only this contract; what it names from the rest of core is re-exported here.
export { BootError } from '../errors.js';
export type { PolicyDefinition } from '../guardrails/policy.js';
export type { Caller } from '../pipeline/context.js';
export type { PricingOptions } from '../vault/pricing.js';
