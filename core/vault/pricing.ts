import type { ProviderPricing } from '../spec/provider.js';
import type { Usage } from '../spec/unified.js';
import { CATALOGUE_VERSION, cataloguePrice } from './pricing-catalogue.js';

/**
 * Prices in USD per million tokens. `cachedInput` defaults to `input` when a provider has no
 * discount. `searches`: USD per thousand search units, for rerank models billed by the search (Cohere's
 * unit: a query with up to 100 documents) rather than, or besides, by the token.
 */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cachedInput?: number;
  readonly searches?: number;
  /** The discount on batch requests (0.5: half price); wins over the provider's declared `pricing.batchDiscount`. */
  readonly batchDiscount?: number;
}

/** How models absent from the configuration and the catalogue are priced: refused (for keys with a budget), free, or at a default price. */
export type UnknownModelPolicy = 'refuse' | 'zero' | ModelPrice;

export interface PricingOptions {
  /** Per provider id, per model: these prices win over the shipped catalogue's. */
  readonly models?: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>>;
  /** Default `refuse`. */
  readonly unknownModel?: UnknownModelPolicy;
}

/** A provider as pricing sees it: its plugin id and what its plugin declares about pricing. */
export interface PricedProvider {
  readonly id: string;
  readonly pricing?: ProviderPricing;
}

/** Where a price came from: the configuration, the shipped catalogue, the unknown-model policy, or nowhere. */
export type PriceSource = 'config' | `catalogue@${string}` | 'unknown-model-policy' | 'none';

/** A price and its origin, as `GET /admin/prices` reports it. */
export interface PriceLookup {
  readonly price?: ModelPrice;
  readonly source: PriceSource;
  /** The catalogue's provider and model ids the price was found under (catalogue prices only). */
  readonly catalogProvider?: string;
  readonly catalogModel?: string;
}

export { CATALOGUE_VERSION };

const MAX_REMEMBERED_LOOKUPS = 4096;
const NO_HEADERS: Readonly<Record<string, string | undefined>> = {};

/** Strips a release-date suffix (`-2024-08-06`, `-20241022`) and `-latest`, in that order of trial. */
function candidates(model: string): string[] {
  const lower = model.toLowerCase();
  const undated = lower.replace(/-\d{4}-\d{2}-\d{2}$/, '').replace(/-\d{8}$/, '');
  return [...new Set([lower, undated, undated.replace(/-latest$/, '')])];
}

/** Token counts of one request, as priced: `cachedPromptTokens` are part of `promptTokens`. */
export interface TokenCounts {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedPromptTokens?: number;
}

export function tokenCounts(usage: Usage): TokenCounts {
  const cached = usage.prompt_tokens_details?.cached_tokens;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    cachedPromptTokens: typeof cached === 'number' ? cached : 0,
  };
}

/** Decimal places money is kept to: 0.1 nano-USD, far below a token at any listed price (the cheapest are ~1e-8 USD). */
export const USD_DECIMALS = 10;

/**
 * `usd` rounded to {@link USD_DECIMALS} places: products and sums of prices per million tokens carry
 * binary float noise ((20 × 0.15 + 14 × 0.35) / 1e6 is 0.000007899999999999999), which every consumer
 * (logs, exports, the admin API, metrics) would otherwise show.
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 10 ** USD_DECIMALS) / 10 ** USD_DECIMALS;
}

/** Cost in USD of `tokens` at `price`, rounded to {@link USD_DECIMALS} places. */
export function costOf(price: ModelPrice, tokens: TokenCounts): number {
  const cached = Math.min(Math.max(tokens.cachedPromptTokens ?? 0, 0), tokens.promptTokens);
  const uncached = tokens.promptTokens - cached;
  return roundUsd((uncached * price.input + cached * (price.cachedInput ?? price.input) + tokens.completionTokens * price.output) / 1_000_000);
}

/** Cost in USD of `searches` search units at `price` (0 when the price has no search component). */
export function searchesCostOf(price: ModelPrice, searches: number): number {
  return price.searches === undefined ? 0 : roundUsd((searches * price.searches) / 1000);
}

/** A provider id given alone is looked up in the catalogue under the same id. */
function pricedProvider(provider: string | PricedProvider): PricedProvider {
  return typeof provider === 'string' ? { id: provider, pricing: { catalogProvider: provider } } : provider;
}

/**
 * The prices the gateway charges: the configuration's `pricing.models` first, then the shipped
 * catalogue under the provider's declared catalogue id and model name, then the unknown-model policy.
 */
export class PriceTable {
  private readonly overrides = new Map<string, Map<string, ModelPrice>>();
  readonly unknownModel: UnknownModelPolicy;
  /** Lookups already made (each request makes two), by provider and model name; bounded. */
  private readonly found = new Map<string, PriceLookup>();

  constructor(options: PricingOptions = {}) {
    for (const [provider, models] of Object.entries(options.models ?? {})) {
      this.overrides.set(provider, new Map(Object.entries(models).map(([model, price]) => [model.toLowerCase(), price])));
    }
    this.unknownModel = options.unknownModel ?? 'refuse';
  }

  /** The configured or catalogue price of the model and where it came from (`none` when neither lists it). */
  lookUp(provider: string | PricedProvider, model: string, headers: Readonly<Record<string, string | undefined>> = NO_HEADERS): PriceLookup {
    const priced = pricedProvider(provider);
    const catalogName = priced.pricing?.modelName?.(model, headers) ?? model;
    const key = `${priced.id}\u0000${model}\u0000${catalogName}`;
    const known = this.found.get(key);
    if (known) return known;
    const lookup = this.configured(priced.id, model, catalogName) ?? this.catalogued(priced, catalogName) ?? { source: 'none' };
    // Callers choose model names: past the bound, lookups are simply not remembered.
    if (this.found.size < MAX_REMEMBERED_LOOKUPS) this.found.set(key, lookup);
    return lookup;
  }

  private configured(providerId: string, model: string, catalogName: string): PriceLookup | undefined {
    const models = this.overrides.get(providerId);
    if (!models) return undefined;
    for (const candidate of new Set([...candidates(model), ...candidates(catalogName)])) {
      const price = models.get(candidate);
      if (price) return { price, source: 'config' };
    }
    return undefined;
  }

  private catalogued(provider: PricedProvider, catalogName: string): PriceLookup | undefined {
    if (!provider.pricing) return undefined;
    const found = cataloguePrice(provider.pricing.catalogProvider, catalogName);
    return found && { ...found, source: `catalogue@${CATALOGUE_VERSION}` };
  }

  /** The configured or catalogue price, or undefined when neither lists the model. */
  listed(provider: string | PricedProvider, model: string, headers?: Readonly<Record<string, string | undefined>>): ModelPrice | undefined {
    return this.lookUp(provider, model, headers).price;
  }

  /** The price to charge: listed, else per the unknown-model policy (`undefined` means refuse). */
  price(provider: string | PricedProvider, model: string | undefined, headers?: Readonly<Record<string, string | undefined>>): ModelPrice | undefined {
    const listed = model === undefined ? undefined : this.listed(provider, model, headers);
    if (listed) return listed;
    if (this.unknownModel === 'refuse') return undefined;
    if (this.unknownModel === 'zero') return { input: 0, output: 0 };
    return this.unknownModel;
  }
}
