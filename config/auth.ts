import { ASYMMETRIC_ALGORITHMS, BootError } from '../core/spec/index.js';

/** One OpenID Connect provider the dashboard signs people in with (docs/sso.md). */
export interface SsoProviderConfig {
  /** Names the provider in `/dashboard/auth/login?provider=<id>`: letters, digits, `-` and `_`. */
  id: string;
  /** The issuer identifier; its `/.well-known/openid-configuration` is read at the first sign-in. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The ID token claim that lists the person's groups (default `groups`). */
  groupsClaim?: string;
  /** Scopes asked for (default `openid email profile`; `openid` is always added). */
  scopes?: string[];
  /** Shown on the sign-in button (default: the id). */
  name?: string;
}

/** A JSON Web Token issuer whose tokens API callers may present instead of a virtual key. */
export interface JwtIssuerConfig {
  /** The `iss` the tokens carry, exactly. */
  issuer: string;
  /** The `aud` a token must carry (one of these when several). */
  audience: string | string[];
  /** Accepted signature algorithms (default: RS256/384/512, PS256/384/512, ES256/384/512, EdDSA, Ed25519). HMAC is never accepted. */
  algorithms?: string[];
  /** The issuer's JWK Set; absent: `jwks_uri` of the issuer's OpenID discovery document. */
  jwksUri?: string;
}

/** Sign-in through identity providers and JSON Web Token callers, and the account key's reach. */
export interface AuthConfig {
  /** `'disabled'` turns the account key off for the admin API and the dashboard once an active owner user exists (docs/organizations.md). Default `'enabled'`. */
  accountKey?: 'enabled' | 'disabled';
  /** OpenID Connect providers for the dashboard (env `GATEWAY_OIDC_*` adds one with id `oidc`). */
  sso?: SsoProviderConfig[];
  /** JWT issuers for API callers (env `GATEWAY_JWT_ISSUER` and `GATEWAY_JWT_AUDIENCE` add one). */
  jwt?: JwtIssuerConfig[];
}

export interface ResolvedSsoProvider {
  readonly id: string;
  readonly name: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly groupsClaim: string;
  readonly scopes: readonly string[];
}

export interface ResolvedJwtIssuer {
  readonly issuer: string;
  readonly audience: readonly string[];
  readonly algorithms: readonly string[];
  readonly jwksUri?: string;
}

export interface ResolvedAuth {
  readonly accountKey: 'enabled' | 'disabled';
  readonly sso: readonly ResolvedSsoProvider[];
  readonly jwt: readonly ResolvedJwtIssuer[];
  /** `GATEWAY_PUBLIC_URL` without a trailing slash; absent: the origin each request came to. */
  readonly publicUrl?: string;
}

const invalid = (message: string): BootError => new BootError('INVALID_CONFIG', message);

function httpUrl(value: unknown, name: string): string {
  let parsed: URL | undefined;
  try {
    parsed = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw invalid(`${name} must be an http:// or https:// URL`);
  return value as string;
}

/**
 * An https URL, or http on this machine (a local Keycloak): keys, codes and secrets fetched over plain
 * http from elsewhere could be swapped on the way.
 */
function secureUrl(value: unknown, name: string): string {
  const url = new URL(httpUrl(value, name));
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol === 'http:' && !loopback) throw invalid(`${name} must be an https:// URL (http:// only for localhost)`);
  return value as string;
}

const text = (value: unknown, name: string): string => {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`${name} must be a non-empty string`);
  return value;
};

function ssoProvider(provider: SsoProviderConfig, field: string): ResolvedSsoProvider {
  if (typeof provider !== 'object' || provider === null) throw invalid(`${field} must be an object`);
  const id = text(provider.id, `${field}.id`);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw invalid(`${field}.id must be 1-64 letters, digits, - or _`);
  const scopes = provider.scopes ?? ['openid', 'email', 'profile'];
  if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) {
    throw invalid(`${field}.scopes must be an array of scope names`);
  }
  return {
    id,
    name: provider.name === undefined ? id : text(provider.name, `${field}.name`),
    issuer: secureUrl(provider.issuer, `${field}.issuer`),
    clientId: text(provider.clientId, `${field}.clientId`),
    clientSecret: text(provider.clientSecret, `${field}.clientSecret`),
    groupsClaim: provider.groupsClaim === undefined ? 'groups' : text(provider.groupsClaim, `${field}.groupsClaim`),
    scopes: scopes.includes('openid') ? [...scopes] : ['openid', ...scopes],
  };
}

