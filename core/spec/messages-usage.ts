import type { MessagesUsage } from './messages.js';
import type { Usage } from './unified.js';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Messages usage as the unified usage the log and the price table read: the Messages API counts
 * cache reads and writes apart from `input_tokens`, the unified `prompt_tokens` includes them, with
 * the reads in `prompt_tokens_details.cached_tokens`.
 */
export function unifiedMessagesUsage(usage: Readonly<Partial<Record<'input_tokens' | 'output_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens', number | null>>> | undefined): Usage {
  const cacheRead = count(usage?.cache_read_input_tokens);
  const cacheCreation = count(usage?.cache_creation_input_tokens);
  const prompt = count(usage?.input_tokens) + cacheRead + cacheCreation;
  const completion = count(usage?.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_creation_tokens: cacheCreation },
  };
}

/** Unified usage as the Messages API reports it (the inverse of {@link unifiedMessagesUsage}). */
export function messagesUsage(usage: Usage | null | undefined): MessagesUsage {
  const cacheRead = count(usage?.prompt_tokens_details?.cached_tokens);
  const cacheCreation = count(usage?.prompt_tokens_details?.cache_creation_tokens);
  return {
    input_tokens: Math.max(0, count(usage?.prompt_tokens) - cacheRead - cacheCreation),
    output_tokens: count(usage?.completion_tokens),
    cache_creation_input_tokens: cacheCreation,
    cache_read_input_tokens: cacheRead,
  };
}
