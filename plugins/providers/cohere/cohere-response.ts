import { type ChatChoice, type ChatRequest, type ChatResponse, errors, type ProviderTarget, type ToolCall, type Usage } from '../../../core/spec/index.js';
import { completionId, nowSeconds } from '../../shared/chat-mapping.js';

const FINISH_REASONS: Readonly<Record<string, string>> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR_TOXIC: 'content_filter',
  ERROR_LIMIT: 'length',
};

export const finishReason = (reason: unknown): string => FINISH_REASONS[String(reason)] ?? 'stop';

/** Finish reasons that mean the generation failed (no usable answer). */
export const FAILED = new Set(['ERROR', 'TIMEOUT']);

/** Actual tokens when given, else the billed units. */
export function mapUsage(usage: unknown): Usage {
  const value = (usage ?? {}) as { tokens?: Record<string, unknown>; billed_units?: Record<string, unknown> };
  const count = (field: string) => {
    const tokens = value.tokens?.[field] ?? value.billed_units?.[field];
    return typeof tokens === 'number' ? tokens : 0;
  };
  const prompt = count('input_tokens');
  const completion = count('output_tokens');
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A Chat v2 response to a unified chat completion. */
export function fromCohereResponse(body: unknown, request: ChatRequest, target: ProviderTarget): ChatResponse {
  const value = body as { id?: unknown; finish_reason?: unknown; message?: Record<string, unknown>; usage?: unknown };
  if (!value || typeof value !== 'object' || !value.message || typeof value.message !== 'object') throw new TypeError('Cohere chat response without message');
  if (FAILED.has(String(value.finish_reason))) {
    throw errors.badGateway(`Cohere ended the generation with ${String(value.finish_reason)}.`, { code: 'upstream_generation_failed' });
  }
  const parts = Array.isArray(value.message.content) ? (value.message.content as Array<Record<string, unknown>>) : [];
  const text = parts.filter((part) => part.type === 'text').map((part) => String(part.text ?? '')).join('');
  const blocks: Array<{ type: string; text?: string }> = parts.filter((part) => part.type === 'thinking').map((part) => ({ type: 'thinking', text: String(part.thinking ?? '') }));
  if (typeof value.message.tool_plan === 'string' && value.message.tool_plan) blocks.push({ type: 'tool_plan', text: value.message.tool_plan });
  const toolCalls: ToolCall[] = (Array.isArray(value.message.tool_calls) ? (value.message.tool_calls as Array<Record<string, any>>) : []).map((call) => ({
    id: String(call.id),
    type: 'function',
    function: { name: String(call.function?.name ?? ''), arguments: typeof call.function?.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function?.arguments ?? {}) },
  }));
  const message: ChatChoice['message'] = { role: 'assistant', content: text === '' && toolCalls.length ? null : text };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (!target.strict && blocks.length) message.content_blocks = blocks;
  return {
    id: typeof value.id === 'string' && value.id ? value.id : completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model: request.model,
    choices: [{ index: 0, message, finish_reason: finishReason(value.finish_reason), logprobs: null }],
    usage: mapUsage(value.usage),
  };
}
