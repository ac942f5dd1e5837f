import type { MessagesBlock, MessagesResponse } from '../../../spec/messages.js';
import type { ChatResponse } from '../../../spec/unified.js';
import { isRecord } from '../../../spec/is-record.js';
import { messagesUsage } from '../../../spec/messages-usage.js';
import { toolInput } from '../../../spec/tool-input.js';

const STOP_REASONS: Readonly<Record<string, string>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/**
 * A unified `finish_reason` as a Messages `stop_reason`. Chat does not say whether a stop sequence
 * ended the answer, so `stop` is always `end_turn` (docs/protocols.md).
 */
export const stopReasonOf = (finishReason: string | null | undefined): string => STOP_REASONS[finishReason ?? 'stop'] ?? 'end_turn';

/** A Messages id for a unified answer's id (`msg_` prefixed, so clients that look at it see the protocol's shape). */
export const messageIdOf = (id: string | undefined): string => (id?.startsWith('msg_') ? id : `msg_${id || Date.now().toString(36)}`);

/**
 * Thinking blocks of a unified answer: the gateway's `content_blocks` (thinking with its signature,
 * redacted thinking), else the `reasoning_content` / `reasoning` text OpenAI-compatible servers send.
 */
function thinkingBlocks(message: Record<string, unknown>): MessagesBlock[] {
  if (Array.isArray(message.content_blocks)) {
    const blocks: MessagesBlock[] = [];
    for (const block of message.content_blocks as unknown[]) {
      if (!isRecord(block)) continue;
      if (block.type === 'thinking') blocks.push({ type: 'thinking', thinking: String(block.text ?? ''), signature: String(block.signature ?? '') });
      else if (block.type === 'redacted_thinking' && typeof block.data === 'string') blocks.push({ type: 'redacted_thinking', data: block.data });
    }
    return blocks;
  }
  const reasoning = message.reasoning_content ?? message.reasoning;
  return typeof reasoning === 'string' && reasoning ? [{ type: 'thinking', thinking: reasoning, signature: '' }] : [];
}

/**
 * A unified chat answer as the Message object: thinking first, then the text, then one `tool_use`
 * block per tool call. An answer denied by an output guardrail (`content_filter`) is a refusal
 * with no content.
 */
export function messageFromChat(response: ChatResponse, model: string): MessagesResponse {
  const choice = response.choices[0];
  const finishReason = choice?.finish_reason;
  const content: MessagesBlock[] = [];
  if (choice && finishReason !== 'content_filter') {
    const message = choice.message;
    content.push(...thinkingBlocks(message));
    if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
    for (const call of message.tool_calls ?? []) {
      content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
    }
  }
  return {
    id: messageIdOf(response.id),
    type: 'message',
    role: 'assistant',
    model: response.model || model,
    content,
    stop_reason: stopReasonOf(finishReason),
    stop_sequence: null,
    usage: messagesUsage(response.usage),
  };
}
