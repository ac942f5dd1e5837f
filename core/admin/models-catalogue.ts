import type Router from '@koa/router';
import type { ModelCatalogue } from '../api/model-catalogue.js';
import type { ProviderPlugin } from '../spec/provider.js';
import type { AdminGuard } from './guard.js';

export interface ModelCatalogueApiDependencies {
  readonly guard: AdminGuard;
  readonly catalogue: ModelCatalogue;
  readonly providers: () => readonly ProviderPlugin[];
}

/**
 * Mounts `GET /admin/models/catalogue` (account key only): the whole model catalogue, provider by
 * provider (each registered provider, under the catalogue's id for it), with where its facts and
 * prices come from and their versions. What one key may reach is `GET /v1/models` with that key.
 */
export function mountModelCatalogueApi(router: Router, dependencies: ModelCatalogueApiDependencies): void {
  const { guard, catalogue } = dependencies;
  router.get('/admin/models/catalogue', guard.require('routes.read'), async (koa) => {
    const providers = [];
    for (const provider of dependencies.providers()) {
      const models = await catalogue.models(new Set([provider.id]));
      providers.push({ id: provider.id, catalogue_provider: catalogue.catalogId(provider), models });
    }
    koa.body = { object: 'model_catalogue', source: await catalogue.sources(), providers };
  });
}
