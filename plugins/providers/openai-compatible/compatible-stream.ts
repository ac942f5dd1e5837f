import type { ChatCompletionChunk, ErrorBody, StreamMapper, StreamStep, Usage } from '../../../core/spec/index.js';

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** An `{"error": …}` event inside a stream, mapped to the gateway's error body. */
function streamError(error: Record<string, unknown>): ErrorBody {
  return {
    message: text(error.message) ?? 'The provider reported an error in the stream.',
    type: text(error.type) ?? 'api_error',
    param: text(error.param),
    code: text(error.code),
  };
}

const at = (value: Record<string, unknown>, path: string): unknown =>
  path.split('.').reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined), value);

/**
 * OpenAI-style SSE streams: each event is a chunk, `[DONE]` ends them, an `error` event is mapped.
 * `usageField` lifts usage a provider puts elsewhere (e.g. `x_groq.usage`) into `usage`; where the
 * usage chunk sits is normalised by the core's relay.
 */
export function createCompatibleStreamMapper<Chunk = ChatCompletionChunk>(options: { usageField?: string } = {}): StreamMapper<Chunk> {
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
      if (value.error && typeof value.error === 'object') return { error: streamError(value.error as Record<string, unknown>) };
      if (!Array.isArray(value.choices)) return {}; // unknown event shapes are ignored, never fatal
      if (options.usageField && !value.usage) {
        const usage = at(value, options.usageField);
        if (typeof usage === 'object' && usage !== null) return { chunks: [{ ...value, usage: usage as Usage } as Chunk] };
      }
      return { chunks: [value as Chunk] };
    },
  };
}
