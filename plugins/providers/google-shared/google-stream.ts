import { type ChatChunkChoice, type ChatCompletionChunk, type ChatRequest, type ChatStreamMapper, isRecord, type ProviderTarget, type StreamStep, type Usage } from '../../../core/spec/index.js';
import { candidatesOf, chatId, digestParts, type GeminiResponseBody, mapGeminiFinishReason, mapGeminiUsage } from './google-chat-response.js';
import { contentBlockDelta, MALFORMED_EVENT } from '../../shared/chat-mapping.js';
import { googleErrorBody } from './google-error.js';

/**
 * Maps `streamGenerateContent?alt=sse` events (each a whole `GenerateContentResponse` holding the
 * next piece of each candidate) to unified chunks. Gemini has no end marker: the stream is complete
 * once every candidate has sent its `finishReason` (or the prompt was blocked); the usage chunk, from
 * the last `usageMetadata`, follows.
 */
export function createGeminiStreamMapper(request: ChatRequest, target: ProviderTarget): ChatStreamMapper {
  const expected = typeof request.n === 'number' && request.n > 1 ? request.n : 1;
  const started = new Set<number>();
  const finished = new Set<number>();
  const toolCounts = new Map<number, number>();
  let id: string | undefined;
  let model = request.model;
  const created = Math.floor(Date.now() / 1000);
  let usage: Usage | undefined;

  const chunk = (choices: ChatChunkChoice[], chunkUsage: Usage | null = null): ChatCompletionChunk => ({
    id: id ?? chatId(undefined),
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
    usage: chunkUsage,
  });

  return {
    map(event): StreamStep {
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        return { error: MALFORMED_EVENT };
      }
      const first: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
      if (!isRecord(first)) return {};
      const value = first as GeminiResponseBody & { error?: unknown };
      if (isRecord(value.error)) return { error: googleErrorBody(value.error, 500) };
      id ??= chatId(typeof value.responseId === 'string' ? value.responseId : undefined);
      if (typeof value.modelVersion === 'string' && value.modelVersion) model = value.modelVersion;
      if (isRecord(value.usageMetadata)) usage = mapGeminiUsage(value.usageMetadata);

      const chunks: ChatCompletionChunk[] = [];
      const candidates = candidatesOf(value);
      if (candidates.length === 0 && isRecord(value.promptFeedback) && value.promptFeedback.blockReason) {
        chunks.push(chunk([{ index: 0, delta: { role: 'assistant', content: null }, logprobs: null, finish_reason: 'content_filter' }]));
        chunks.push(chunk([], usage ?? mapGeminiUsage(undefined)));
        return { chunks, done: true };
      }
      for (const { index, candidate } of candidates) {
        if (finished.has(index)) continue;
        const digest = digestParts(candidate);
        const delta: ChatChunkChoice['delta'] = {};
        if (!started.has(index)) {
          started.add(index);
          delta.role = 'assistant';
        }
        if (digest.hasText) delta.content = digest.text;
        if (!target.strict && digest.thinking) Object.assign(delta, contentBlockDelta({ index: 0, type: 'thinking', text: digest.thinking }));
        if (digest.toolCalls.length > 0) {
          const first = toolCounts.get(index) ?? 0;
          toolCounts.set(index, first + digest.toolCalls.length);
          delta.tool_calls = digest.toolCalls.map((call, offset) => ({ index: first + offset, ...call }));
        }
        if (Object.keys(delta).length > 0) chunks.push(chunk([{ index, delta, logprobs: null, finish_reason: null }]));
        const finish = mapGeminiFinishReason(typeof candidate.finishReason === 'string' ? candidate.finishReason : undefined, (toolCounts.get(index) ?? 0) > 0);
        if (finish) {
          finished.add(index);
          chunks.push(chunk([{ index, delta: {}, logprobs: null, finish_reason: finish }]));
        }
      }
      if (finished.size >= expected) {
        chunks.push(chunk([], usage ?? mapGeminiUsage(undefined)));
        return { chunks, done: true };
      }
      return { chunks };
    },
  };
}
