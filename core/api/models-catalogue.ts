import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors, GatewayError } from '../errors.js';
import { clientAddress } from '../http/client-address.js';
import { flattenHeaders } from '../http/headers.js';
import { type CallerKeys, gatewayKeyOf, identify } from '../identity/caller.js';
import { mayTakeRoute } from '../routing/access.js';
import type { Route } from '../routing/route.js';
import type { StoredRoute } from '../routing/sources.js';
import type { ModelAlias } from '../routing/store.js';
import type { ProviderPlugin } from '../spec/provider.js';
import type { Caller, KeyResolution } from '../spec/key-resolver.js';
import { type CatalogueEntry, type ModelCatalogue, namedEntry } from './model-catalogue.js';
import { metadataOf, strictOf, traceIdOf } from './request-headers.js';

/** What the caller-scoped model list reads: the catalogue, the providers, the caller's key and the routes. */
export interface ModelListDependencies {
  readonly catalogue: ModelCatalogue;
  readonly provider: (id: string) => ProviderPlugin | undefined;
  readonly keys: CallerKeys;
  /** A virtual key's `allowed_models` (undefined: not limited). */
  readonly allowedModels: (caller: Caller) => Promise<readonly string[] | undefined>;
  /** The config's named routes and model aliases. */
  readonly configRoutes: ReadonlyMap<string, Route>;
  readonly configAliases: ReadonlyMap<string, Route>;
  /** The stored routes and aliases (empty when the vault is not open). */
  readonly storedRoutes: () => Promise<readonly StoredRoute[]>;
  readonly storedAliases: () => Promise<readonly ModelAlias[]>;
  readonly trustProxy: number;
}

/**
 * Every model the key may reach, by the rules of the auth stage: provider models the catalogue
 * knows (only its provider's, for a key bound to one), model aliases, and routes by name (for a
 * virtual key, only its own route and its `allowed_routes`); with `allowed_models`, exactly those
 * models and aliases, in the key's order (one the catalogue does not know gets a minimal entry).
 */
export async function reachableModels(dependencies: ModelListDependencies, resolution: KeyResolution): Promise<CatalogueEntry[]> {
  const account = resolution.caller.type === 'account';
  const bound = resolution.provider;
  const models = await dependencies.catalogue.models(bound === undefined ? undefined : new Set([bound]));
  const aliases = [
    ...[...dependencies.configAliases].map(([name, route]) => namedEntry(name, 'alias', route)),
    ...(await dependencies.storedAliases()).filter((alias) => !dependencies.configAliases.has(alias.alias)).map((alias) => namedEntry(alias.alias, 'alias', alias.route)),
  ];
  const access = { account, keyRoute: resolution.route, allowedRoutes: resolution.allowedRoutes };
  const routes = [
    ...[...dependencies.configRoutes].filter(([name]) => mayTakeRoute(access, { kind: 'config', name })).map(([name, route]) => namedEntry(name, 'route', route)),
    ...(await dependencies.storedRoutes()).filter((stored) => mayTakeRoute(access, { kind: 'stored', id: stored.id, name: stored.name })).map((stored) => namedEntry(stored.name ?? stored.id, 'route', stored.route)),
  ];
  const allowed = account ? undefined : await dependencies.allowedModels(resolution.caller);
  if (allowed === undefined) return [...models, ...aliases, ...routes];
  const known = new Map([...aliases, ...models].map((entry) => [entry.id, entry]));
  const owner = bound !== undefined ? dependencies.provider(bound) : undefined;
  const listed = await Promise.all(
    [...new Set(allowed)].map(async (id) => known.get(id) ?? (owner ? await dependencies.catalogue.model(owner, id) : { id, object: 'model' as const, created: 0, owned_by: bound ?? 'gateway', kind: 'model' as const })),
  );
  return [...listed, ...routes];
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': String(bytes.byteLength) }).end(bytes);
}

/**
 * `GET /v1/models` without `x-gateway-provider`: the gateway answers from its catalogue, scoped to
 * the caller's key, without calling a provider. (With the header, the provider's own list is asked,
 * as before.)
 */
export function modelListRoute(dependencies: ModelListDependencies): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    const headers = flattenHeaders(request.headers);
    let traceId: string | undefined;
    try {
      // The gateway's own headers are checked as on every /v1 request (400 naming the header).
      traceId = traceIdOf(headers['x-gateway-trace-id']);
      metadataOf(headers['x-gateway-metadata']);
      strictOf(headers['x-gateway-strict-api-compliance']);
      const found = gatewayKeyOf(headers, dependencies.keys.accountKey, dependencies.keys.keyResolvers);
      if (!found) throw errors.authentication('Missing x-gateway-api-key header: send your account API key or a virtual key.', { code: 'missing_api_key' });
      const incoming = { method: 'GET', path: '/v1/models', search: '', headers, clientAddress: clientAddress(request, dependencies.trustProxy) };
      const resolution = await identify(found.key, { incoming }, dependencies.keys);
      send(response, 200, { object: 'list', data: await reachableModels(dependencies, resolution) }, { 'x-gateway-trace-id': traceId });
    } catch (error) {
      const failure = error instanceof GatewayError ? error : errors.internal('The model list could not be made.', { code: 'internal_error' });
      send(response, failure.status, failure.toJSON(), { ...failure.headers, ...(traceId ? { 'x-gateway-trace-id': traceId } : {}) });
    }
  };
}
