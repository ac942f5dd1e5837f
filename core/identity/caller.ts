import type { AccountKey } from './account-key.js';
import { errors, GatewayError } from '../errors.js';
import type { FailedAuthLimiter } from './failed-auth.js';
import type { GatewayKeyTest } from '../http/forwarded-headers.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { Caller, KeyResolution, KeyResolutionContext, KeyResolver } from '../spec/key-resolver.js';

export type { GatewayKeyTest } from '../http/forwarded-headers.js';

/** Whether a value is a key of this resolver: its prefix, and its own test when it has one ({@link KeyResolver.claims}). */
const owns = (resolver: KeyResolver, value: string): boolean => value.startsWith(resolver.prefix) && (resolver.claims === undefined || resolver.claims(value));

/**
 * Whether a value is a gateway key: a value a registered {@link KeyResolver} claims by its prefix
 * (`vk-…`, whether or not such a key exists), or the account key (compared by hash, and only for
 * values of the account key's length: {@link AccountKey.mayMatch}), or a JWT of a configured issuer
 * ({@link KeyResolver.claims}). No store is asked: this runs
 * wherever a value could go upstream, so it stays a prefix test, a length test and at most one hash.
 */
export function gatewayKeyTest(accountKey: AccountKey, keyResolvers: readonly KeyResolver[]): GatewayKeyTest {
  return (value) => {
    for (const resolver of keyResolvers) if (owns(resolver, value)) return true;
    return accountKey.mayMatch(value) && accountKey.matches(value);
  };
}

/** Headers that may carry the gateway key when `x-gateway-api-key` is absent, in the order they are read. */
const KEY_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-goog-api-key'] as const;

/**
 * The gateway key of a request and the headers the rest of the stage reads: `x-gateway-api-key`,
 * else a virtual key (a resolver's prefix), a JWT of a configured issuer or the account key in
 * `Authorization: Bearer`, `x-api-key`, `api-key` or `x-goog-api-key` (the Gemini API's; its `?key=`
 * is moved there by the Gemini routes) — a tool that can set only a base URL and an API key then works. A key
 * found in one of those headers is the gateway's, so that header is dropped from the headers
 * returned: it is never taken for the provider credential nor forwarded.
 */
export function gatewayKeyOf(
  incoming: Readonly<Record<string, string | undefined>>,
  accountKey: AccountKey,
  keyResolvers: readonly KeyResolver[],
): { key: string; headers: Readonly<Record<string, string | undefined>> } | undefined {
  const explicit = incoming['x-gateway-api-key'];
  if (explicit) return { key: explicit, headers: incoming };
  for (const name of KEY_HEADERS) {
    const raw = incoming[name];
    if (!raw) continue;
    const value = name === 'authorization' ? /^Bearer\s+(\S+)\s*$/i.exec(raw)?.[1] : raw.trim();
    if (!value) continue;
    if (keyResolvers.some((resolver) => owns(resolver, value)) || accountKey.matches(value)) {
      const { [name]: _gatewayKey, ...rest } = incoming;
      return { key: value, headers: rest };
    }
  }
  return undefined;
}

/** What identifying a key needs: the account key, the resolvers of other keys, the failed-attempt counter. */
export interface CallerKeys {
  accountKey: AccountKey;
  keyResolvers: KeyResolver[];
  /** Counts wrong keys per client address; absent: not limited. */
  failedAuth?: FailedAuthLimiter;
}

/**
 * Who the key belongs to, or a 401 (429 `too_many_failed_auth` once the client address, or all
 * clients, failed too often: see {@link FailedAuthLimiter}).
 */
export async function identify(key: string, context: Pick<GatewayContext, 'incoming'> & KeyResolutionContext, keys: CallerKeys): Promise<KeyResolution> {
  let resolver: KeyResolver | undefined;
  for (const candidate of keys.keyResolvers) {
    if (owns(candidate, key)) {
      resolver = candidate;
      break;
    }
  }
  let resolution: KeyResolution | undefined;
  try {
    resolution = resolver ? await resolver.resolve(key, context) : keys.accountKey.matches(key) ? ACCOUNT : undefined;
  } catch (error) {
    throw error instanceof GatewayError && error.status === 401 ? refused(error, context, keys.failedAuth) : error;
  }
  if (resolution === undefined) throw refused(errors.authentication('The x-gateway-api-key is not valid.', { code: 'invalid_api_key' }), context, keys.failedAuth);
  return resolution;
}

/** The account key's resolution (the same for every request: nothing mutates it). */
const ACCOUNT: KeyResolution = Object.freeze({ caller: Object.freeze({ type: 'account' as const }) });

/** A failed authentication, counted for the client address (429 once it failed too often). */
const refused = (error: GatewayError, context: Pick<GatewayContext, 'incoming'>, failedAuth: FailedAuthLimiter | undefined): GatewayError =>
  failedAuth?.failure(context.incoming.clientAddress ?? 'unknown', error) ?? error;

/**
 * Identifies the caller of a request served outside the pipeline (the stored responses' routes)
 * the way the auth stage does: the same key headers, resolvers and failed-attempt counting; 401 or
 * 429 as there.
 */
export function callerIdentifier(dependencies: {
  accountKey: AccountKey;
  keyResolvers?: KeyResolver[];
  failedAuth?: FailedAuthLimiter;
}): (incoming: GatewayContext['incoming']) => Promise<Caller> {
  const keys = { accountKey: dependencies.accountKey, keyResolvers: dependencies.keyResolvers ?? [], failedAuth: dependencies.failedAuth };
  return async (incoming) => {
    const found = gatewayKeyOf(incoming.headers, keys.accountKey, keys.keyResolvers);
    if (!found) throw errors.authentication('Missing x-gateway-api-key header: send your account API key or a virtual key.', { code: 'missing_api_key' });
    return (await identify(found.key, { incoming }, keys)).caller;
  };
}
