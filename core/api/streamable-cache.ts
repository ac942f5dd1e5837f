import { type CacheableOperation, type StreamAssembly, withoutDefaults } from '../cache/cacheable.js';
import type { TextChoice } from '../guardrails/output/index.js';
import { isRecord } from '../spec/is-record.js';
import type { RelayedChunk } from './stream-relay.js';
import { type StreamableOperation, type StreamableResponse, wholeAnswer } from './streamed-response.js';

/** What differs between the cacheable operations that stream (chat, text completions). */
export interface StreamableCache<Response, Chunk> {
  /** Body fields at their documented default, left out of the identity. */
  readonly defaults: Readonly<Record<string, unknown>>;
  /** The field holding the text a semantic lookup embeds (`messages`, `prompt`). */
  readonly textField: string;
  /** That field's text, or undefined when it holds something else too (images, tokens): then only exact lookups. */
  text(value: unknown): string | undefined;
  /** What of that field must match exactly besides its text (chat: each message without its content: roles, names). */
  shape?(value: unknown): unknown;
  assemble(): StreamAssembly<Chunk, Response>;
}

/**
 * The response cache's view of an operation that may stream: identity without `stream` flags and
 * defaults, so a streamed request hits a plain answer and back; a stored answer is replayed through
 * the same path as a whole upstream answer (output guardrails, then SSE events or JSON).
 */
export function streamableCache<Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }>(
  operation: StreamableOperation<Response, Chunk>,
  cache: StreamableCache<Response, Chunk>,
): CacheableOperation<Response, Chunk> {
  return {
    identity: (body) => (isRecord(body) ? withoutDefaults(body, cache.defaults) : undefined),
    semantic(identity) {
      const text = cache.text(identity[cache.textField]);
      if (text === undefined) return undefined;
      const { [cache.textField]: field, ...rest } = identity;
      return { text, rest: cache.shape ? { ...rest, [cache.textField]: cache.shape(field) } : rest };
    },
    assemble: () => cache.assemble(),
    storable: (answer) => answer.choices.length > 0 && answer.choices.every((choice) => typeof choice.finish_reason === 'string' && choice.finish_reason !== 'content_filter'),
    usage: (answer) => ({ ...(answer.usage ? { usage: answer.usage } : {}), ...(answer.model ? { model: answer.model } : {}) }),
    replay: (context, answer) => wholeAnswer(context, answer, operation),
  };
}
