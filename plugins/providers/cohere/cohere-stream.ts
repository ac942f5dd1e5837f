import type { ChatChunkChoice, ChatCompletionChunk, ChatRequest, ChatStreamMapper, ProviderTarget, StreamStep, Usage } from '../../../core/spec/index.js';
import { blockNumbering, completionId, contentBlockDelta, nowSeconds, parseEventData, streamError } from '../../shared/chat-mapping.js';
import { FAILED, finishReason, mapUsage } from './cohere-response.js';

/**
 * Chat v2 stream events to unified chunks: message-start → role; content-delta → text (or, when
 * not strict, thinking); tool-plan-delta → (not strict) a `tool_plan` content block;
 * tool-call-start / tool-call-delta → a tool call's id, name and argument fragments; message-end →
 * finish_reason, the usage chunk and the end. content-start/-end, tool-call-end, citation events
 * and unknown events carry nothing for the client and are ignored.
 */
export function createCohereStreamMapper(request: ChatRequest, target: ProviderTarget): ChatStreamMapper {
  let id = completionId();
  const created = nowSeconds();
  const toolIndex = new Map<number, number>();
  const blockIndex = blockNumbering();

  const chunk = (choices: ChatChunkChoice[], usage: Usage | null = null): ChatCompletionChunk => ({ id, object: 'chat.completion.chunk', created, model: request.model, choices, usage });
  const delta = (value: ChatChunkChoice['delta'], finish: string | null = null): StreamStep => ({
    chunks: [chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }])],
  });

  return {
    map(event): StreamStep {
      const data = parseEventData(event.data);
      if (!data) return event.data.trim().startsWith('{') ? { error: streamError('Cohere sent a stream event that is not JSON.', 'malformed_stream') } : {};
      const type = typeof data.type === 'string' ? data.type : event.event;
      const message = ((data.delta as { message?: Record<string, any> } | undefined)?.message ?? {}) as Record<string, any>;
      switch (type) {
        case 'message-start':
          if (typeof data.id === 'string' && data.id) id = data.id;
          return delta({ role: 'assistant', content: '' });
        case 'content-delta': {
          const content = message.content ?? {};
          if (typeof content.text === 'string') return delta({ content: content.text });
          if (typeof content.thinking === 'string' && !target.strict) return delta(contentBlockDelta({ index: blockIndex(`content:${String(data.index ?? 0)}`), type: 'thinking', text: content.thinking }));
          return {};
        }
        case 'tool-plan-delta':
          return typeof message.tool_plan === 'string' && !target.strict ? delta(contentBlockDelta({ index: blockIndex('tool_plan'), type: 'tool_plan', text: message.tool_plan })) : {};
        case 'tool-call-start': {
          const call = message.tool_calls ?? {};
          const index = toolIndex.size;
          toolIndex.set(Number(data.index ?? index), index);
          return delta({
            tool_calls: [{ index, id: String(call.id ?? ''), type: 'function', function: { name: String(call.function?.name ?? ''), arguments: String(call.function?.arguments ?? '') } }],
          });
        }
        case 'tool-call-delta': {
          const index = toolIndex.get(Number(data.index ?? 0));
          const fragment = message.tool_calls?.function?.arguments;
          if (index === undefined || typeof fragment !== 'string') return {};
          return delta({ tool_calls: [{ index, function: { arguments: fragment } }] });
        }
        case 'message-end': {
          const end = (data.delta ?? {}) as { finish_reason?: unknown; usage?: unknown; error?: unknown };
          if (FAILED.has(String(end.finish_reason))) {
            const reason = typeof end.error === 'string' && end.error ? end.error : `Cohere ended the generation with ${String(end.finish_reason)}.`;
            return { error: streamError(reason, 'upstream_generation_failed') };
          }
          const finish = delta({}, finishReason(end.finish_reason)).chunks!;
          return { chunks: [...finish, chunk([], mapUsage(end.usage))], done: true };
        }
        case 'error':
          return { error: streamError(typeof data.message === 'string' ? data.message : 'Cohere reported an error in the stream.', 'stream_error', 'api_error') };
        default:
          return {};
      }
    },
  };
}
