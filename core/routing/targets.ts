import { errors } from '../errors.js';
import type { CustomHostGuard } from '../http/custom-host.js';
import { forwardedHeaders, providerToken, type GatewayKeyTest } from '../http/forwarded-headers.js';
import type { AuthSlice, GatewayContext } from '../pipeline/context.js';
import type { RoutingSlice } from './slices.js';
import type { PluginRegistry } from '../registry.js';
import { isRecord } from '../spec/is-record.js';
import type { KeyResolution } from '../spec/key-resolver.js';
import type { ProviderCredentials, ProviderPlugin } from '../spec/provider.js';
import type { ResolvedRoute } from './plan.js';
import { findRoute, resolvePlan, type RouteCatalog } from './resolve.js';
import type { Target } from './route.js';
import type { TargetCredentials } from './sources.js';

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
 * Looks for the request's route (see `findRoute`) and, when there is one, opens all its targets:
 * the routing slice the auth stage writes. Undefined when the request takes the plain single-target path.
 */
export async function routePlan(
  context: GatewayContext,
  resolution: KeyResolution,
  routes: RouteCatalog,
  openTarget: OpenTarget,
): Promise<RoutingSlice | undefined> {
  const header = context.incoming.headers['x-gateway-config'];
  const model = context.request.model;
  const found = await findRoute(routes, { header, keyRoute: resolution.route, allowedRoutes: resolution.allowedRoutes, model, account: resolution.caller.type === 'account' });
  if (found === undefined) return undefined;
  const plan = await resolvePlan(found.route, found.label, (target, param) => openTarget(context, resolution, target, param));
  return { plan, label: found.label };
}

/** The auth of a route's first provider target (the guardrail policy and the log read it before any attempt). */
export function firstLeaf(plan: ResolvedRoute): AuthSlice {
  const first = plan.targets[0];
  return first.auth ?? firstLeaf(first.route!);
}

/**
 * `"model": "<provider>/<model>"` with no provider header: the provider when the prefix is a
 * registered provider id, and the request whose model becomes the rest. Undefined otherwise.
 */
export function providerPrefix(request: GatewayContext['request'], registry: PluginRegistry): { provider: string; request: GatewayContext['request'] } | undefined {
  const model = request.model;
  const slash = model?.indexOf('/') ?? -1;
  if (slash <= 0 || registry.provider(model!.slice(0, slash)) === undefined) return undefined;
  const rest = model!.slice(slash + 1);
  const body = request.body;
  if (!isRecord(body) || rest.length === 0) return undefined;
  return { provider: model!.slice(0, slash), request: { ...request, body: { ...body, model: rest }, raw: undefined, rawText: undefined, model: rest } };
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

/** Stored credential fields named like gateway headers supply those headers' values (over the client's). */
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

/** Opens one target for a caller: its provider, credentials (stored, a virtual key's, or the caller's Bearer), base URL and forwarded headers; 400 with `param` for what does not exist. */
export type OpenTarget = (context: GatewayContext, resolution: Pick<KeyResolution, 'caller' | 'policy'>, target: Target, param: string) => Promise<AuthSlice>;

/** What opening a target needs: the providers, the custom-host policy, the stored credentials, the forwarding setting, the gateway-key test. */
export interface TargetDependencies {
  registry: PluginRegistry;
  customHosts: CustomHostGuard;
  targetCredentials?: TargetCredentials;
  forwardCookies?: boolean;
  /** Tells a gateway key, which is never sent upstream (see `gatewayKeyTest` in `core/identity/caller.ts`). */
  isGatewayKey: GatewayKeyTest;
}

/**
 * The opener of route targets (and of the response cache's embeddings target): the provider plugin,
 * a stored credential or a virtual key's binding, the base URL (a custom host checked by the
 * policy; a stored credential's host pinned), and the forwarded headers.
 */
export function targetOpener(dependencies: TargetDependencies): OpenTarget {
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

/** The provider a key binds, names in `x-gateway-provider` or prefixes to the model, or 400 (`provider_mismatch`, `missing_provider`, `unknown_provider`, `custom_host_not_allowed`). */
function plainProvider(
  headers: Readonly<Record<string, string | undefined>>,
  resolution: KeyResolution,
  prefixed: string | undefined,
  registry: PluginRegistry,
): ProviderPlugin {
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
  const providerId = resolution.provider ?? headers['x-gateway-provider'] ?? prefixed;
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
  return provider;
}

/**
 * The target of a request that takes no route: the provider (see {@link plainProvider}; `prefixed`
 * is the one a `provider/model` prefix named), base URL (provider default, or a custom host the
 * policy allows), credentials (the key's stored one, else the caller's Bearer) and forwarded headers.
 * `headers` are the request's without the header that carried the gateway key.
 */
export async function openPlainTarget(
  context: GatewayContext,
  headers: Readonly<Record<string, string | undefined>>,
  resolution: KeyResolution,
  prefixed: string | undefined,
  dependencies: TargetDependencies,
): Promise<AuthSlice> {
  const { registry, customHosts, forwardCookies = false, isGatewayKey } = dependencies;
  const provider = plainProvider(headers, resolution, prefixed, registry);
  const targetHeaders = withCredentialFields(headers, resolution.credentials);
  const customHost = resolution.customHost ?? headers['x-gateway-custom-host'];
  const baseUrl = customHost ? await customHosts.check(customHost) : provider.baseUrl(targetHeaders);
  if (resolution.credentials !== undefined && !customHost) assertHostPinned(provider, resolution.credentials, baseUrl);

  // A gateway key in Authorization next to x-gateway-api-key would become the provider credential: 400.
  const apiKey = resolution.credentials === undefined ? providerToken(headers.authorization, isGatewayKey) : undefined;

  const forwardHeaders = forwardedHeaders(headers, provider, resolution.credentials !== undefined, forwardCookies, isGatewayKey);

  const auth: { -readonly [Field in keyof AuthSlice]: AuthSlice[Field] } = {
    caller: resolution.caller,
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
  return auth;
}
