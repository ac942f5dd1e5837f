import { type ChatCompletionChunk, type ErrorBody, isRecord, type StreamMapper, type StreamStep, type Usage } from '../../../core/spec/index.js';
import { MALFORMED_EVENT } from '../../shared/chat-mapping.js';

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
        return { error: MALFORMED_EVENT };
      }
      if (!isRecord(parsed)) return {};
      const value = parsed;
      if (isRecord(value.error)) return { error: streamError(value.error) };
      const lifted = options.usageField && !isRecord(value.usage) ? at(value, options.usageField) : undefined;
      const usage = isRecord(value.usage) ? value.usage : isRecord(lifted) ? lifted : undefined;
      if (!Array.isArray(value.choices)) {
        // A usage-only chunk without `choices` keeps its usage; other unknown shapes are ignored, never fatal.
        return usage ? { chunks: [{ ...value, choices: [], usage: usage as unknown as Usage } as Chunk] } : {};
      }
      return { chunks: [(isRecord(lifted) ? { ...value, usage: lifted as unknown as Usage } : value) as Chunk] };
    },
  };
}
