import { SSE_DONE } from '../http/sse.js';
import type { ChatChunkChoice, ChatCompletionChunk, ChatResponse, Usage } from '../spec/unified.js';
import { strictChatChunk } from './chat-strict.js';
import { type ChunkIdentity, chunkWithIdentity, sseChunk, type StreamShape } from './stream-relay.js';

/** A chat chunk with the identity (id, created, model, fingerprint) of `source`. */
const chunkLike = (source: ChunkIdentity | undefined, choices: ChatChunkChoice[], usage: Usage | null): ChatCompletionChunk =>
  chunkWithIdentity<ChatCompletionChunk>('chat.completion.chunk', source, choices, usage);

/** Chat chunks: `object: chat.completion.chunk`, strict fields of OpenAI's chat chunk schema. */
export const chatStreamShape: StreamShape<ChatCompletionChunk> = {
  strict: strictChatChunk,
  usageChunk: (source, usage) => chunkLike(source, [], usage),
};

/**
 * A whole completion as the SSE events of a stream (for upstreams that answer a streamed request
 * with one JSON body): per choice a chunk with its message as the delta and one with its
 * finish_reason, then the usage chunk when asked for, then `[DONE]`.
 */
export function completionAsStream(response: ChatResponse, includeUsage: boolean, strict: boolean): string {
  let out = '';
  const send = (chunk: ChatCompletionChunk) => sseChunk(chunk, chatStreamShape, strict);
  for (const choice of response.choices) {
    const { tool_calls: toolCalls, ...message } = choice.message;
    const delta: ChatChunkChoice['delta'] = { ...message };
    if (toolCalls) delta.tool_calls = toolCalls.map((call, index) => ({ index, ...call }));
    out += send(chunkLike(response, [{ index: choice.index, delta, logprobs: choice.logprobs ?? null, finish_reason: null }], null));
    out += send(chunkLike(response, [{ index: choice.index, delta: {}, logprobs: null, finish_reason: choice.finish_reason }], null));
  }
  if (includeUsage && response.usage) out += send(chunkLike(response, [], response.usage));
  return out + SSE_DONE;
}
