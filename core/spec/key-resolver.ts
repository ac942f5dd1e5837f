import type { ProviderCredentials } from './provider.js';

/**
 * The contract the credential vault implements for the core's auth stage: the core knows keys of
 * one prefix come from somewhere else (virtual keys), never how they are stored.
 */

/** Who called. Virtual keys add their own variant. */
export type Caller =
  | { readonly type: 'account' }
  | { readonly type: 'virtual-key'; readonly id: string; readonly name: string }
  /** A JWT caller mapped to a service account (or a team by a claims rule). */
  | { readonly type: 'service-account'; readonly id: string; readonly name: string; /** The team it acts for (a claims rule's team, or the service account's). */ readonly team?: string };

/**
 * What a {@link KeyResolver} knows about a key: the caller and, for a key bound to a target (a
 * virtual key), the provider, custom host, credentials and guardrail policy that replace the
 * request's own headers.
 */
export interface KeyResolution {
  readonly caller: Caller;
  /** Provider id bound to the key; `x-gateway-provider` is then optional and must agree. */
  readonly provider?: string;
  /** Base URL of a privately hosted endpoint (checked like `x-gateway-custom-host`). */
  readonly customHost?: string;
  /** Used instead of the `Authorization` header. */
  readonly credentials?: ProviderCredentials;
  /** The guardrail policy that applies. */
  readonly policy?: string;
  /** A stored route (id or name) the key sends its requests through, instead of one provider. */
  readonly route?: string;
  /**
   * Other routes the key may name in `x-gateway-config` (stored routes by id, config routes by
   * name). Without them a key takes only its own `route` and model aliases (403 `route_not_allowed`).
   */
  readonly allowedRoutes?: readonly string[];
}

/** The part of a request's context a {@link KeyResolver} may write: the auth stage's `key` slice. */
export interface KeyResolutionContext {
  /** The key's own settings; `logBodies: false` when the key keeps request and response bodies out of the log. */
  key?: { readonly logBodies?: false };
}

/**
 * Resolves a key that carries a recognised prefix (virtual keys plug in here). Returns undefined
 * when the key is not one it knows; may throw a GatewayError (e.g. an expired key). As soon as it
 * knows the key, it sets `context.key` (`{ logBodies: false }` when the key keeps bodies out of the log),
 * so that a request its own checks refuse (an expired key) is covered too.
 */
export interface KeyResolver {
  readonly prefix: string;
  /**
   * When present, a value with the prefix is this resolver's only if `claims` says so: a cheap test
   * with no I/O (a JWT resolver claims only tokens of its configured issuers, so another issuer's JWT,
   * such as a provider's own access token, stays the provider credential).
   */
  claims?(value: string): boolean;
  resolve(key: string, context: KeyResolutionContext): Promise<KeyResolution | undefined>;
}
