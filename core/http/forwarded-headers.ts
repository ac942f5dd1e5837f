import { errors, type GatewayError } from '../errors.js';
import type { ProviderPlugin } from '../spec/provider.js';
import { HOP_BY_HOP } from './headers.js';

/** Headers never forwarded through `x-gateway-forward-headers`: they describe this hop or the gateway. */
const NOT_FORWARDABLE = new Set(['host', 'content-length', 'expect', 'x-gateway-api-key', ...HOP_BY_HOP]);

/**
 * Whether a value is a gateway key (the account key or a virtual key); built by the caller identity
 * (`gatewayKeyTest` in `core/identity/caller.ts`). The header policy only asks it.
 */
export type GatewayKeyTest = (value: string) => boolean;

/** Whether `name` is one of the provider's credential headers (`authorization` always is; `x-amz-*` entries are prefixes). */
function isAuthHeader(name: string, provider: ProviderPlugin): boolean {
  if (name === 'authorization') return true;
  return provider.authHeaders.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1).toLowerCase()) : name === entry.toLowerCase()));
}

/**
 * Why a header named in `x-gateway-forward-headers` may not be forwarded, or undefined when it may:
 * headers of this hop or of the gateway never; the provider's credential headers not while a
 * stored credential is in use (the caller's value would replace or shadow the vault's); `cookie`
 * only when the configuration allows it.
 */
function forwardRefusal(name: string, provider: ProviderPlugin, storedCredential: boolean, forwardCookies: boolean): string | undefined {
  if (NOT_FORWARDABLE.has(name) || name.startsWith('x-gateway-')) return 'it describes this connection or the gateway';
  if (name === 'cookie' && !forwardCookies) return "cookies are not forwarded unless the gateway's forwardCookies setting allows it";
  if (storedCredential && isAuthHeader(name, provider)) return "it carries the provider credential, which this key's stored credential supplies";
  return undefined;
}

/**
 * Whether a header value carries a gateway key: the value itself, or one of its words (split at
 * spaces, commas and semicolons; a `name=value` word is read at its value), so that
 * `Bearer vk-…` or `token=gw-…` are caught as well.
 */
function carriesGatewayKey(value: string, isGatewayKey: GatewayKeyTest): boolean {
  const trimmed = value.trim();
  if (trimmed === '') return false;
  if (isGatewayKey(trimmed)) return true;
  for (const word of trimmed.split(/[\s,;]+/)) {
    if (word === '') continue;
    if (word !== trimmed && isGatewayKey(word)) return true;
    const equals = word.indexOf('=');
    if (equals >= 0 && isGatewayKey(word.slice(equals + 1))) return true;
  }
  return false;
}

/** 400 `gateway_key_not_forwardable`: `header` holds a gateway key that would go upstream. */
const gatewayKeyRefused = (header: string, how: string): GatewayError =>
  errors.gatewayKeyNotForwardable(
    `The ${header} header holds a gateway key (the account key or a virtual key), which ${how}; a gateway key is never sent to a provider. Send the gateway key in x-gateway-api-key only.`,
    { param: header },
  );

/** The headers named in `x-gateway-forward-headers`, or 400 `header_not_forwardable` for one that may not go (`gateway_key_not_forwardable` for one holding a gateway key). */
export function forwardedHeaders(
  headers: Readonly<Record<string, string | undefined>>,
  provider: ProviderPlugin,
  storedCredential: boolean,
  forwardCookies: boolean,
  isGatewayKey: GatewayKeyTest,
): Record<string, string> {
  const forwardHeaders: Record<string, string> = {};
  const named = headers['x-gateway-forward-headers'];
  if (named === undefined) return forwardHeaders;
  for (const name of named.split(',')) {
    const lower = name.trim().toLowerCase();
    if (!lower) continue;
    const refusal = forwardRefusal(lower, provider, storedCredential, forwardCookies);
    if (refusal !== undefined) {
      throw errors.invalidRequest(`The header "${lower}" cannot be forwarded: ${refusal}.`, {
        param: 'x-gateway-forward-headers',
        code: 'header_not_forwardable',
      });
    }
    const value = headers[lower];
    if (value === undefined) continue;
    if (carriesGatewayKey(value, isGatewayKey)) throw gatewayKeyRefused(lower, 'x-gateway-forward-headers would send upstream');
    forwardHeaders[lower] = value;
  }
  return forwardHeaders;
}

/** The provider token of `Authorization: Bearer <token>` (when no stored credential replaces it), or 401 for another scheme. */
function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(authorization);
  if (!match) {
    throw errors.authentication('The Authorization header must be "Bearer <provider token>".', { code: 'invalid_authorization' });
  }
  return match[1].trim();
}

/** The caller's provider token (its Authorization Bearer), or 400 `gateway_key_not_forwardable` when that token is a gateway key. */
export function providerToken(authorization: string | undefined, isGatewayKey: GatewayKeyTest): string | undefined {
  const token = bearerToken(authorization);
  if (token !== undefined && isGatewayKey(token)) throw gatewayKeyRefused('authorization', 'would be sent as the provider credential');
  return token;
}
