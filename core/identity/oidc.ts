import { createHash, randomBytes } from 'node:crypto';
import type { ResolvedSsoProvider } from '../../config/index.js';
import { ASYMMETRIC_ALGORITHMS } from '../spec/signature-algorithms.js';
import { JwksCache, type JsonFetcher, loadJose } from './jwks.js';

/** Who the identity provider says signed in, from a verified ID token. */
export interface SignInIdentity {
  /** The gateway's id of the provider (`auth.sso[].id`, `oidc` for the one configured by environment). */
  readonly provider: string;
  readonly issuer: string;
  /** The ID token's `sub`: stable per person and provider. */
  readonly subject: string;
  /** The `email` claim, lower-cased; empty when the provider sent none. */
  readonly email: string;
  /** `email_verified` is true (for Entra ID, `xms_edov`); a sign-in without it is refused before the handler. */
  readonly emailVerified: boolean;
  readonly name?: string;
  /** The provider's `groupsClaim` (strings only). */
  readonly groups: readonly string[];
  /** Every claim of the verified ID token. */
  readonly claims: Readonly<Record<string, unknown>>;
}

/**
 * Decides who a verified identity is on this gateway: a principal (a user id) the dashboard session is
 * bound to, or a refusal with a sentence shown to the person. Injected by whoever owns the users.
 */
export type SignInHandler = (identity: SignInIdentity) => Promise<{ principal: string } | { refused: string }>;

/** The handler until a user directory is wired: single sign-on grants nothing by itself. */
export const refuseEveryone: SignInHandler = async () => ({
  refused: 'This gateway has no user directory yet, so single sign-on grants no access. Ask its operator.',
});

/** Where sign-ins in progress are kept: the state store's records, so any instance can finish one. */
export interface FlowRecords {
  get(key: string): Promise<unknown>;
  set(key: string, value: PendingSignIn, ttlMs: number): Promise<unknown>;
  delete(key: string): Promise<unknown>;
}

/** A sign-in between the redirect to the provider and its callback. No token is ever kept. */
export interface PendingSignIn {
  readonly provider: string;
  readonly state: string;
  readonly nonce: string;
  /** The PKCE code verifier. */
  readonly verifier: string;
  readonly redirectUri: string;
  readonly expiresAt: number;
}

/** A sign-in that cannot go on; `message` is safe to show (it never holds a token or a code). */
export class SignInRefused extends Error {}

export interface OidcSignInOptions {
  /** Milliseconds since the epoch (the gateway's clock): flow expiry and key refreshes. */
  readonly now?: () => number;
  /** The shared store once it is open; before, sign-ins in progress are kept in memory (bounded). */
  readonly records?: () => FlowRecords | undefined;
  /** How long a sign-in may take between the redirect and the callback (default 10 minutes). */
  readonly flowTtlMs?: number;
  /** Spacing of key-set refreshes on an unknown `kid` (default 30 s). */
  readonly refreshCooldownMs?: number;
  readonly fetcher?: JsonFetcher;
}

type OpenIdClient = typeof import('openid-client');
interface Discovered {
  readonly configuration: import('openid-client').Configuration;
  readonly keys: JwksCache;
}

const RECORD_PREFIX = 'oidc-flow:';
const MAX_PENDING_IN_MEMORY = 1000;
const random = (): string => randomBytes(32).toString('base64url');
const digest = (value: string): string => createHash('sha256').update(value).digest('base64url');
/** The ID token's times are accepted this many seconds off. */
const CLOCK_TOLERANCE_SECONDS = 30;

/** Plain http is accepted for issuers on this machine only (a local Keycloak); elsewhere tokens and secrets would cross the network in clear. */
const isLoopback = (url: URL): boolean => url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);

/**
 * OpenID Connect sign-in with the authorization code flow, PKCE (S256), `state` and `nonce`, for
 * the configured providers. `openid-client` discovers each provider (once, on its first sign-in)
 * and performs the code exchange, checking state, issuer, audience, expiry and nonce; the ID token's
 * signature is then verified with `jose` against the provider's cached key set, refreshed when a
 * token names a key it lacks (a rotation).
 */
export class OidcSignIn {
  private readonly byId = new Map<string, ResolvedSsoProvider>();
  private readonly discovered = new Map<string, Promise<Discovered>>();
  private readonly memory = new Map<string, PendingSignIn>();
  private readonly now: () => number;
  private readonly flowTtlMs: number;
  private client?: Promise<OpenIdClient>;

