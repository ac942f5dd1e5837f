// The response cache's slice of the request's context, declared here by module augmentation, so
// that core/pipeline/context.ts imports nothing above the pipeline.
declare module '../pipeline/context.js' {
  interface GatewayContext {
    /**
     * Written by the response cache's hook (`core/cache/hook.ts`, transform stage) when the request's
     * route or the configuration caches it: what the lookup found and, on a miss it will store, the
     * recorder the operation reports its answer to.
     */
    cache?: CacheSlice;
  }
}

/** The response cache's verdict on a request, as the `x-gateway-cache` response header says it. */
export type CacheStatus = 'HIT' | 'SEMANTIC-HIT' | 'MISS' | 'BYPASS' | 'REFRESH';

export interface CacheSlice {
  readonly status: CacheStatus;
  /** Set on a hit: the stored answer's provider and model, its age, and what it cost when it was made (USD, when priced). */
  readonly hit?: { readonly provider: string; readonly model?: string; readonly ageSeconds: number; readonly savedUsd?: number; readonly similarity?: number };
  /** Set on a miss (or refresh) whose answer may be stored: the operation reports its answer here, before output guardrails. */
  readonly recorder?: AnswerRecorder;
  /**
   * Set when a semantic lookup embedded the request's text: the embeddings call's model, tokens and
   * price (USD, when priced), charged to the caller (added to the request's cost by the settle hook).
   */
  readonly embedding?: EmbeddingSpend;
}

/** What a semantic lookup's embeddings call used. */
export interface EmbeddingSpend {
  readonly provider: string;
  readonly model: string;
  readonly tokens: number;
  readonly costUsd?: number;
}

/**
 * Where an operation reports the answer it maps from the provider, before output guardrails judge
 * it, so that the response cache can store it: a whole answer at once, a stream chunk by chunk.
 */
export interface AnswerRecorder {
  /** A whole answer (a JSON upstream answer, mapped). */
  answer(answer: unknown): void;
  /** One streamed chunk, mapped. */
  chunk(chunk: unknown): void;
  /** The stream is complete (its end marker passed, nothing cut it); resolves once the answer is stored (bounded in time). */
  complete(): Promise<void>;
}
