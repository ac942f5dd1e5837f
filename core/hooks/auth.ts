import type { AccountKey } from '../account-key.js';
import { errors, GatewayError } from '../errors.js';
import type { FailedAuthLimiter } from '../failed-auth.js';
import type { CustomHostGuard } from '../http/custom-host.js';
import { HOP_BY_HOP } from '../http/headers.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { Caller, KeyResolution, KeyResolutionContext, KeyResolver } from '../spec/key-resolver.js';
import type { PluginRegistry } from '../registry.js';
import type { Hook } from '../pipeline/hook.js';
import type { ProviderCredentials, ProviderPlugin } from '../spec/provider.js';
import type { AuthSlice } from '../pipeline/context.js';
import { findRoute, resolvePlan, type RouteCatalog } from '../routing/resolve.js';
import type { ResolvedRoute } from '../routing/plan.js';
import type { Target } from '../routing/route.js';
import type { TargetCredentials } from '../routing/sources.js';
import { isRecord } from '../spec/is-record.js';

/** Headers never forwarded through `x-gateway-forward-headers`: they describe this hop or the gateway. */
const NOT_FORWARDABLE = new Set(['host', 'content-length', 'expect', 'x-gateway-api-key', ...HOP_BY_HOP]);

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
 * Whether a value is a gateway key: a value a registered {@link KeyResolver} claims by its prefix
 * (`vk-…`, whether or not such a key exists), or the account key (compared by hash, and only for
 * values of the account key's length: {@link AccountKey.mayMatch}). No store is asked: this runs
 * wherever a value could go upstream, so it stays a prefix test, a length test and at most one hash.
 */
export type GatewayKeyTest = (value: string) => boolean;

export function gatewayKeyTest(accountKey: AccountKey, keyResolvers: readonly KeyResolver[]): GatewayKeyTest {
  const prefixes = keyResolvers.map((resolver) => resolver.prefix);
  return (value) => {
    for (const prefix of prefixes) if (value.startsWith(prefix)) return true;
    return accountKey.mayMatch(value) && accountKey.matches(value);
  };
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
function forwardedHeaders(
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
function providerToken(authorization: string | undefined, isGatewayKey: GatewayKeyTest): string | undefined {
  const token = bearerToken(authorization);
  if (token !== undefined && isGatewayKey(token)) throw gatewayKeyRefused('authorization', 'would be sent as the provider credential');
  return token;
}

/**
 * Whether the request may take a route: an `x-gateway-config` header, a key that names a route, or
 * a model that may be an alias (a stored alias this instance has cached as none is not).
 * Synchronous, so the plain path pays for these checks only.
 */
export function mayRoute(context: GatewayContext, keyRoute: string | undefined, routes: RouteCatalog): boolean {
  if (context.incoming.headers['x-gateway-config'] !== undefined || keyRoute !== undefined) return true;
  const model = context.request.model;
  if (model === undefined) return false;
  if (routes.models.has(model)) return true;
  const source = routes.source;
  return source !== undefined && (source.cachedAlias === undefined || source.cachedAlias(model) !== undefined);
}

/**
 * Looks for the request's route (see `findRoute`) and, when there is one, opens all its targets and
 * writes the routing slice, with `auth` at the first target (each attempt's own auth is on the forward stage's `routed` slice).
 * False when the request takes the plain single-target path.
 */
async function routeRequest(
  context: GatewayContext,
  resolution: KeyResolution,
  routes: RouteCatalog,
  openTarget: OpenTarget,
): Promise<boolean> {
  const header = context.incoming.headers['x-gateway-config'];
  const model = context.request.model;
  const found = await findRoute(routes, { header, keyRoute: resolution.route, allowedRoutes: resolution.allowedRoutes, model, account: resolution.caller.type === 'account' });
  if (found === undefined) return false;
  const plan = await resolvePlan(found.route, found.label, (target, param) => openTarget(context, resolution, target, param));
  context.routing = { plan, label: found.label };
  context.auth = firstLeaf(plan);
  return true;
}

/** The auth of a route's first provider target (the guardrail policy and the log read it before any attempt). */
function firstLeaf(plan: ResolvedRoute): AuthSlice {
  const first = plan.targets[0];
  return first.auth ?? firstLeaf(first.route!);
}

/**
 * `"model": "<provider>/<model>"` with no provider header: the provider when the prefix is a
 * registered provider id, and the request's model becomes the rest. Undefined otherwise.
 */
function providerPrefix(context: GatewayContext, registry: PluginRegistry): string | undefined {
  const model = context.request.model;
  const slash = model?.indexOf('/') ?? -1;
  if (slash <= 0 || registry.provider(model!.slice(0, slash)) === undefined) return undefined;
  const rest = model!.slice(slash + 1);
  const body = context.request.body;
  if (!isRecord(body) || rest.length === 0) return undefined;
  context.request = { ...context.request, body: { ...body, model: rest }, raw: undefined, rawText: undefined, model: rest };
  return model!.slice(0, slash);
}

/** Levenshtein distance, for suggesting provider ids close to a mistyped one. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** Known ids that contain the given one (or are contained in it), or are a typo or two away, closest first. */
export function closeMatches(id: string, known: readonly string[]): string[] {
  const lower = id.toLowerCase();
  const allowed = Math.max(1, Math.min(3, Math.floor(lower.length / 3)));
  return known
    .map((candidate) => ({ candidate, distance: candidate.includes(lower) || lower.includes(candidate) ? 0 : editDistance(lower, candidate) }))
    .filter(({ distance }) => distance <= allowed)
    .sort((left, right) => left.distance - right.distance)
    .slice(0, 5)
    .map(({ candidate }) => candidate);
}

/** Stored credential fields named like gateway headers supply those headers' values (over the client's). */
const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/**
 * A stored credential goes only to the host its own fields (or the provider's default) name: the
 * caller's headers may choose a path (a deployment, a model) but never another host, or a key
 * holder could have the vault's secret sent to a server of their choosing.
 */
function assertHostPinned(provider: ProviderPlugin, credentials: ProviderCredentials, baseUrl: string): void {
  let pinned: string | undefined;
  try {
    pinned = originOf(provider.baseUrl(withCredentialFields({}, credentials)));
  } catch {
    pinned = undefined;
  }
  if (pinned === undefined || pinned !== originOf(baseUrl)) {
    throw errors.invalidRequest(
      "This key's stored credential fixes the upstream host: request headers cannot choose it. Store the host-naming x-gateway-* fields (resource, region, endpoint) in the credential.",
      { param: 'x-gateway-api-key', code: 'host_not_pinned' },
    );
  }
}

function withCredentialFields(
  headers: Readonly<Record<string, string | undefined>>,
  credentials: ProviderCredentials | undefined,
): Readonly<Record<string, string | undefined>> {
  const fields = credentials?.fields;
  if (fields === undefined) return headers;
  const merged: Record<string, string | undefined> = { ...headers };
  for (const [name, value] of Object.entries(fields)) {
    const lower = name.toLowerCase();
    if (lower.startsWith('x-gateway-')) merged[lower] = value;
  }
  return merged;
}

/** Headers that may carry the gateway key when `x-gateway-api-key` is absent, in the order they are read. */
const KEY_HEADERS = ['authorization', 'x-api-key', 'api-key'] as const;

/**
 * The gateway key of a request and the headers the rest of the stage reads: `x-gateway-api-key`,
 * else a virtual key (a resolver's prefix) or the account key in `Authorization: Bearer`,
 * `x-api-key` or `api-key` — a tool that can set only a base URL and an API key then works. A key
 * found in one of those headers is the gateway's, so that header is dropped from the headers
 * returned: it is never taken for the provider credential nor forwarded.
 */
function gatewayKeyOf(
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
    if (keyResolvers.some((resolver) => value.startsWith(resolver.prefix)) || accountKey.matches(value)) {
      const { [name]: _gatewayKey, ...rest } = incoming;
      return { key: value, headers: rest };
    }
  }
  return undefined;
}

/**
 * Who the key belongs to, or a 401 (429 `too_many_failed_auth` once the client address, or all
 * clients, failed too often: see {@link FailedAuthLimiter}).
 */
async function identify(
  key: string,
  context: Pick<GatewayContext, 'incoming'> & KeyResolutionContext,
  keys: { accountKey: AccountKey; keyResolvers: KeyResolver[]; failedAuth?: FailedAuthLimiter },
): Promise<KeyResolution> {
  let resolver: KeyResolver | undefined;
  for (const candidate of keys.keyResolvers) {
    if (key.startsWith(candidate.prefix)) {
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

/** Opens one target for a caller: its provider, credentials (stored, a virtual key's, or the caller's Bearer), base URL and forwarded headers; 400 with `param` for what does not exist. */
export type OpenTarget = (context: GatewayContext, resolution: Pick<KeyResolution, 'caller' | 'policy'>, target: Target, param: string) => Promise<AuthSlice>;

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

/**
 * The opener of route targets (and of the response cache's embeddings target): the provider plugin,
 * a stored credential or a virtual key's binding, the base URL (a custom host checked by the
 * policy; a stored credential's host pinned), and the forwarded headers.
 */
export function targetOpener(dependencies: {
  registry: PluginRegistry;
  customHosts: CustomHostGuard;
  targetCredentials?: TargetCredentials;
  forwardCookies?: boolean;
  /** Tells a gateway key, which is never sent upstream (see {@link gatewayKeyTest}). */
  isGatewayKey: GatewayKeyTest;
}): OpenTarget {
  const { registry, customHosts, targetCredentials, forwardCookies = false, isGatewayKey } = dependencies;
  return async (context, resolution, target, param) => {
    const headers = context.incoming.headers;
    let providerId = target.provider;
    let credentials: ProviderCredentials | undefined;
    let customHost = target.custom_host;
    if (target.virtual_key !== undefined) {
      const bound = await targetCredentials?.virtualKey(target.virtual_key);
      if (bound?.provider === undefined) throw errors.invalidRequest('The route names a virtual key that does not exist or is not bound to a provider.', { param: `${param}.virtual_key`, code: 'unknown_virtual_key' });
      providerId = bound.provider;
      credentials = bound.credentials;
      customHost = bound.customHost;
    }
    const provider = registry.provider(providerId!);
    if (provider === undefined) {
      throw errors.invalidRequest(`The route names the unknown provider "${providerId}". Known providers: ${registry.providerIds().join(', ')}.`, { param: `${param}.provider`, code: 'unknown_provider' });
    }
    if (target.credential !== undefined) {
      credentials = await targetCredentials?.credential(target.credential);
      if (credentials === undefined) throw errors.invalidRequest('The route names a stored credential that does not exist.', { param: `${param}.credential`, code: 'unknown_credential' });
    }
    const targetHeaders = withCredentialFields({ ...headers, ...target.headers }, credentials);
    const baseUrl = customHost ? await customHosts.check(customHost) : provider.baseUrl(targetHeaders);
    if (credentials !== undefined && !customHost) assertHostPinned(provider, credentials, baseUrl);
    // The caller's Bearer stands in for a missing credential, but never a gateway key: not the one
    // that identified the caller (in Authorization when x-gateway-api-key is absent), nor another (400).
    const apiKey = credentials === undefined && headers['x-gateway-api-key'] !== undefined ? providerToken(headers.authorization, isGatewayKey) : undefined;
    return {
      caller: resolution.caller,
      provider,
      forwardHeaders: forwardedHeaders(headers, provider, credentials !== undefined, forwardCookies, isGatewayKey),
      target: { baseUrl, customHost: Boolean(customHost), headers: targetHeaders, credentials: credentials ?? { apiKey }, strict: context.strict },
      ...(resolution.policy !== undefined ? { policy: resolution.policy } : {}),
    };
  };
}

/**
 * The auth stage: identifies the caller from `x-gateway-api-key` (the account key, or a key whose
 * prefix a {@link KeyResolver} claims; without that header, such a key as the Authorization Bearer
 * token, `x-api-key` or `api-key`), only then reads the request body (`context.loadRequest`),
 * then resolves the target: provider plugin, base URL (provider default or a custom host the policy
 * allows), credentials and forwarded headers.
 */
export function authHook(dependencies: {
  registry: PluginRegistry;
  accountKey: AccountKey;
  customHosts: CustomHostGuard;
  keyResolvers?: KeyResolver[];
  /** Counts wrong keys per client address; absent: not limited. */
  failedAuth?: FailedAuthLimiter;
  /** Whether `cookie` may be named in `x-gateway-forward-headers` (the config's `forwardCookies`). Default false. */
  forwardCookies?: boolean;
  /** The config's named routes and model aliases, and the stored ones; absent: no request is routed. */
  routes?: RouteCatalog;
  /** Opens the stored credentials and virtual keys route targets name; absent: such targets are refused (400). */
  targetCredentials?: TargetCredentials;
}): Hook {
  const { registry, accountKey, customHosts, keyResolvers = [], failedAuth, forwardCookies = false, routes, targetCredentials } = dependencies;

  const isGatewayKey = gatewayKeyTest(accountKey, keyResolvers);
  const openTarget = targetOpener({ registry, customHosts, targetCredentials, forwardCookies, isGatewayKey });
  return {
    name: 'gateway-auth',
    stage: 'auth',
    async run(context, next) {
      const found = gatewayKeyOf(context.incoming.headers, accountKey, keyResolvers);
      if (!found) {
        throw errors.authentication('Missing x-gateway-api-key header: send your account API key or a virtual key (there, or as the Authorization Bearer token).', {
          code: 'missing_api_key',
        });
      }
      const { key, headers } = found;
      const resolution = await identify(key, context, { accountKey, keyResolvers, failedAuth });
      // The caller is known: only now is the body read, parsed or spooled (400/413 from here on).
      await context.loadRequest?.();
      const caller: Caller = resolution.caller;
      if (routes !== undefined && mayRoute(context, resolution.route, routes) && (await routeRequest(context, resolution, routes, openTarget))) {
        await next();
        return;
      }
      const bound = resolution.provider !== undefined;
      if (bound && headers['x-gateway-custom-host']) {
        throw errors.invalidRequest("This key's target is fixed: x-gateway-custom-host cannot be used with it.", {
          param: 'x-gateway-custom-host',
          code: 'custom_host_not_allowed',
        });
      }
      if (bound && headers['x-gateway-provider'] && headers['x-gateway-provider'].toLowerCase() !== resolution.provider) {
        throw errors.invalidRequest(`This key is bound to the provider "${resolution.provider}".`, {
          param: 'x-gateway-provider',
          code: 'provider_mismatch',
        });
      }

      const providerId = resolution.provider ?? headers['x-gateway-provider'] ?? providerPrefix(context, registry);
      if (!providerId) {
        throw errors.invalidRequest(
          `Missing x-gateway-provider header. Known providers: ${registry.providerIds().join(', ')}.`,
          { param: 'x-gateway-provider', code: 'missing_provider' },
        );
      }
      const provider = registry.provider(providerId.toLowerCase());
      if (provider === undefined) {
        const matches = closeMatches(providerId, registry.providerIds());
        throw errors.invalidRequest(
          `Unknown provider "${providerId}".${matches.length ? ` Did you mean ${matches.join(', ')}?` : ''} Known providers: ${registry.providerIds().join(', ')}.`,
          { param: 'x-gateway-provider', code: 'unknown_provider' },
        );
      }

      const targetHeaders = withCredentialFields(headers, resolution.credentials);
      const customHost = resolution.customHost ?? headers['x-gateway-custom-host'];
      const baseUrl = customHost ? await customHosts.check(customHost) : provider.baseUrl(targetHeaders);
      if (resolution.credentials !== undefined && !customHost) assertHostPinned(provider, resolution.credentials, baseUrl);

      // A gateway key in Authorization next to x-gateway-api-key would become the provider credential: 400.
      const apiKey = resolution.credentials === undefined ? providerToken(headers.authorization, isGatewayKey) : undefined;

      const forwardHeaders = forwardedHeaders(headers, provider, resolution.credentials !== undefined, forwardCookies, isGatewayKey);

      const auth: { -readonly [Field in keyof AuthSlice]: AuthSlice[Field] } = {
        caller,
        provider,
        forwardHeaders,
        target: {
          baseUrl,
          customHost: Boolean(customHost),
          headers: targetHeaders,
          credentials: resolution.credentials ?? { apiKey },
          strict: context.strict,
        },
      };
      if (resolution.policy !== undefined) auth.policy = resolution.policy;
      context.auth = auth;
      await next();
    },
  };
}