  constructor(
    providers: readonly ResolvedSsoProvider[],
    private readonly options: OidcSignInOptions = {},
  ) {
    for (const provider of providers) this.byId.set(provider.id, provider);
    this.now = options.now ?? Date.now;
    this.flowTtlMs = options.flowTtlMs ?? 10 * 60_000;
  }

  /** The configured providers, for the sign-in page. */
  get providers(): { id: string; name: string }[] {
    return [...this.byId.values()].map(({ id, name }) => ({ id, name }));
  }

  /**
   * Starts a sign-in with a provider (the only one when `providerId` is absent): keeps its state,
   * nonce and code verifier under a new flow id (for the browser's cookie) and returns the
   * provider's authorization URL.
   */
  async begin(providerId: string | undefined, redirectUri: string): Promise<{ flowId: string; location: string }> {
    const provider = this.providerOf(providerId);
    const client = await this.openIdClient();
    const { configuration } = await this.discover(provider);
    const pending: PendingSignIn = {
      provider: provider.id,
      state: random(),
      nonce: random(),
      verifier: client.randomPKCECodeVerifier(),
      redirectUri,
      expiresAt: this.now() + this.flowTtlMs,
    };
    const location = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: provider.scopes.join(' '),
      response_type: 'code',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    const flowId = random();
    await this.keep(flowId, pending);
    return { flowId, location: location.href };
  }

  /**
   * Finishes the sign-in the flow id (the browser's cookie) names, with the callback's query string:
   * exchanges the code and verifies the ID token. The flow is used up either way. Throws
   * {@link SignInRefused} for anything that does not verify.
   */
  async finish(flowId: string | undefined, callbackQuery: string): Promise<SignInIdentity> {
    const pending = await this.take(flowId);
    if (pending === undefined) throw new SignInRefused('This sign-in has expired or was started in another browser. Start again.');
    const provider = this.byId.get(pending.provider);
    if (provider === undefined) throw new SignInRefused('This sign-in names a provider that is no longer configured.');
    const client = await this.openIdClient();
    const { configuration, keys } = await this.discover(provider);
    const callbackUrl = new URL(pending.redirectUri);
    callbackUrl.search = callbackQuery;
    let idToken: string | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      idToken = tokens.id_token;
    } catch (error) {
      throw new SignInRefused(`The identity provider's answer did not verify (${reasonOf(error)}).`, { cause: error });
    }
    if (idToken === undefined) throw new SignInRefused('The identity provider sent no ID token.');
    let claims: Record<string, unknown>;
    const { jwtVerify } = await loadJose();
    try {
      ({ payload: claims } = await jwtVerify(idToken, keys.getKey, {
        issuer: provider.issuer,
        audience: provider.clientId,
        algorithms: [...ASYMMETRIC_ALGORITHMS],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(this.now()),
        requiredClaims: ['exp', 'iat', 'sub', 'nonce'],
      }));
    } catch (error) {
      throw new SignInRefused(`The ID token's signature did not verify (${reasonOf(error)}).`, { cause: error });
    }
    if (claims.nonce !== pending.nonce) throw new SignInRefused('The ID token is not for this sign-in (nonce).');
    return identityOf(provider, claims);
  }

  /** Ends a sign-in without finishing it (the provider answered with an error). */
  async discard(flowId: string | undefined): Promise<void> {
    await this.take(flowId);
  }

  private providerOf(providerId: string | undefined): ResolvedSsoProvider {
    if (providerId === undefined) {
      if (this.byId.size === 1) return this.byId.values().next().value!;
      throw new SignInRefused(`Choose a provider: ${this.providers.map(({ id }) => id).join(', ')}.`);
    }
    const provider = this.byId.get(providerId);
    if (provider === undefined) throw new SignInRefused('No single sign-on provider has that id.');
    return provider;
  }

  private openIdClient(): Promise<OpenIdClient> {
    // Loaded on the first sign-in: most gateways never sign anyone in through a provider.
    this.client ??= import('openid-client');
    return this.client;
  }

  /** The provider's discovered configuration, kept; a failed discovery is tried again at the next sign-in. */
  private discover(provider: ResolvedSsoProvider): Promise<Discovered> {
    let found = this.discovered.get(provider.id);
    if (found === undefined) {
      found = this.discoverNow(provider);
      found.catch(() => this.discovered.delete(provider.id));
      this.discovered.set(provider.id, found);
    }
    return found;
  }

  private async discoverNow(provider: ResolvedSsoProvider): Promise<Discovered> {
    const client = await this.openIdClient();
    const issuer = new URL(provider.issuer);
    const insecure = issuer.protocol === 'http:';
    if (insecure && !isLoopback(issuer)) throw new SignInRefused(`The issuer of ${provider.id} is not https.`);
    let configuration: import('openid-client').Configuration;
    try {
      configuration = await client.discovery(issuer, provider.clientId, undefined, client.ClientSecretBasic(provider.clientSecret), {
        timeout: 10,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      });
    } catch (error) {
      throw new SignInRefused(`The identity provider ${provider.id} could not be reached or described itself wrongly (${reasonOf(error)}).`, { cause: error });
    }
    const jwksUri = configuration.serverMetadata().jwks_uri;
    if (jwksUri === undefined) throw new SignInRefused(`The identity provider ${provider.id} publishes no jwks_uri.`);
    const keys = new JwksCache(() => Promise.resolve(jwksUri), { now: this.now, cooldownMs: this.options.refreshCooldownMs, fetcher: this.options.fetcher });
    return { configuration, keys };
  }

  private async keep(flowId: string, pending: PendingSignIn): Promise<void> {
    const shared = this.options.records?.();
    if (shared) {
      await shared.set(RECORD_PREFIX + digest(flowId), pending, this.flowTtlMs);
      return;
    }
    const now = this.now();
    for (const [key, value] of this.memory) if (value.expiresAt <= now) this.memory.delete(key);
    while (this.memory.size >= MAX_PENDING_IN_MEMORY) this.memory.delete(this.memory.keys().next().value!);
    this.memory.set(digest(flowId), pending);
  }

  /** The pending sign-in of a flow id, removed so that a callback cannot be replayed. */
  private async take(flowId: string | undefined): Promise<PendingSignIn | undefined> {
    if (!flowId) return undefined;
    const key = digest(flowId);
    const shared = this.options.records?.();
    let pending: PendingSignIn | undefined;
    if (shared) {
      pending = (await shared.get(RECORD_PREFIX + key)) as PendingSignIn | undefined;
      if (pending !== undefined) await shared.delete(RECORD_PREFIX + key);
    } else {
      pending = this.memory.get(key);
      this.memory.delete(key);
    }
    return pending !== undefined && pending.expiresAt > this.now() ? pending : undefined;
  }
}

