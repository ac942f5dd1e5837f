/**
 * A cheap, deliberately simple estimate of a request's prompt tokens for cost reservations:
 * ceil(characters / 4) over the text the request sends (message contents and names, a Messages
 * `system`, `prompt`, `input`, tool definitions), skipping image and audio data. Four characters per token is the usual
 * average for English with BPE tokenizers; the exact count arrives with the response's usage and
 * replaces the estimate. A tokenizer-exact count belongs to a later issue.
 */
export function estimatePromptTokens(body: unknown): number {
  if (body === null || typeof body !== 'object') return 0;
  const request = body as Record<string, unknown>;
  let characters = 0;
  const walk = (value: unknown, depth: number): void => {
    if (depth > 32) return;
    if (typeof value === 'string') characters += value.length;
    else if (Array.isArray(value)) for (const item of value) walk(item, depth + 1);
    else if (value !== null && typeof value === 'object') {
      for (const [field, inner] of Object.entries(value)) {
        // Image, audio and file bytes (a Messages block's `source`) are not text.
        if (field === 'image_url' || field === 'input_audio' || field === 'file' || field === 'file_data' || field === 'source') continue;
        walk(inner, depth + 1);
      }
    }
  };
  for (const field of ['messages', 'system', 'prompt', 'input', 'instructions', 'tools', 'functions']) walk(request[field], 0);
  return Math.ceil(characters / 4);
}

/** The output tokens a request may produce: `max_completion_tokens`, `max_tokens` or (Responses) `max_output_tokens` (times `n`), else the fallback. */
export function expectedOutputTokens(body: unknown, fallback: number): { tokens: number; bounded: boolean } {
  const request = (body ?? {}) as Record<string, unknown>;
  const limit = [request.max_completion_tokens, request.max_tokens, request.max_output_tokens].find((value) => typeof value === 'number' && value >= 0) as number | undefined;
  const choices = typeof request.n === 'number' && request.n > 1 ? request.n : 1;
  return limit === undefined ? { tokens: fallback * choices, bounded: false } : { tokens: limit * choices, bounded: true };
}
