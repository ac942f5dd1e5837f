import { readFileSync } from 'node:fs';
import { calcPrice, type ModelPrice as CatalogueModelPrice } from '@pydantic/genai-prices';
import type { ModelPrice } from './pricing.js';

const CATALOGUE_PACKAGE = '@pydantic/genai-prices';

/** The catalogue's version, read from its package (its `exports` do not expose `package.json`). */
function catalogueVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve(CATALOGUE_PACKAGE)), 'utf8')) as { version: string };
  return manifest.version;
}

/** The shipped price catalogue's version: the source `GET /admin/prices` names (`catalogue@<version>`). */
export const CATALOGUE_VERSION: string = catalogueVersion();

/** A catalogue price component: a number, or tiered by prompt size (the base tier is taken). */
function perMillion(value: CatalogueModelPrice[string]): number | undefined {
  if (typeof value === 'number') return value;
  if (value && typeof value === 'object' && typeof value.base === 'number') return value.base;
  return undefined;
}

/** A model found in the catalogue: its price per million tokens and the catalogue's ids for it. */
export interface CataloguePrice {
  readonly price: ModelPrice;
  readonly catalogProvider: string;
  readonly catalogModel: string;
}

/**
 * The catalogue's price for `model` at `catalogProvider`, at the current date (the catalogue dates
 * price changes), or undefined when the catalogue lists no token or rerank-search price for it. Prompt-size tiers are
 * priced at their base tier.
 */
export function cataloguePrice(catalogProvider: string, model: string): CataloguePrice | undefined {
  const found = calcPrice({ input_tokens: 0, output_tokens: 0 }, model, { providerId: catalogProvider });
  if (!found) return undefined;
  const input = perMillion(found.model_price.input_mtok);
  const output = perMillion(found.model_price.output_mtok);
  // Rerank models billed by the search carry a price per thousand searches.
  const searches = perMillion(found.model_price.rerank_searches_kcount);
  if (input === undefined && output === undefined && searches === undefined) return undefined;
  const cachedInput = perMillion(found.model_price.cache_read_mtok);
  return {
    price: { input: input ?? 0, output: output ?? 0, ...(cachedInput === undefined ? {} : { cachedInput }), ...(searches === undefined ? {} : { searches }) },
    catalogProvider: found.provider.id,
    catalogModel: found.model.id,
  };
}
