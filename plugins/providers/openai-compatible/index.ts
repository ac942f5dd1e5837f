import { OPENAI_CONTENT_PARTS, type ProviderOperations, type ProviderRegistration } from '../../../core/spec/index.js';
import { compatibleChatAdapter } from './compatible-chat.js';
import { compatibleEmbedAdapter } from './compatible-embed.js';
import { mapCompatibleError } from './compatible-error.js';
import { compatibleRerankAdapter } from './compatible-rerank.js';
import { type CompatibleParams, type CompatibleProviderManifest, compatibleParamsSchema } from './compatible-manifest.js';

export * from './compatible-manifest.js';
export { adaptChatRequest, checkChatRequest, compatibleChatAdapter } from './compatible-chat.js';
export { compatibleEmbedAdapter } from './compatible-embed.js';
export { mapCompatibleError } from './compatible-error.js';
export { compatibleRerankAdapter } from './compatible-rerank.js';
export { createCompatibleStreamMapper } from './compatible-stream.js';

/** The provider's operations, built from its manifest. */
export function compatibleOperations(manifest: CompatibleProviderManifest): ProviderOperations {
  const operations: { chat?: ProviderOperations['chat']; embed?: ProviderOperations['embed']; rerank?: ProviderOperations['rerank'] } = {};
  if (manifest.operations.includes('chat')) {
    operations.chat = compatibleChatAdapter({ provider: manifest.id, path: manifest.paths?.chat, quirks: manifest.chat });
  }
  if (manifest.operations.includes('embed')) {
    operations.embed = compatibleEmbedAdapter({ provider: manifest.id, path: manifest.paths?.embed, quirks: manifest.embed });
  }
  if (manifest.operations.includes('rerank')) {
    operations.rerank = compatibleRerankAdapter({ provider: manifest.id, path: manifest.paths?.rerank, quirks: manifest.rerank });
  }
  return operations;
}

/** Credential headers in the provider's documented style (none when no key was given). */
export function compatibleAuthHeaders(manifest: CompatibleProviderManifest, apiKey: string | undefined): Record<string, string> {
  if (!apiKey) return {};
  const auth = manifest.auth;
  if (auth.kind === 'bearer') return { authorization: `Bearer ${apiKey}` };
  return { [auth.header.toLowerCase()]: `${auth.prefix ?? ''}${apiKey}` };
}

/** The headers the manifest's auth style carries the key in (`authorization` always, for Bearer-style keys). */
export function compatibleAuthHeaderNames(manifest: CompatibleProviderManifest): readonly string[] {
  const auth = manifest.auth;
  return auth.kind === 'bearer' ? ['authorization'] : [auth.header.toLowerCase(), 'authorization'];
}

/**
 * Turns a manifest into a provider factory: `defineCompatibleProvider({...})` is all a compatible
 * provider's `index.ts` holds. The factory takes {@link CompatibleParams}.
 */
export function defineCompatibleProvider(manifest: CompatibleProviderManifest): (params?: CompatibleParams) => ProviderRegistration {
  return (params = {}) => ({
    manifest: {
      id: manifest.id,
      kind: 'provider',
      specificationVersion: 'v1',
      version: manifest.version ?? '1.0.0',
      description: manifest.description,
      params: compatibleParamsSchema,
    },
    params,
    ...(manifest.foreignNames ? { foreignNames: manifest.foreignNames } : {}),
    create() {
      const baseUrl = (params.baseUrl ?? manifest.baseUrl).replace(/\/+$/, '');
      const staticHeaders = Object.fromEntries(
        Object.entries({ ...manifest.headers, ...params.headers }).map(([name, value]) => [name.toLowerCase(), value]),
      );
      const developerRole = manifest.chat?.developerRole ?? false;
      return {
        id: manifest.id,
        name: manifest.name,
        operations: compatibleOperations(manifest),
        // File and audio parts are forwarded unchanged, as every other field: the upstream judges them.
        capabilities: { developerRole: typeof developerRole === 'function' ? developerRole : () => developerRole, contentParts: () => OPENAI_CONTENT_PARTS },
        baseUrl: () => baseUrl,
        auth: (_request, target) => ({ ...staticHeaders, ...compatibleAuthHeaders(manifest, target.credentials.apiKey) }),
        authHeaders: compatibleAuthHeaderNames(manifest),
        mapError: mapCompatibleError,
        passthroughUrl: manifest.passthroughUrl
          ? (pathAndQuery, target) => manifest.passthroughUrl?.(pathAndQuery, target.baseUrl) ?? target.baseUrl + pathAndQuery
          : undefined,
        pricing: manifest.pricing,
        ...(manifest.modelCatalogue ? { modelCatalogue: manifest.modelCatalogue } : {}),
      };
    },
  });
}
