import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../errors.js';
import type { ProviderPlugin } from '../spec/provider.js';
import { CATALOGUE_VERSION, type ModelPrice, type PriceTable } from '../vault/pricing.js';
import type { AdminGuard } from './guard.js';

const MAX_TEXT = 256;

function required(koa: Context, name: string): string {
  const value = koa.query[name];
  if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT) {
    throw errors.invalidRequest(`${name} is required, once, as a non-empty string of at most ${MAX_TEXT} characters.`, { param: name, code: 'invalid_query' });
  }
  return value;
}

/** A price per million tokens and per token, as the admin API shows it. */
function described(price: ModelPrice) {
  return {
    input_per_million: price.input,
    output_per_million: price.output,
    cached_input_per_million: price.cachedInput ?? null,
    input_per_token: price.input / 1_000_000,
    output_per_token: price.output / 1_000_000,
    cached_input_per_token: price.cachedInput === undefined ? null : price.cachedInput / 1_000_000,
    // Rerank models billed by the search only.
    ...(price.searches === undefined ? {} : { searches_per_thousand: price.searches }),
  };
}

export interface PricesApiDependencies {
  readonly guard: AdminGuard;
  readonly prices: PriceTable;
  /** The registered provider plugin of an id, for its pricing declaration. */
  readonly provider: (id: string) => ProviderPlugin | undefined;
}

/**
 * Mounts `GET /admin/prices?provider=&model=` (account key only): the price a virtual key with a
 * budget is charged for the model and where it comes from (`config`, `catalogue@<version>`, the
 * unknown-model policy, or `none`: refused). The request's own headers are the provider's, so an
 * Azure deployment is looked up with its model-name header as a chat request would be.
 */
export function mountPricesApi(router: Router, dependencies: PricesApiDependencies): void {
  const { guard, prices } = dependencies;
  router.get('/admin/prices', guard.require('prices.read'), (koa) => {
    const providerId = required(koa, 'provider');
    const model = required(koa, 'model');
    const plugin = dependencies.provider(providerId);
    const lookup = prices.lookUp(plugin ?? { id: providerId }, model, koa.headers as Record<string, string | undefined>);
    const fallback = lookup.price === undefined ? prices.price({ id: providerId }, undefined) : undefined;
    const price = lookup.price ?? fallback;
    koa.body = {
      provider: providerId,
      model,
      registered: plugin !== undefined,
      source: lookup.price ? lookup.source : fallback ? 'unknown-model-policy' : 'none',
      catalogue: {
        version: CATALOGUE_VERSION,
        provider: lookup.catalogProvider ?? plugin?.pricing?.catalogProvider ?? null,
        model: lookup.catalogModel ?? null,
      },
      unit: 'USD',
      price: price ? described(price) : null,
    };
  });
}
