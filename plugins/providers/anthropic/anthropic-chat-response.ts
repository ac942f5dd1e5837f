import { type ChatChoice, type ChatRequest, type ChatResponse, type ProviderTarget, type ToolCall, type Usage, unifiedMessagesUsage } from '../../../core/spec/index.js';
import type { ContentBlock } from '../../shared/chat-mapping.js';

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface AnthropicResponseBody {
  id?: string;
  type?: string;
  model?: string;
  content?: Array<Record<string, unknown>>;
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export const mapAnthropicStopReason = (reason: string | null | undefined): string => (reason ? (STOP_REASONS[reason] ?? 'stop') : 'stop');

/**
 * Anthropic counts cached prompt tokens apart from `input_tokens`; OpenAI's `prompt_tokens` includes
 * them, with the cache reads in `prompt_tokens_details.cached_tokens`.
 */
export function mapAnthropicUsage(usage: AnthropicUsage | undefined): Usage {
  return unifiedMessagesUsage(usage);
}

/** A Messages API answer as a unified chat completion; thinking goes to `content_blocks` when not strict. */
export function fromAnthropicResponse(body: unknown, request: ChatRequest, target: ProviderTarget): ChatResponse {
  const response = body as AnthropicResponseBody;
  if (typeof response !== 'object' || response === null || !Array.isArray(response.content)) throw new TypeError('Anthropic response without content');
  let text = '';
  let hasText = false;
  const toolCalls: ToolCall[] = [];
  const blocks: ContentBlock[] = [];
  for (const block of response.content) {
    if (block.type === 'text' && typeof block.text === 'string') {
      text += block.text;
      hasText = true;
      blocks.push({ type: 'text', text: block.text });
    } else if (block.type === 'tool_use') {
      toolCalls.push({ id: String(block.id ?? ''), type: 'function', function: { name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) } });
    } else if (block.type === 'thinking') {
      blocks.push({ type: 'thinking', text: String(block.thinking ?? ''), signature: String(block.signature ?? '') });
    } else if (block.type === 'redacted_thinking') {
      blocks.push({ type: 'redacted_thinking', data: String(block.data ?? '') });
    }
  }
  const message: ChatChoice['message'] = { role: 'assistant', content: hasText ? text : toolCalls.length > 0 ? null : '' };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (!target.strict && blocks.some((block) => block.type !== 'text')) message.content_blocks = blocks;
  return {
    id: response.id ?? `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: response.model ?? request.model,
    choices: [{ index: 0, message, finish_reason: mapAnthropicStopReason(response.stop_reason), logprobs: null }],
    usage: mapAnthropicUsage(response.usage),
  };
}