/** A short reason from a library's error: its code, or its message's first sentence (they never quote tokens). */
function reasonOf(error: unknown): string {
  // openid-client wraps oauth4webapi's specific error ("unexpected \"state\" ...") in a general one.
  let innermost = error;
  for (let depth = 0; depth < 3 && (innermost as { cause?: unknown } | undefined)?.cause instanceof Error; depth++) innermost = (innermost as { cause: Error }).cause;
  const { code, message } = (innermost ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message.split(/[.\n]/)[0].slice(0, 120) : 'unknown error';
  return typeof code === 'string' ? `${code}: ${text}` : text;
}

/**
 * `email_verified`; Microsoft Entra ID sends none for work accounts, and says the same with its optional
 * `xms_edov` claim (the email's domain is verified by the tenant's owner), taken only without `email_verified`.
 */
function emailVerified(claims: Record<string, unknown>): boolean {
  if (claims.email_verified !== undefined) return claims.email_verified === true || claims.email_verified === 'true';
  return claims.xms_edov === true || claims.xms_edov === 'true' || claims.xms_edov === '1' || claims.xms_edov === 1;
}

function identityOf(provider: ResolvedSsoProvider, claims: Record<string, unknown>): SignInIdentity {
  const groupsClaim = claims[provider.groupsClaim];
  const groups = Array.isArray(groupsClaim) ? groupsClaim.filter((group): group is string => typeof group === 'string') : typeof groupsClaim === 'string' ? [groupsClaim] : [];
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  return {
    provider: provider.id,
    issuer: provider.issuer,
    subject: String(claims.sub),
    email,
    emailVerified: email !== '' && emailVerified(claims),
    ...(typeof claims.name === 'string' ? { name: claims.name } : {}),
    groups,
    claims,
  };
}
