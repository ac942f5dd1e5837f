import { type ChatChunkChoice, type ChatCompletionChunk, type ChatRequest, type ChatStreamMapper, type ErrorBody, isRecord, type ProviderTarget, type StreamStep, type UpstreamEvent, type Usage } from '../../../core/spec/index.js';
import { completionId, contentBlockDelta, nowSeconds, parseEventData, streamError } from '../../shared/chat-mapping.js';
import { finishReason, mapUsage } from './bedrock-response.js';
import { DECODE_ERROR_EVENT } from './bedrock-eventstream.js';

/** The error an eventstream event reports (a frame that does not decode, an exception), if it is one. */
export function bedrockStreamFailure(event: UpstreamEvent): ErrorBody | undefined {
  if (event.event === DECODE_ERROR_EVENT) return streamError(`The Bedrock event stream is malformed: ${event.data}.`, 'malformed_stream');
  if (!event.event?.startsWith('exception:') && event.event !== 'error') return undefined;
  const body = parseEventData(event.data) ?? {};
  const kind = event.event === 'error' ? String(body.code ?? 'error') : event.event.slice('exception:'.length);
  const message = typeof body.message === 'string' && body.message ? body.message : `Bedrock reported ${kind}.`;
  return streamError(message, kind, kind === 'throttlingException' ? 'rate_limit_error' : 'upstream_error');
}

/**
 * ConverseStream events (already unframed by the eventstream decoder) to unified chunks:
 * messageStart → role; contentBlockStart (toolUse) → a tool call's id and name; contentBlockDelta →
 * text, tool arguments or (when not strict) thinking; messageStop → finish_reason; metadata (which
 * Bedrock sends after messageStop) → the usage chunk and the end. Exceptions end the stream with an
 * error; unknown events are ignored.
 */
export function createBedrockStreamMapper(request: ChatRequest, target: ProviderTarget): ChatStreamMapper {
  const id = completionId();
  const created = nowSeconds();
  const toolIndexByBlock = new Map<number, number>();

  const chunk = (choices: ChatChunkChoice[], usage: Usage | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: request.model,
    choices,
    usage,
  });
  const delta = (value: ChatChunkChoice['delta'], finish: string | null = null): StreamStep => ({
    chunks: [chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }])],
  });

  /** A reasoning delta carries text, the block's signature, or (redacted) its encrypted data. */
  const reasoning = (index: number, value: Record<string, unknown>): StreamStep => {
    if (typeof value.text === 'string') return delta(contentBlockDelta({ index, type: 'thinking', text: value.text }));
    if (typeof value.signature === 'string') return delta(contentBlockDelta({ index, type: 'thinking', signature: value.signature }));
    if (typeof value.redactedContent === 'string') return delta(contentBlockDelta({ index, type: 'redacted_thinking', data: value.redactedContent }));
    return {};
  };

  return {
    map(event): StreamStep {
      const failure = bedrockStreamFailure(event);
      if (failure) return { error: failure };
      const data = parseEventData(event.data);
      if (!data) return {};
      switch (event.event) {
        case 'messageStart':
          return delta({ role: 'assistant', content: '' });
        case 'contentBlockStart': {
          const toolUse = (data.start as { toolUse?: { toolUseId?: unknown; name?: unknown } } | undefined)?.toolUse;
          if (!toolUse) return {};
          const index = toolIndexByBlock.size;
          toolIndexByBlock.set(Number(data.contentBlockIndex), index);
          return delta({ tool_calls: [{ index, id: String(toolUse.toolUseId), type: 'function', function: { name: String(toolUse.name), arguments: '' } }] });
        }
        case 'contentBlockDelta': {
          const value = (isRecord(data.delta) ? data.delta : {}) as { text?: unknown; toolUse?: { input?: unknown }; reasoningContent?: unknown };
          if (typeof value.text === 'string') return delta({ content: value.text });
          if (value.toolUse && typeof value.toolUse.input === 'string') {
            const index = toolIndexByBlock.get(Number(data.contentBlockIndex));
            if (index === undefined) return {};
            return delta({ tool_calls: [{ index, function: { arguments: value.toolUse.input } }] });
          }
          if (isRecord(value.reasoningContent) && !target.strict) return reasoning(Number(data.contentBlockIndex ?? 0), value.reasoningContent);
          return {};
        }
        case 'messageStop':
          return delta({}, finishReason(data.stopReason));
        case 'metadata':
          return { chunks: [chunk([], mapUsage(data.usage))], done: true };
        default:
          return {};
      }
    },
  };
}
