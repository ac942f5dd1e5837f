import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { ResolvedJwtIssuer } from '../../config/index.js';
import { errors, GatewayError } from '../errors.js';
import type { KeyResolution, KeyResolver } from '../spec/key-resolver.js';
import { discoverJwksUri, type JsonFetcher, JwksCache, KeySetUnavailable, loadJose } from './jwks.js';

/** A token's claims once its signature, issuer, audience and times are verified. */
export type VerifiedClaims = JWTPayload & { readonly iss: string };

/**
 * Maps a verified token to a gateway caller: its team's or service account's resolution (limits,
 * route, policy), or undefined when nothing maps it (401 `jwt_not_mapped`). Injected by whoever owns
 * the service accounts and teams.
 */
export type ClaimsMapper = (claims: VerifiedClaims) => Promise<KeyResolution | undefined>;

/** Every JSON Web Token in compact form starts with the base64url of `{"`. */
export const JWT_PREFIX = 'eyJ';

/** `exp` and `nbf` are accepted this many seconds off, for clocks that drift. */
const CLOCK_TOLERANCE_SECONDS = 30;

export interface JwtIssuersOptions {
  /** Milliseconds since the epoch (the gateway's clock): token times and key refreshes. */
  readonly now?: () => number;
  /** Spacing of key-set refreshes on an unknown `kid` (default 30 s). */
  readonly refreshCooldownMs?: number;
  readonly fetcher?: JsonFetcher;
}

const invalid = (message: string): GatewayError => errors.authentication(message, { code: 'invalid_jwt' });

/** Why jose refused a token, in words that never quote it. */
function refusal(error: unknown): GatewayError {
  if (error instanceof KeySetUnavailable) return errors.badGateway("The token's issuer keys could not be fetched; try again shortly.", { code: 'jwt_keys_unavailable' });
  const { code, claim } = error as { code?: string; claim?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return invalid('The token has expired.');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return invalid(claim === 'nbf' ? 'The token is not valid yet (nbf).' : `The token's ${claim ?? 'claims'} claim is not accepted.`);
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return invalid("The token's signature algorithm is not accepted.");
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return invalid('The token is signed with a key its issuer does not publish.');
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return invalid("The token's signature is not valid.");
    default:
      return invalid('The token is not a well-formed signed JWT.');
  }
}

/** The `iss` of a compact JWT, read without verifying anything (to pick the issuer); undefined if it is not one. */
function unverifiedIssuer(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { iss?: unknown } | null;
    return typeof payload?.iss === 'string' ? payload.iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The configured JWT issuers: each with its audience, algorithm allow-list (asymmetric only; `none`
 * and HMAC refused) and its cached key set ({@link JwksCache}: by `jwksUri` or the issuer's discovery).
 */
export class JwtIssuers {
  private readonly byIssuer = new Map<string, { readonly settings: ResolvedJwtIssuer; readonly keys: JwksCache }>();
  private readonly now: () => number;
  /** Verified tokens by their SHA-256: the claims and the key set they were checked against. */
  private readonly verified = new Map<string, { readonly claims: VerifiedClaims; readonly set: object }>();

  constructor(issuers: readonly ResolvedJwtIssuer[], options: JwtIssuersOptions = {}) {
    this.now = options.now ?? Date.now;
    for (const settings of issuers) {
      const locate = settings.jwksUri === undefined ? () => discoverJwksUri(settings.issuer, options.fetcher) : () => Promise.resolve(settings.jwksUri!);
      const keys = new JwksCache(locate, { now: this.now, cooldownMs: options.refreshCooldownMs, fetcher: options.fetcher });
      this.byIssuer.set(settings.issuer, { settings, keys });
    }
  }

  /** Whether a value is a JWT that names a configured issuer (no signature check: a cheap test for where a key may be). */
  claims(value: string): boolean {
    if (!value.startsWith(JWT_PREFIX)) return false;
    const issuer = unverifiedIssuer(value);
    return issuer !== undefined && this.byIssuer.has(issuer);
  }

  /**
   * The token's claims once verified; a 401 `invalid_jwt` that says why otherwise (502
   * `jwt_keys_unavailable` when the keys cannot be had). A workload sends the same token for its
   * whole life, so a verification is reused (by the token's SHA-256) while the token is within its
   * `exp` and `nbf` and the key set it was checked against is still the fresh one: a signature check
   * costs ~60 µs, a reuse ~2 µs; a refreshed set (a key retired) makes every token verify again.
   */
  async verify(token: string): Promise<VerifiedClaims> {
    const issuer = unverifiedIssuer(token);
    const entry = issuer === undefined ? undefined : this.byIssuer.get(issuer);
    if (entry === undefined) throw invalid('The token is not from a configured issuer.');
    const { settings, keys } = entry;
    const digest = createHash('sha256').update(token).digest('base64url');
    const reused = this.verified.get(digest);
    const seconds = this.now() / 1000;
    if (reused !== undefined && reused.set === keys.freshSet && reused.claims.exp! > seconds && (reused.claims.nbf ?? 0) <= seconds + CLOCK_TOLERANCE_SECONDS) return reused.claims;
    const claims = await this.check(token, settings, keys);
    const set = keys.freshSet;
    if (set !== undefined) {
      if (this.verified.size >= MAX_VERIFIED) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(digest, { claims, set });
    }
    return claims;
  }

  private async check(token: string, settings: ResolvedJwtIssuer, keys: JwksCache): Promise<VerifiedClaims> {
    const { jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(token, keys.getKey, {
        issuer: settings.issuer,
        audience: [...settings.audience],
        algorithms: [...settings.algorithms],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(this.now()),
        requiredClaims: ['exp'],
      });
      return Object.freeze(payload) as VerifiedClaims;
    } catch (error) {
      throw refusal(error);
    }
  }
}

/** Verified tokens kept for reuse (the oldest dropped first). */
const MAX_VERIFIED = 10_000;

/**
 * The auth stage's resolver of bearer JWTs: a token of a configured issuer is verified, then mapped
 * to a caller by `mapClaims`. Without a mapper, or when it maps nothing, a verified token is 401
 * `jwt_not_mapped`: a verified signature alone grants nothing.
 */
export function jwtKeyResolver(issuers: JwtIssuers, mapClaims?: ClaimsMapper): KeyResolver {
  return {
    prefix: JWT_PREFIX,
    claims: (value) => issuers.claims(value),
    async resolve(token) {
      const claims = await issuers.verify(token);
      const resolution = mapClaims === undefined ? undefined : await mapClaims(claims);
      if (resolution === undefined) {
        throw errors.authentication('The token is valid, but no service account or rule of this gateway maps it to a caller.', { code: 'jwt_not_mapped' });
      }
      return resolution;
    },
  };
}
