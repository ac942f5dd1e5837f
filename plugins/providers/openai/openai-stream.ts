import type { ChatCompletionChunk, StreamMapper, StreamStep } from '../../../core/spec/index.js';

/**
 * OpenAI streams (chat and text completions) are already unified chunks; `[DONE]` ends them; an
 * `error` event is mapped.
 */
export function createOpenAIStreamMapper<Chunk = ChatCompletionChunk>(): StreamMapper<Chunk> {
  return {
    map(event): StreamStep<Chunk> {
      if (event.data === '[DONE]') return { done: true };
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        return { error: { message: 'The provider sent a stream event that is not JSON.', type: 'upstream_error', param: null, code: 'malformed_stream' } };
      }
      if (typeof parsed !== 'object' || parsed === null) return {};
      const value = parsed as Record<string, unknown>;
      if (value.error && typeof value.error === 'object') {
        const error = value.error as Record<string, unknown>;
        return {
          error: {
            message: typeof error.message === 'string' ? error.message : 'The provider reported an error in the stream.',
            type: typeof error.type === 'string' ? error.type : 'api_error',
            param: typeof error.param === 'string' ? error.param : null,
            code: typeof error.code === 'string' ? error.code : null,
          },
        };
      }
      if (!Array.isArray(value.choices)) return {}; // unknown event shapes are ignored, never fatal
      return { chunks: [value as unknown as Chunk] };
    },
  };
}
