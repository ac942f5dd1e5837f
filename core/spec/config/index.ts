// The configuration's contract: what `config/` (and so a `gateway.config.ts`) names from the core
// besides the provider and guardrail contracts. `config/` imports it through `core/spec` (its index).

export { BootError } from '../../errors.js';
export type { Hook, Next } from '../../pipeline/hook.js';
export type { PricingOptions } from '../../vault/pricing.js';
/** Routes, as `gateway.config.ts` names them (`routes`, `models`), and the circuit breaker settings. */
export { parseRoute, parseRouteCache, type Route, type RouteCache, type CacheEmbedding, type Target, type Strategy, type RetryPolicy } from '../../routing/route.js';
export { DEFAULT_BREAKER, DEFAULT_RETRY, type BreakerSettings, type RetrySettings } from '../../routing/state.js';
/** The pipeline's stages, which a configured hook names. */
export * from '../stage.js';
/** The signature algorithms `auth.jwt` may allow. */
export { ASYMMETRIC_ALGORITHMS } from '../signature-algorithms.js';
/** Who called, and the contract a key resolver (the vault) implements for the auth stage. */
export * from '../key-resolver.js';
/** Identity-provider groups and JWT claims mapped to roles and teams (`organization` in the configuration). */
export type { GroupRule, JwtRule } from '../../org/rules.js';
