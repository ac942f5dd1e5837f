import type { ChatCompletionChunk, ChatResponse } from '../../../core/spec/index.js';

/** Whether Azure's `content_filter_results` marks any category as filtered. */
export function filtered(results: unknown): boolean {
  if (!results || typeof results !== 'object') return false;
  return Object.values(results as Record<string, unknown>).some(
    (category) => category !== null && typeof category === 'object' && (category as { filtered?: unknown }).filtered === true,
  );
}

/** A choice whose output Azure's filter cut short ends with `content_filter`, whatever reason it carries. */
export function applyContentFilter<T extends ChatResponse | ChatCompletionChunk>(value: T): T {
  for (const choice of value.choices ?? []) {
    if (choice.finish_reason != null && choice.finish_reason !== 'content_filter' && filtered(choice.content_filter_results)) {
      choice.finish_reason = 'content_filter';
    }
  }
  return value;
}
