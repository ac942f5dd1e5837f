import type { Clock } from '../manifest.js';
import type { ChatChunkChoice, ChatCompletionChunk, Usage } from '../unified.js';
import { completionId, nowSeconds } from './chat-mapping.js';

/**
 * Usage from a provider's two counts (prompt and completion tokens; anything not a finite
 * non-negative number counts 0), with their total. `extra` carries detail objects the provider gives
 * (`prompt_tokens_details`, …).
 */
export function tokenUsage(promptTokens: unknown, completionTokens: unknown, extra: Partial<Usage> = {}): Usage {
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
  const prompt = count(promptTokens);
  const completion = count(completionTokens);
  return { ...extra, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Builds the unified chunks of one streamed chat answer (see {@link chatChunks}). */
export interface ChatChunkBuilder {
  /** The id every chunk of this answer carries. */
  readonly id: string;
  /** The `created` every chunk carries (seconds). */
  readonly created: number;
  /** A chunk of this answer with `choices` as given and `usage` (`null` unless given). */
  chunk(choices: ChatChunkChoice[], usage?: Usage | null): ChatCompletionChunk;
  /**
   * One delta of choice `index` (default 0), with its finish reason when it is the last. The first
   * delta of a choice is preceded by the chunk that opens it (`role: 'assistant'`, empty content),
   * so the result may hold two chunks.
   */
  delta(delta: ChatChunkChoice['delta'], finishReason?: string | null, index?: number): ChatCompletionChunk[];
  /** The chunk that ends choice `index` with `finishReason` (opening it first if nothing came). */
  finish(finishReason: string, index?: number): ChatCompletionChunk[];
  /** The usage chunk (`choices: []`): the core relays it when the client asked for `include_usage`. */
  usage(usage: Usage): ChatCompletionChunk;
}

/**
 * A chunk builder for one streamed chat answer: one id and one `created` for every chunk, each
 * choice opened once, `usage: null` on every chunk but the usage chunk. `id` defaults to a fresh
 * completion id; `created` is read from `clock` (the one the plugin's `create(dependencies)`
 * received) when given.
 */
export function chatChunks(options: { model: string; id?: string; clock?: Clock }): ChatChunkBuilder {
  const id = options.id ?? completionId();
  const created = nowSeconds(options.clock);
  const opened = new Set<number>();
  const chunk = (choices: ChatChunkChoice[], usage: Usage | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: options.model,
    choices,
    usage,
  });
  const delta = (value: ChatChunkChoice['delta'], finishReason: string | null = null, index = 0): ChatCompletionChunk[] => {
    const opening = opened.has(index) ? [] : [chunk([{ index, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
    opened.add(index);
    return [...opening, chunk([{ index, delta: value, finish_reason: finishReason }])];
  };
  return {
    id,
    created,
    chunk,
    delta,
    finish: (finishReason, index = 0) => delta({}, finishReason, index),
    usage: (usage) => chunk([], usage),
  };
}
