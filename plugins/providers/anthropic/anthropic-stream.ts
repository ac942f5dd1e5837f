import type { ChatChunkChoice, ChatCompletionChunk, ChatRequest, ChatStreamMapper, ProviderTarget, StreamStep } from '../../../core/spec/index.js';
import { type AnthropicUsage, mapAnthropicStopReason, mapAnthropicUsage } from './anthropic-chat-response.js';
import { type ContentBlockDelta, contentBlockDelta, MALFORMED_EVENT } from '../../shared/chat-mapping.js';
import { anthropicErrorBody } from './anthropic-error.js';

type Delta = ChatChunkChoice['delta'];

/**
 * Maps the Messages API event stream to unified chunks: `message_start` opens the assistant turn,
 * text and tool-use blocks become content and tool-call deltas (tool calls numbered in order),
 * thinking deltas go to `content_blocks` when not strict, `message_delta` carries the finish reason
 * and the final usage, `message_stop` ends the stream, `error` ends it with the error. `ping` and
 * unknown events are ignored.
 */
export function createAnthropicStreamMapper(request: ChatRequest, target: ProviderTarget): ChatStreamMapper {
  let id = '';
  let model = request.model;
  const created = Math.floor(Date.now() / 1000);
  const usage: AnthropicUsage = {};
  const toolIndexByBlock = new Map<number, number>();

  const chunk = (delta: Delta, finishReason: string | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  });
  const thinkingChunk = (piece: ContentBlockDelta): StreamStep => (target.strict ? {} : { chunks: [chunk(contentBlockDelta(piece))] });
  const takeUsage = (value: unknown) => {
    if (typeof value !== 'object' || value === null) return;
    for (const [key, count] of Object.entries(value)) if (typeof count === 'number') (usage as Record<string, number>)[key] = count;
  };

  const onBlockStart = (index: number, block: Record<string, unknown>): StreamStep => {
    if (block.type === 'text') return typeof block.text === 'string' && block.text ? { chunks: [chunk({ content: block.text })] } : {};
    if (block.type === 'tool_use') {
      const toolIndex = toolIndexByBlock.size;
      toolIndexByBlock.set(index, toolIndex);
      return { chunks: [chunk({ tool_calls: [{ index: toolIndex, id: String(block.id ?? ''), type: 'function', function: { name: String(block.name ?? ''), arguments: '' } }] })] };
    }
    if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking) return thinkingChunk({ index, type: 'thinking', text: block.thinking });
    if (block.type === 'redacted_thinking' && typeof block.data === 'string') return thinkingChunk({ index, type: 'redacted_thinking', data: block.data });
    return {};
  };

  const onBlockDelta = (index: number, delta: Record<string, unknown>): StreamStep => {
    switch (delta.type) {
      case 'text_delta':
        return typeof delta.text === 'string' ? { chunks: [chunk({ content: delta.text })] } : {};
      case 'input_json_delta': {
        const toolIndex = toolIndexByBlock.get(index);
        if (toolIndex === undefined || typeof delta.partial_json !== 'string' || delta.partial_json === '') return {};
        return { chunks: [chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] })] };
      }
      case 'thinking_delta':
        return typeof delta.thinking === 'string' ? thinkingChunk({ index, type: 'thinking', text: delta.thinking }) : {};
      case 'signature_delta':
        return typeof delta.signature === 'string' ? thinkingChunk({ index, type: 'thinking', signature: delta.signature }) : {};
      default:
        return {}; // citations and future delta types
    }
  };

  return {
    map(event): StreamStep {
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        return { error: MALFORMED_EVENT };
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
      const data = parsed as Record<string, unknown>;
      const type = typeof data.type === 'string' ? data.type : event.event;
      const index = typeof data.index === 'number' ? data.index : -1;
      switch (type) {
        case 'message_start': {
          const message = (data.message ?? {}) as Record<string, unknown>;
          if (typeof message.id === 'string') id = message.id;
          if (typeof message.model === 'string') model = message.model;
          takeUsage(message.usage);
          return { chunks: [chunk({ role: 'assistant', content: '' })] };
        }
        case 'content_block_start':
          return typeof data.content_block === 'object' && data.content_block !== null ? onBlockStart(index, data.content_block as Record<string, unknown>) : {};
        case 'content_block_delta':
          return typeof data.delta === 'object' && data.delta !== null ? onBlockDelta(index, data.delta as Record<string, unknown>) : {};
        case 'message_delta': {
          takeUsage(data.usage);
          const delta = (data.delta ?? {}) as Record<string, unknown>;
          const finish = chunk({}, mapAnthropicStopReason(typeof delta.stop_reason === 'string' ? delta.stop_reason : null));
          return { chunks: [finish, { ...chunk({}), choices: [], usage: mapAnthropicUsage(usage) }] };
        }
        case 'message_stop':
          return { done: true };
        case 'error': {
          const error = typeof data.error === 'object' && data.error !== null ? (data.error as Record<string, unknown>) : {};
          return { error: anthropicErrorBody(error, 500) };
        }
        default:
          return {}; // ping, content_block_stop and event types added later
      }
    },
  };
}
