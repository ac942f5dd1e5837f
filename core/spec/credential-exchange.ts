import type { ProviderTarget, UpstreamRequest } from './provider.js';

/** What a {@link CredentialExchange} gives for a credential: the token sent upstream, and when it stops being valid. */
export interface ExchangedCredential {
  readonly token: string;
  /** When the token expires (epoch milliseconds); absent: kept five minutes. */
  readonly expiresAt?: number;
}

/**
 * A credential the provider exchanges before use (an API key for a short-lived access token), as a
 * pair of pure functions: the core sends the token request, with the same egress policy and
 * time-out as the provider's own calls, keeps the token per credential (keyed by a hash of the
 * token request, so never by the secret), makes one exchange for concurrent first requests, asks
 * again shortly before `expiresAt` (a minute before, or half the lifetime of a short token), and
 * once more after an upstream 401 (the request is then retried once). The token reaches `auth()`
 * as `target.credentials.exchangedToken`. An answer of the token endpoint that is not a 2xx, or
 * that `fromUpstream` cannot read, is a 401 `credential_exchange_refused` (4xx) or a 502
 * `credential_exchange_failed` naming only the provider; the secret is never in it.
 */
export interface CredentialExchange {
  /** Whether this target's credential is exchanged; false: `auth()` gets it as it is (a ready token). */
  applies(target: ProviderTarget): boolean;
  /** The token request, from the target's credential (e.g. a form-encoded `POST` to the token endpoint). */
  toUpstream(target: ProviderTarget): UpstreamRequest;
  /** The token from the endpoint's JSON answer; throws when there is none. */
  fromUpstream(body: unknown): ExchangedCredential;
}
