import shipped from './prices.json' with { type: 'json' };
import type { Usage } from '../spec/unified.js';

/** Prices in USD per million tokens. `cachedInput` defaults to `input` when a provider has no discount. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cachedInput?: number;
}

/** How models absent from the table are priced: refused (for keys with a budget), free, or at a default price. */
export type UnknownModelPolicy = 'refuse' | 'zero' | ModelPrice;

export interface PricingOptions {
  /** Per provider id, per model: added to (and overriding) the shipped table. */
  readonly models?: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>>;
  /** Default `refuse`. */
  readonly unknownModel?: UnknownModelPolicy;
}

/** The date the shipped prices were last checked. */
export const PRICES_DATE: string = shipped.date;

const MAX_REMEMBERED_LOOKUPS = 4096;

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

/** Cost in USD of `tokens` at `price`. */
export function costOf(price: ModelPrice, tokens: TokenCounts): number {
  const cached = Math.min(Math.max(tokens.cachedPromptTokens ?? 0, 0), tokens.promptTokens);
  const uncached = tokens.promptTokens - cached;
  return (uncached * price.input + cached * (price.cachedInput ?? price.input) + tokens.completionTokens * price.output) / 1_000_000;
}

/** The pricing table: the shipped data, overridden by the configuration. */
export class PriceTable {
  private readonly table = new Map<string, Map<string, ModelPrice>>();
  readonly unknownModel: UnknownModelPolicy;

  constructor(options: PricingOptions = {}) {
    for (const source of [shipped.providers as Record<string, Record<string, ModelPrice>>, options.models ?? {}]) {
      for (const [provider, models] of Object.entries(source)) {
        const known = this.table.get(provider) ?? new Map<string, ModelPrice>();
        for (const [model, price] of Object.entries(models)) known.set(model.toLowerCase(), price);
        this.table.set(provider, known);
      }
    }
    this.unknownModel = options.unknownModel ?? 'refuse';
  }

  /** Lookups already made (each request makes two), by provider and model name as sent; bounded. */
  private readonly found = new Map<string, ModelPrice | null>();

  /** The table's price for the model, or undefined when it is not listed. */
  listed(provider: string, model: string): ModelPrice | undefined {
    const key = `${provider}\u0000${model}`;
    const known = this.found.get(key);
    if (known !== undefined) return known ?? undefined;
    const price = this.lookUp(provider, model);
    // Callers choose model names: past the bound, lookups are simply not remembered.
    if (this.found.size < MAX_REMEMBERED_LOOKUPS) this.found.set(key, price ?? null);
    return price;
  }

  private lookUp(provider: string, model: string): ModelPrice | undefined {
    const models = this.table.get(provider);
    if (!models) return undefined;
    for (const candidate of candidates(model)) {
      const price = models.get(candidate);
      if (price) return price;
    }
    return undefined;
  }

  /** The price to charge: listed, else per the unknown-model policy (`undefined` means refuse). */
  price(provider: string, model: string | undefined): ModelPrice | undefined {
    const listed = model === undefined ? undefined : this.listed(provider, model);
    if (listed) return listed;
    if (this.unknownModel === 'refuse') return undefined;
    if (this.unknownModel === 'zero') return { input: 0, output: 0 };
    return this.unknownModel;
  }
}
