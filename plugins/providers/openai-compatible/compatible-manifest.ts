import type { ProviderForeignNames, ProviderModelCatalogue, ProviderPricing } from '../../../core/spec/index.js';

/**
 * What an OpenAI-compatible provider is: a manifest of data. Every difference from OpenAI's own API
 * that a provider documents is a named quirk here, applied by the shared adapters, so that no
 * provider folder copies mapping code.
 */

/** How the credential travels. */
export type CompatibleAuth =
  /** `Authorization: Bearer <key>` (like every style, sent only when a key was given: local servers run without one). */
  | { readonly kind: 'bearer' }
  /** A header of the provider's own, e.g. `x-api-key: <key>`, with an optional value prefix. */
  | { readonly kind: 'header'; readonly header: string; readonly prefix?: string };

/**
 * Where usage arrives in a stream.
 * - `stream-options`: only when `stream_options.include_usage` is sent (OpenAI's rule): the base always sends it.
 * - `always`: the provider puts usage in its last chunk unasked and does not accept `stream_options`.
 */
export type StreamUsagePlacement = 'stream-options' | 'always';

export interface ChatQuirks {
  /** Whether the `developer` role is understood (default false: the core sends it as `system`). */
  readonly developerRole?: boolean | ((model: string) => boolean);
  /** Whether `n` > 1 is honoured (default true). When false, `n` > 1 is refused with a 400 naming `n`. */
  readonly n?: boolean;
  /** Top-level request fields the provider rejects (e.g. `logit_bias`): refused with a 400 naming the field, and never sent. */
  readonly unsupportedFields?: readonly string[];
  /** Top-level fields the provider names differently (e.g. `seed` → `random_seed`). */
  readonly renamedFields?: Readonly<Record<string, string>>;
  /** The provider requires `max_tokens`: this default is filled in when the client sent none. */
  readonly maxTokensDefault?: number;
  /** The provider knows only `max_tokens`: a client's `max_completion_tokens` is sent as `max_tokens`. */
  readonly maxTokensOnly?: boolean;
  /** `messages[].name` is rejected by the provider: dropped before sending. */
  readonly noMessageNames?: boolean;
  /** Stream usage placement (default `stream-options`). */
  readonly streamUsage?: StreamUsagePlacement;
  /** A dotted path in a chunk where the provider puts usage instead of `usage` (e.g. `x_groq.usage`). */
  readonly streamUsageField?: string;
}

export interface EmbedQuirks {
  /** Top-level fields the provider names differently (e.g. `dimensions` → `output_dimension`). */
  readonly renamedFields?: Readonly<Record<string, string>>;
  /** The provider's default encoding is float and it refuses `encoding_format: "float"`: that value is dropped. */
  readonly dropFloatEncoding?: boolean;
}

export interface RerankQuirks {
  /** Top-level fields the provider names differently (e.g. `top_n` → `top_k`). */
  readonly renamedFields?: Readonly<Record<string, string>>;
  /** The answer's field holding the results (default `results`; Voyage: `data`). */
  readonly resultsField?: string;
  /** A result's field holding its score (default `relevance_score`; Mixedbread: `score`). */
  readonly scoreField?: string;
}

export type CompatibleOperation = 'chat' | 'embed' | 'rerank';

export interface CompatibleProviderManifest {
  /** The `x-gateway-provider` slug. */
  readonly id: string;
  /** How other gateways' configurations name this provider (`llm-gateway import`). */
  readonly foreignNames?: ProviderForeignNames;
  readonly name: string;
  readonly description: string;
  readonly version?: string;
  /** Default base URL, no trailing slash (overridable by the `baseUrl` param and per request by `x-gateway-custom-host`). */
  readonly baseUrl: string;
  readonly operations: readonly CompatibleOperation[];
  readonly auth: CompatibleAuth;
  /** Static headers every request carries. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Operation paths below the base URL (defaults `/chat/completions`, `/embeddings`, `/rerank`). */
  readonly paths?: { readonly chat?: string; readonly embed?: string; readonly rerank?: string };
  readonly chat?: ChatQuirks;
  readonly embed?: EmbedQuirks;
  readonly rerank?: RerankQuirks;
  /**
   * Pass-through URL for a path the provider serves outside its OpenAI-compatible base (for example
   * a native API beside `/v1`). Returns undefined for the default `baseUrl + path`.
   */
  passthroughUrl?(pathAndQuery: string, baseUrl: string): string | undefined;
  /** Where its token prices are found in the price catalogue (absent: priced only by the configuration). */
  readonly pricing?: ProviderPricing;
  /** Where the model catalogue lists its models (absent: under its id). */
  readonly modelCatalogue?: ProviderModelCatalogue;
}

/** Params every compatible provider's factory takes. */
export interface CompatibleParams {
  /** Default base URL instead of the provider's own (e.g. a self-hosted server or a regional endpoint). */
  baseUrl?: string;
  /** Extra static headers sent with every request (e.g. attribution headers). */
  headers?: Record<string, string>;
}

export const compatibleParamsSchema: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  properties: {
    baseUrl: { type: 'string', pattern: '^https?://' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
};