function jwtIssuer(issuer: JwtIssuerConfig, field: string): ResolvedJwtIssuer {
  if (typeof issuer !== 'object' || issuer === null) throw invalid(`${field} must be an object`);
  const audiences = Array.isArray(issuer.audience) ? issuer.audience : [issuer.audience];
  if (audiences.length === 0) throw invalid(`${field}.audience must name at least one audience`);
  audiences.forEach((audience, index) => text(audience, `${field}.audience[${index}]`));
  const algorithms = issuer.algorithms ?? [...ASYMMETRIC_ALGORITHMS];
  if (!Array.isArray(algorithms) || algorithms.length === 0) throw invalid(`${field}.algorithms must be a non-empty array`);
  for (const algorithm of algorithms) {
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(algorithm)) {
      throw invalid(`${field}.algorithms: ${JSON.stringify(algorithm)} is not accepted; use asymmetric algorithms (${ASYMMETRIC_ALGORITHMS.join(', ')})`);
    }
  }
  return {
    // Without a jwksUri the keys are found by the issuer's discovery document, so the issuer is a URL.
    issuer: issuer.jwksUri === undefined ? secureUrl(issuer.issuer, `${field}.issuer`) : text(issuer.issuer, `${field}.issuer`),
    audience: audiences,
    algorithms: [...algorithms],
    ...(issuer.jwksUri === undefined ? {} : { jwksUri: secureUrl(issuer.jwksUri, `${field}.jwksUri`) }),
  };
}

/**
 * Checks `auth` and adds what the environment configures: one OpenID Connect provider (`GATEWAY_OIDC_ISSUER`,
 * `GATEWAY_OIDC_CLIENT_ID`, `GATEWAY_OIDC_CLIENT_SECRET`, `GATEWAY_OIDC_GROUPS_CLAIM`), one JWT issuer
 * (`GATEWAY_JWT_ISSUER`, `GATEWAY_JWT_AUDIENCE`) and `GATEWAY_PUBLIC_URL`.
 */
export function resolveAuth(auth: AuthConfig = {}, environment: NodeJS.ProcessEnv): ResolvedAuth {
  if (typeof auth !== 'object' || auth === null) throw invalid('auth must be an object');
  const ssoList = auth.sso ?? [];
  const jwtList = auth.jwt ?? [];
  if (!Array.isArray(ssoList)) throw invalid('auth.sso must be an array of providers');
  if (!Array.isArray(jwtList)) throw invalid('auth.jwt must be an array of issuers');
  const sso = ssoList.map((provider, index) => ssoProvider(provider, `auth.sso[${index}]`));
  if (environment.GATEWAY_OIDC_ISSUER) {
    const fromEnvironment: SsoProviderConfig = {
      id: 'oidc',
      issuer: environment.GATEWAY_OIDC_ISSUER,
      clientId: environment.GATEWAY_OIDC_CLIENT_ID ?? '',
      clientSecret: environment.GATEWAY_OIDC_CLIENT_SECRET ?? '',
      ...(environment.GATEWAY_OIDC_GROUPS_CLAIM ? { groupsClaim: environment.GATEWAY_OIDC_GROUPS_CLAIM } : {}),
    };
    sso.push(ssoProvider(fromEnvironment, 'GATEWAY_OIDC_*'));
  }
  const ids = new Set<string>();
  for (const provider of sso) {
    if (ids.has(provider.id)) throw invalid(`auth.sso: two providers have the id "${provider.id}"`);
    ids.add(provider.id);
  }
  const jwt = jwtList.map((issuer, index) => jwtIssuer(issuer, `auth.jwt[${index}]`));
  if (environment.GATEWAY_JWT_ISSUER) {
    jwt.push(jwtIssuer({ issuer: environment.GATEWAY_JWT_ISSUER, audience: environment.GATEWAY_JWT_AUDIENCE ?? '' }, 'GATEWAY_JWT_*'));
  }
  const issuers = new Set<string>();
  for (const issuer of jwt) {
    if (issuers.has(issuer.issuer)) throw invalid(`auth.jwt: the issuer "${issuer.issuer}" is configured twice`);
    issuers.add(issuer.issuer);
  }
  const publicUrl = environment.GATEWAY_PUBLIC_URL ? httpUrl(environment.GATEWAY_PUBLIC_URL, 'GATEWAY_PUBLIC_URL').replace(/\/+$/, '') : undefined;
  const accountKey = auth.accountKey ?? 'enabled';
  if (accountKey !== 'enabled' && accountKey !== 'disabled') throw invalid(`auth.accountKey must be "enabled" or "disabled" (got ${JSON.stringify(accountKey)})`);
  return { accountKey, sso, jwt, ...(publicUrl === undefined ? {} : { publicUrl }) };
}
