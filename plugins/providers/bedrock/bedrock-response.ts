import { type ChatChoice, type ChatRequest, type ChatResponse, isRecord, type ProviderTarget, type ToolCall, type Usage } from '../../../core/spec/index.js';
import { type ContentBlock, completionId, nowSeconds } from '../../shared/chat-mapping.js';

export const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export const finishReason = (stopReason: unknown): string => FINISH_REASONS[String(stopReason)] ?? 'stop';

/** Converse usage to unified usage: prompt tokens include cache reads and writes, as OpenAI counts them. */
export function mapUsage(usage: unknown): Usage {
  const value = (usage ?? {}) as Record<string, unknown>;
  const count = (field: string) => (typeof value[field] === 'number' ? (value[field] as number) : 0);
  const cacheRead = count('cacheReadInputTokens');
  const cacheWrite = count('cacheWriteInputTokens');
  const prompt = count('inputTokens') + cacheRead + cacheWrite;
  const completion = count('outputTokens');
  const mapped: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cacheRead || cacheWrite) mapped.prompt_tokens_details = { cached_tokens: cacheRead, cache_creation_tokens: cacheWrite };
  return mapped;
}

/** A Converse response to a unified chat completion. */
export function fromConverseResponse(body: unknown, request: ChatRequest, target: ProviderTarget): ChatResponse {
  const value = body as { output?: { message?: { content?: unknown } }; stopReason?: unknown; usage?: unknown };
  const blocks = value?.output?.message?.content;
  if (!Array.isArray(blocks)) throw new TypeError('Bedrock Converse response without output.message.content');
  let text = '';
  const toolCalls: ToolCall[] = [];
  const ordered: ContentBlock[] = [];
  for (const block of blocks as unknown[]) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') {
      text += block.text;
      ordered.push({ type: 'text', text: block.text });
    } else if (isRecord(block.toolUse)) {
      toolCalls.push({ id: String(block.toolUse.toolUseId), type: 'function', function: { name: String(block.toolUse.name), arguments: JSON.stringify(block.toolUse.input ?? {}) } });
    } else if (isRecord(block.reasoningContent)) {
      const { reasoningText, redactedContent } = block.reasoningContent;
      if (isRecord(reasoningText)) {
        const thought = String(reasoningText.text ?? '');
        ordered.push(typeof reasoningText.signature === 'string' && reasoningText.signature ? { type: 'thinking', text: thought, signature: reasoningText.signature } : { type: 'thinking', text: thought });
      } else if (typeof redactedContent === 'string') ordered.push({ type: 'redacted_thinking', data: redactedContent });
    }
  }
  const message: ChatChoice['message'] = { role: 'assistant', content: text === '' && toolCalls.length ? null : text };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (!target.strict && ordered.some((block) => block.type !== 'text')) message.content_blocks = ordered;
  return {
    id: completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model: request.model,
    choices: [{ index: 0, message, finish_reason: finishReason(value.stopReason), logprobs: null }],
    usage: mapUsage(value.usage),
  };
}
